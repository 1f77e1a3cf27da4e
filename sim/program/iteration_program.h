// Builds the engine program of one training iteration: every simulated GPU's pipeline schedule,
// expanded into the priced ops of its layers, with pipeline sends/receives and collectives matched
// across GPUs as rendezvous.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/cost/cost_model.h"
#include "sim/engine/program.h"
#include "sim/engine/simulator.h"
#include "sim/network/topology.h"
#include "sim/program/task_info.h"
#include "sim/recompute/recompute_plan.h"
#include "sim/workload/op.h"

namespace trainsim::program {

/// Which identical GPUs are folded into one representative (DESIGN.md §3 "Scale"). A folded group's
/// collectives are still charged their full cost; they just have one simulated member.
struct Fold {
    bool tensor = true;  // simulate one GPU per tensor-parallel group
    bool data = true;    // simulate one data-parallel replica
};

/// An op list with each op's duration on one GPU (the overlap slowdown included).
struct PricedOps {
    const workload::OpList* ops = nullptr;
    std::vector<SimTime> durations;
    /// What collectives running beside each op added to its duration (empty: nothing was slowed).
    std::vector<SimTime> contention;
};

struct IterationProgram {
    engine::Program program;
    TaskInfoTable info;  // indexed by engine TaskId
    std::vector<SimulatedGpu> gpus;
    std::vector<std::unique_ptr<workload::OpList>> op_lists;  // the lists `priced` points into
    std::vector<PricedOps> priced;
    std::vector<std::string> warnings;  // what the builder had to decide for the user (e.g. folding off)
    /// The schedule runs some weight-gradient passes (W) apart from their backward (zero-bubble).
    bool weight_passes = false;
    /// The cluster the flows ran on (hardware.network_model=flow; null for the analytical model): the
    /// engine's resource r is its link r.
    std::shared_ptr<const network::Topology> topology;

    /// "F3.c0 L12 qkv..fc1" or "B3.c1 recv gradient from stage 4", for errors and traces.
    [[nodiscard]] std::string describe(engine::TaskId task) const;
};

/// Runs the program on the engine, with deadlock reports in workload terms.
[[nodiscard]] engine::RunResult simulate(const IterationProgram& program, engine::RunOptions options = {});

/// One op of a task with its simulated interval (`op` is null for a pipeline transfer).
struct OpSpan {
    const workload::Op* op = nullptr;
    SimTime start{};
    SimTime end{};
};

/// The ops of `task` laid out back to back from its start.
[[nodiscard]] std::vector<OpSpan> op_spans(const IterationProgram& program, engine::TaskId task,
                                           const engine::TaskTiming& timing);

/// Throws InputError for what the scenario asks but the simulator cannot model. Every layer's
/// recomputation (what and when) is a recompute plan's: `plan` (the recompute search's), or without
/// one the scenario's Megatron policy compiled (recompute/megatron_recompute_plan.h); the `overlapped`
/// policy requires `plan` (recompute_search chooses it).
[[nodiscard]] IterationProgram build_iteration(const config::Scenario& scenario, const cost::CostModel& cost,
                                               const Fold& fold = {},
                                               const recompute::RecomputePlan* plan = nullptr);

}  // namespace trainsim::program
