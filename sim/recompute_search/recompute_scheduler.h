// Recompute schedulers: choose, under a per-GPU memory budget, which layers keep their activations,
// which recompute on demand and which recompute in the windows where the GPU waits (overlapped), and
// how early overlapped recomputation may start. Every candidate is judged by simulating it.
//
// Heuristic (in the spirit of Lynx-HEU: identical layers get one policy): simulate each uniform plan
// (keep, selective or full, on demand or overlapped with lookahead 0, 1 or 2), then give each pipeline stage
// the policy that was cheapest for that stage among those that fit its memory (earlier stages hold more
// micro-batches, so they may need more recomputation) and simulate that mix. About ten simulations.
//
// Optimal (small instances only): every assignment of a policy to every layer of every stage, and every
// lookahead, exhaustively; the reference the heuristic is tested against.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "sim/recompute_search/plan_evaluation.h"

namespace trainsim::recompute_search {

struct SearchOptions {
    Bytes memory_budget{0};               // per GPU; a plan fits when its peak is at most this
    std::int64_t max_evaluations = 4096;  // the optimal scheduler refuses larger searches
    program::Fold fold;
};

/// One simulated candidate, for the record of what the scheduler weighed.
struct Candidate {
    std::string plan;
    Seconds iteration_time;
    Bytes peak_memory{0};
    bool fits = false;
};

struct SearchResult {
    std::string scheduler;  // "heuristic" or "optimal"
    PlanEvaluation best;    // the fastest plan that fits; the smallest peak when none fits
    std::int64_t evaluations = 0;
    std::vector<Candidate> candidates;  // heuristic only: every plan it simulated, in order
    Seconds search_time;                // wall-clock time of the search
};

[[nodiscard]] SearchResult heuristic_schedule(const config::Scenario& scenario, const cost::CostModel& cost,
                                              const SearchOptions& options);

/// Throws InputError when the instance needs more than options.max_evaluations simulations.
[[nodiscard]] SearchResult optimal_schedule(const config::Scenario& scenario, const cost::CostModel& cost,
                                            const SearchOptions& options);

/// The same searches of plans.scenario() with the plans' cost model and fold (options.fold is not read),
/// simulating only the plans `plans` has not simulated yet: one scenario searched under several budgets.
[[nodiscard]] SearchResult heuristic_schedule(PlanEvaluations& plans, const SearchOptions& options);
[[nodiscard]] SearchResult optimal_schedule(PlanEvaluations& plans, const SearchOptions& options);

/// The scenario as the recompute searches run it: recompute_granularity "overlapped", with the knobs that
/// belong to "full" (method, layer count, Appendix C micro-batches) cleared; the plan decides instead.
[[nodiscard]] config::Scenario overlapped_scenario(const config::Scenario& scenario);

/// Wall-clock time since `start`, as a search reports its cost.
[[nodiscard]] inline Seconds elapsed_since(std::chrono::steady_clock::time_point start) {
    return Seconds{std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

/// The scheduler the scenario names (training.recompute_scheduler), with its memory budget
/// (training.recompute_memory_budget, default: the profile's usable memory).
[[nodiscard]] SearchResult schedule_recompute(const config::Scenario& scenario, const cost::CostModel& cost,
                                              const program::Fold& fold = {});

}  // namespace trainsim::recompute_search
