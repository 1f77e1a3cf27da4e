#include "sim/recompute_search/plan_evaluation.h"

#include <utility>

namespace trainsim::recompute_search {

PlanEvaluation evaluate_plan(const config::Scenario& scenario, const cost::CostModel& cost,
                             const recompute::RecomputePlan& plan, Bytes budget, const program::Fold& fold) {
    const program::IterationProgram prog = program::build_iteration(scenario, cost, fold, &plan);
    PlanEvaluation e;
    e.plan = plan;
    e.report = report::make_iteration_report(scenario, cost, prog, program::simulate(prog));
    e.iteration_time = e.report.iteration_time;
    e.peak_memory = e.report.peak_memory_bytes;
    e.fits = e.peak_memory <= budget;
    return e;
}

PlanEvaluations::PlanEvaluations(config::Scenario scenario, const cost::CostModel& cost, program::Fold fold)
    : scenario_(std::move(scenario)), cost_(cost), fold_(fold) {}

PlanEvaluation PlanEvaluations::evaluate(const recompute::RecomputePlan& plan, Bytes budget) {
    auto it = done_.find(plan);
    if (it == done_.end()) {
        it = done_.emplace(plan, evaluate_plan(scenario_, cost_, plan, budget, fold_)).first;
    }
    PlanEvaluation e = it->second;
    e.fits = e.peak_memory <= budget;  // the one budget-dependent field
    return e;
}

bool better(const PlanEvaluation& a, const PlanEvaluation& b) {
    if (a.fits != b.fits) {
        return a.fits;
    }
    if (!a.fits) {
        return a.peak_memory < b.peak_memory;
    }
    if (a.iteration_time != b.iteration_time) {
        return a.iteration_time < b.iteration_time;
    }
    return a.peak_memory < b.peak_memory;
}

recompute::RecomputePlan on_demand_version(const recompute::RecomputePlan& plan) {
    recompute::RecomputePlan out = plan;
    for (auto& stage : out.layers) {
        for (auto& layer : stage) {
            if (layer == recompute::LayerRecompute::SelectiveOverlapped) {
                layer = recompute::LayerRecompute::SelectiveOnDemand;
            } else if (layer == recompute::LayerRecompute::FullOverlapped) {
                layer = recompute::LayerRecompute::FullOnDemand;
            }
        }
    }
    return out;
}

}  // namespace trainsim::recompute_search
