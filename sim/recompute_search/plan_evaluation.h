// Simulates a scenario under a recompute plan: the unit of work of every recompute scheduler.
#pragma once

#include "sim/config/scenario.h"
#include "sim/cost/cost_model.h"
#include "sim/program/iteration_program.h"
#include "sim/recompute/recompute_plan.h"
#include "sim/report/iteration_report.h"

namespace trainsim::recompute_search {

struct PlanEvaluation {
    recompute::RecomputePlan plan;
    Seconds iteration_time;
    Bytes peak_memory{0};
    bool fits = false;  // peak memory within the budget
    report::IterationReport report;
};

[[nodiscard]] PlanEvaluation evaluate_plan(const config::Scenario& scenario, const cost::CostModel& cost,
                                           const recompute::RecomputePlan& plan, Bytes budget,
                                           const program::Fold& fold = {});

/// Whether `a` is the better outcome: fitting beats not fitting; among fitting plans the faster (then
/// the smaller); among plans that do not fit, the smaller peak.
[[nodiscard]] bool better(const PlanEvaluation& a, const PlanEvaluation& b);

/// The same plan with every overlapped layer recomputed on demand instead: same ops, same memory saved.
[[nodiscard]] recompute::RecomputePlan on_demand_version(const recompute::RecomputePlan& plan);

}  // namespace trainsim::recompute_search
