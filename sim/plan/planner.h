// `trainsim plan`: enumerate the layouts (layout_space.h), drop those whose memory lower bound
// (memory_bound.h) exceeds the GPU's memory, and simulate the others on worker threads, ranking the
// ones that fit by simulated iteration time.
//
// By default layouts are simulated in order of their iteration-time lower bound (time_bound.h), and
// the search stops once the next bound exceeds the `top`-th best simulated time: no layout left could
// enter the top, so the top is exactly what simulating every layout would give. `exhaustive` simulates
// every layout within the memory bound instead (and so counts how many fit).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/core/units.h"
#include "sim/plan/layout_space.h"
#include "sim/report/iteration_report.h"

namespace trainsim::plan {

struct PlanOptions {
    unsigned jobs = 1;
    std::string profile_directory;
    std::size_t top = 5;      // how many layouts must be exact
    bool exhaustive = false;  // simulate every layout within the memory bound
};

struct RankedLayout {
    config::Scenario scenario;
    report::IterationReport report;
};

struct PlanResult {
    std::size_t considered = 0;        // combinations enumerated
    std::size_t valid = 0;             // passing the scenario rules
    std::size_t pruned_by_memory = 0;  // their memory lower bound exceeds the GPU's memory
    std::size_t skipped_by_time = 0;   // their time lower bound exceeds the top-th best simulated time
    std::size_t simulated = 0;
    std::size_t fit = 0;     // simulated and fitting in memory
    std::size_t failed = 0;  // could not be simulated (their errors in `errors`)
    std::vector<std::string> errors;
    Bytes capacity{0};                 // usable bytes per GPU
    double seconds = 0.0;              // wall time of the whole search
    std::vector<RankedLayout> ranked;  // every simulated layout that fits, fastest first
};

/// Runs the search. Throws InputError when the request itself is bad (e.g. an unknown profile).
[[nodiscard]] PlanResult run_plan(const PlanRequest& request, const PlanOptions& options);

}  // namespace trainsim::plan
