#include "sim/experiment/simulate_scenario.h"

#include <cstdint>
#include <cstdio>
#include <string>

namespace trainsim::experiment {

void check_event_budget(const config::Scenario& sc, const SimulationOptions& options) {
    const auto& par = sc.parallelism;
    const double gpus_per_stage =
        static_cast<double>(options.fold.tensor ? 1 : par.tensor_model_parallel_size) *
        static_cast<double>(options.fold.data ? 1 : par.data_parallel_size);
    const double at_least = 2.0 * static_cast<double>(sc.num_microbatches()) *
                            static_cast<double>(sc.model.num_layers) * gpus_per_stage;
    const std::uint64_t max_events = options.engine.max_events;
    if (at_least > static_cast<double>(max_events)) {
        char events[32];
        std::snprintf(events, sizeof events, "%.3g", at_least);
        throw engine::SimulationError(
            std::string("the iteration needs at least ") + events + " events (forward and backward of " +
            std::to_string(sc.model.num_layers) + " layers for " + std::to_string(sc.num_microbatches()) +
            " micro-batches on " + std::to_string(static_cast<std::int64_t>(gpus_per_stage)) +
            " simulated GPUs per stage), more than the event budget --max-events=" +
            std::to_string(max_events) + "; reduce training.global_batch_size or raise --max-events");
    }
}

Simulation simulate_scenario(const config::Scenario& scenario, const cost::CostModel& cost,
                             const SimulationOptions& options) {
    check_event_budget(scenario, options);
    // Overlapped recomputation lets its scheduler choose the plan first, then simulates that plan.
    std::optional<recompute_search::SearchResult> search;
    if (scenario.training.recompute_granularity == config::RecomputeGranularity::Overlapped) {
        search = recompute_search::schedule_recompute(scenario, cost, options.fold);
    }
    program::IterationProgram prog =
        program::build_iteration(scenario, cost, options.fold, search ? &search->best.plan : nullptr);
    engine::RunOptions engine = options.engine;
    if (options.record_rates_of) {
        engine.record_rates_of = options.record_rates_of(prog);
    }
    engine::RunResult run = program::simulate(prog, std::move(engine));
    report::IterationReport rep = report::make_iteration_report(scenario, cost, prog, run);
    if (search) {
        rep.recompute_plan = search->best.plan.describe();
        rep.recompute_scheduler = search->scheduler;
        rep.recompute_plans_simulated = search->evaluations;
        rep.recompute_search_time = search->search_time;
    }
    if (scenario.variability.kernel_jitter) {
        // The jitter's cost is a difference of two runs: its mean over the GPUs' kernels is about zero,
        // what it costs is the waits for the slower draws.
        config::Scenario steady = scenario;
        steady.variability.kernel_jitter = false;
        const program::IterationProgram without =
            program::build_iteration(steady, cost, options.fold, search ? &search->best.plan : nullptr);
        rep.kernel_jitter_cost =
            rep.iteration_time - to_seconds(program::simulate(without, options.engine).makespan);
    }
    return Simulation{std::move(prog), std::move(run), std::move(rep), std::move(search)};
}

}  // namespace trainsim::experiment
