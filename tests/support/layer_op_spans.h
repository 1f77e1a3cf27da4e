#pragma once
// The simulated interval of each op of one layer pass, by op name: what the exact-time layer tests read.

#include <map>
#include <string>

#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"

namespace trainsim::testing {

/// GPU 0's spans of model layer 0, micro-batch 0, in `phase`, by op name.
inline std::map<std::string, program::OpSpan>
layer_zero_spans(const program::IterationProgram& prog, const engine::RunResult& run, program::Phase phase) {
    std::map<std::string, program::OpSpan> spans;
    for (std::size_t t = 0; t < prog.info.size(); ++t) {
        const program::TaskInfo task = prog.info[t];
        if (task.gpu != engine::GpuId{0} || task.microbatch != 0 || task.layer != 0 || task.phase != phase ||
            task.priced < 0) {
            continue;
        }
        for (const program::OpSpan& s :
             program::op_spans(prog, engine::TaskId::from_index(t), run.timings[t])) {
            if (s.op != nullptr) {
                spans[s.op->name] = s;
            }
        }
    }
    return spans;
}

/// The same, of a fresh simulation of `scenario` (forward by default).
inline std::map<std::string, program::OpSpan>
simulated_layer_zero_spans(const config::Scenario& scenario, const cost::CostModel& cost,
                           program::Phase phase = program::Phase::Forward) {
    const program::IterationProgram prog = program::build_iteration(scenario, cost);
    const engine::RunResult run = program::simulate(prog);
    return layer_zero_spans(prog, run, phase);
}

}  // namespace trainsim::testing
