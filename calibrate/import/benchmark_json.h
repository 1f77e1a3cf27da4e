// Reader for the Google Benchmark JSON that `trainsim-calibrate run` writes: benchmark names in the
// scheme of measure/benchmark_name.h, times in "real_time" (manual timing: CUDA events or a steady clock),
// device facts in the context.
#pragma once

#include <string>

#include "calibrate/measure/measurement.h"

namespace trainsim::calibrate {

/// Reads one run's output. With repetitions, the median aggregate is used (or the median of the
/// repetitions when only they were written). A benchmark that reported an error is skipped with a warning
/// in the set. Throws InputError "PATH: benchmarks[i].KEY RULE" on anything else that is malformed, and
/// when the context has no trainsim_backend (output of another program).
[[nodiscard]] MeasurementSet read_benchmark_json(const std::string& path);

/// The same from text already in memory; `path` labels messages and gives the source id.
[[nodiscard]] MeasurementSet parse_benchmark_json(const std::string& text, const std::string& path);

}  // namespace trainsim::calibrate
