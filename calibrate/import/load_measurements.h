// One entry point for every input format: a measurement file, a benchmark run's JSON, an nccl-tests log,
// a GEMM benchmark table (hipblaslt-bench, mamf-finder).
#pragma once

#include <string>
#include <vector>

#include "calibrate/import/kineto_import.h"
#include "calibrate/import/nccl_tests_log.h"
#include "calibrate/measure/measurement.h"

namespace trainsim::calibrate {

enum class InputFormat { MeasurementFile, BenchmarkJson, NcclTestsLog, BlasBenchTable, MamfFinderLog };

struct InputSpec {
    std::string path;
    NcclLogOptions nccl;         // only for an nccl-tests log
    KinetoImportOptions kineto;  // only for a PyTorch profiler trace
};

/// A JSON document with "schema": "trainsim-measurements/1" is a measurement file, one with "benchmarks"
/// a benchmark run; text with a BLAS-bench header a GEMM table, text with mamf-finder result lines a
/// mamf-finder log; anything else is read as an nccl-tests log. Throws InputError for JSON of neither kind.
[[nodiscard]] InputFormat detect_input_format(const std::string& text, const std::string& path);

/// Reads every input and merges them (MeasurementSet::append's rules). A PyTorch profiler trace
/// (looks_like_kineto_trace) is streamed through import_kineto_trace, never read whole.
[[nodiscard]] MeasurementSet load_measurements(const std::vector<InputSpec>& inputs);

}  // namespace trainsim::calibrate
