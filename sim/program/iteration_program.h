// Builds the engine program of one training iteration: every simulated GPU's pipeline schedule,
// expanded into the priced ops of its layers, with pipeline sends/receives and collectives matched
// across GPUs as rendezvous.
#pragma once

#include <vector>

#include "sim/config/scenario.h"
#include "sim/cost/cost_model.h"
#include "sim/engine/program.h"
#include "sim/program/task_info.h"

namespace trainsim::program {

/// Which identical GPUs are folded into one representative (DESIGN.md §3 "Scale"). A folded group's
/// collectives are still charged their full cost; they just have one simulated member.
struct Fold {
    bool tensor = true;  // simulate one GPU per tensor-parallel group
    bool data = true;    // simulate one data-parallel replica
};

struct IterationProgram {
    engine::Program program;
    std::vector<TaskInfo> info;  // indexed by engine TaskId
    std::vector<SimulatedGpu> gpus;
    std::int64_t layers_per_chunk = 0;
};

/// Throws InputError for what the scenario asks but the simulator cannot model yet.
[[nodiscard]] IterationProgram build_iteration(const config::Scenario& scenario, const cost::CostModel& cost,
                                               const Fold& fold = {});

}  // namespace trainsim::program
