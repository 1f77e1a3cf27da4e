// The one way to simulate a scenario (DESIGN.md §2, "entry point"): every command, experiment, benchmark
// and test that needs an iteration simulated goes through simulate_scenario, so a rule such as
// "overlapped recomputation runs its scheduler first" is written once.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/cost/cost_model.h"
#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"
#include "sim/recompute_search/recompute_scheduler.h"
#include "sim/report/iteration_report.h"

namespace trainsim::experiment {

struct SimulationOptions {
    program::Fold fold;         // which identical GPUs run once (tp,dp by default)
    engine::RunOptions engine;  // the event budget
    /// For a traced run: which engine resources to record the load of (RunOptions::record_rates_of),
    /// chosen from the built program (report::traced_links). Unset: as `engine` says.
    std::function<std::vector<char>(const program::IterationProgram&)> record_rates_of;
};

struct Simulation {
    program::IterationProgram program;
    engine::RunResult run;
    report::IterationReport report;
    /// Set when the scenario asks for overlapped recomputation: the scheduler's search, whose best plan
    /// is the one simulated.
    std::optional<recompute_search::SearchResult> recompute_search;
};

/// Throws engine::SimulationError before building anything when the iteration needs more events than
/// options.engine.max_events: each layer's forward and backward for each micro-batch on each simulated
/// GPU is at least one event, and building a program that large would only exhaust memory.
void check_event_budget(const config::Scenario& scenario, const SimulationOptions& options);

/// Builds, simulates and reports one iteration of `scenario`. Throws InputError for what the scenario
/// asks but cannot be modelled and engine::SimulationError for a run that cannot finish.
[[nodiscard]] Simulation simulate_scenario(const config::Scenario& scenario, const cost::CostModel& cost,
                                           const SimulationOptions& options = {});

}  // namespace trainsim::experiment
