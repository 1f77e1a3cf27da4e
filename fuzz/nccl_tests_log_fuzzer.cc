// Fuzzes the nccl-tests log importer (calibrate::parse_nccl_tests_log) with arbitrary text. The first
// byte picks which of the options a user may give beside the log (collective, ranks, nodes), so that
// the checks between the log and the options run too. An accepted log must give positive, finite
// times and sizes; a rejected one, one InputError line.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "calibrate/import/nccl_tests_log.h"
#include "fuzz/fuzz_support.h"
#include "sim/core/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace trainsim;
    if (size == 0) {
        return 0;
    }
    const std::uint8_t pick = data[0];
    calibrate::NcclLogOptions options;
    if (pick & 1) {
        options.op = static_cast<cost::CollectiveKind>((pick >> 1) & 3);
    }
    if (pick & 8) {
        options.ranks = 1 + ((pick >> 4) & 7);  // 1..8, so that "at least 2 ranks" is reachable
    }
    if (pick & 128) {
        options.nodes = 1 + ((pick >> 5) & 1);
    }
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        const calibrate::MeasurementSet set = calibrate::parse_nccl_tests_log(text, "fuzz.log", options);
        fuzz::require(!set.collectives.empty(), "an accepted log has measurements");
        for (const calibrate::CollectiveMeasurement& c : set.collectives) {
            fuzz::require(c.bytes > 0, "measured size > 0");
            fuzz::require(c.ranks >= 2 && c.nodes >= 1 && c.nodes <= c.ranks,
                          "1 <= nodes <= ranks, ranks >= 2");
            fuzz::require(c.seconds && std::isfinite(*c.seconds) && *c.seconds > 0.0, "measured time > 0");
        }
    } catch (const InputError& e) {
        fuzz::require_one_line(e.what());
    }
    return 0;
}
