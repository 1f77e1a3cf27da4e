// The keys `run` adds to Google Benchmark's "context" object, which the importer reads back: the backend
// and the device facts the fit needs beside the timings. Google Benchmark's custom context holds strings,
// so each fact is three keys: the number, its kind (measured or derived) and how it was obtained.
#pragma once

#include <array>
#include <string_view>

namespace trainsim::calibrate::run_context {

inline constexpr std::string_view kBackend = "trainsim_backend";
inline constexpr std::string_view kDevice = "trainsim_device";
/// A comma-separated list of the facts to be taken as the best measured rate (a CPU has no datasheet).
inline constexpr std::string_view kBestMeasured = "trainsim_best_measured";

/// Fact names; the context keys are "trainsim_" + name, + "_kind", + "_how".
inline constexpr std::array<std::string_view, 6> kFacts = {
    "peak_tflops", "hbm_GBps", "memory_bytes", "num_sms", "gpus_per_node", "compute_capability"};

inline constexpr std::string_view kPrefix = "trainsim_";

}  // namespace trainsim::calibrate::run_context
