// Fuzzes the PyTorch profiler trace importer (calibrate::import_kineto_trace, which streams the file
// through kineto::read_trace) with arbitrary bytes written to a file: plain JSON, or gzip when the input
// starts with gzip's magic. An accepted trace must give positive, finite times and sizes; a rejected
// one, one InputError line.
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "calibrate/import/kineto_import.h"
#include "fuzz/fuzz_support.h"
#include "sim/core/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace trainsim;
    static const std::string path = "/tmp/trainsim_kineto_fuzz_" + std::to_string(::getpid()) + ".json";
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    try {
        const calibrate::MeasurementSet set = calibrate::import_kineto_trace(path);
        fuzz::require(!set.empty(), "an accepted trace has measurements");
        for (const calibrate::GemmMeasurement& g : set.gemms) {
            fuzz::require(g.shape.m > 0 && g.shape.n > 0 && g.shape.k > 0 && g.shape.batch > 0,
                          "GEMM dims > 0");
            fuzz::require(std::isfinite(g.seconds) && g.seconds > 0.0, "GEMM time > 0");
        }
        for (const calibrate::KernelMeasurement& k : set.kernels) {
            fuzz::require(k.bytes_moved > 0 && std::isfinite(k.seconds) && k.seconds > 0.0,
                          "kernel bytes, time > 0");
        }
        for (const calibrate::CollectiveMeasurement& c : set.collectives) {
            fuzz::require(c.bytes > 0 && c.ranks >= 2 && c.nodes >= 1, "collective bytes > 0, ranks >= 2");
            fuzz::require(c.seconds && std::isfinite(*c.seconds) && *c.seconds > 0.0, "collective time > 0");
        }
    } catch (const InputError& e) {
        fuzz::require_one_line(e.what());
    }
    return 0;
}
