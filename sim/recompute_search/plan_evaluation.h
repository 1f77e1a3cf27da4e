// Simulates a scenario under a recompute plan: the unit of work of every recompute scheduler.
#pragma once

#include <map>

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

/// The plans of one scenario simulated so far. A plan's time and peak do not depend on the memory budget,
/// only whether it fits does, so searches of one scenario under several budgets (or a heuristic search after
/// an exhaustive one) simulate each plan once.
class PlanEvaluations {
public:
    PlanEvaluations(config::Scenario scenario, const cost::CostModel& cost, program::Fold fold = {});

    /// evaluate_plan(scenario, cost, plan, budget, fold): simulated the first time `plan` is asked for.
    [[nodiscard]] PlanEvaluation evaluate(const recompute::RecomputePlan& plan, Bytes budget);

    [[nodiscard]] const config::Scenario& scenario() const { return scenario_; }
    [[nodiscard]] const cost::CostModel& cost() const { return cost_; }
    [[nodiscard]] const program::Fold& fold() const { return fold_; }
    [[nodiscard]] std::size_t simulated() const { return done_.size(); }

private:
    config::Scenario scenario_;
    const cost::CostModel& cost_;
    program::Fold fold_;
    std::map<recompute::RecomputePlan, PlanEvaluation> done_;  // keyed by everything a plan says
};

/// Whether `a` is the better outcome: fitting beats not fitting; among fitting plans the faster (then
/// the smaller); among plans that do not fit, the smaller peak.
[[nodiscard]] bool better(const PlanEvaluation& a, const PlanEvaluation& b);

/// The same plan with every overlapped layer recomputed on demand instead: same ops, same memory saved.
[[nodiscard]] recompute::RecomputePlan on_demand_version(const recompute::RecomputePlan& plan);

}  // namespace trainsim::recompute_search
