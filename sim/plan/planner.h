// `trainsim plan`: enumerate the layouts (layout_space.h), drop those whose memory lower bound
// (memory_bound.h) exceeds the memory budget (the GPU's usable memory less a headroom), and simulate
// the others on worker threads, ranking the ones whose peak stays within the budget by simulated
// iteration time.
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

/// The share of a GPU's usable memory a plan leaves free by default (README "Planning a layout"): the
/// simulated peak counts tensors only, while a real run also loses memory to the caching allocator's
/// fragmentation and to transient workspaces, and practitioners do not plan to the last GiB. 10 % is
/// a judgement (kind: assumed), not a measurement; --memory-headroom 0% plans to the full capacity.
inline constexpr double kDefaultMemoryHeadroom = 0.10;

struct PlanOptions {
    unsigned jobs = 1;
    std::string profile_directory;
    std::size_t top = 5;      // how many layouts must be exact
    bool exhaustive = false;  // simulate every layout within the memory bound
    /// A layout fits when its peak is at most (1 − headroom) × the usable memory; in [0, 1).
    double memory_headroom = kDefaultMemoryHeadroom;
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
    Bytes capacity{0};             // usable bytes per GPU (visible minus the profile's reservation)
    double memory_headroom = 0.0;  // the share of `capacity` left free
    Bytes budget{0};               // (1 − memory_headroom) × capacity: what a fitting layout may peak at
    double seconds = 0.0;          // wall time of the whole search
    std::vector<RankedLayout> ranked;  // every simulated layout that fits, fastest first
};

/// Runs the search. Throws InputError when the request itself is bad (e.g. an unknown profile, or a
/// headroom outside [0, 1)).
[[nodiscard]] PlanResult run_plan(const PlanRequest& request, const PlanOptions& options);

}  // namespace trainsim::plan
