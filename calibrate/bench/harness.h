// The benchmark harness: registers every case of a plan with Google Benchmark (manual timing by the
// backend's clock), runs them, and writes Google Benchmark's JSON, with the device facts in its context.
#pragma once

#include <cstddef>
#include <string>

#include "calibrate/bench/backend.h"

namespace trainsim::calibrate {

struct HarnessOptions {
    std::string output;  // the JSON file, written whole or not at all
    std::string filter;  // Google Benchmark's --benchmark_filter regex; empty: everything
};

/// Runs `plan` on `backend` and writes the JSON to options.output (by the backend's rank 0). Returns how
/// many benchmarks ran. Throws InputError when the output cannot be written. Google Benchmark keeps its
/// flags and registrations in globals: call once per process.
std::size_t run_benchmarks(Backend& backend, const BenchPlan& plan, const HarnessOptions& options);

}  // namespace trainsim::calibrate
