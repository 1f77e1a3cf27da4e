// The priced compute ops of each pipeline stage's representative GPU (TP and DP rank 0), for the
// breakdown's "of the compute" lines: what each kind of kernel took per iteration, mean over stages.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sim/core/units.h"
#include "sim/program/iteration_program.h"

namespace trainsim::report {

/// Calls `visit(op, duration)` for each op of the compute and recompute tasks of every stage's
/// representative GPU, with the op's priced duration.
template <typename Visit>
void for_each_stage_compute_op(const program::IterationProgram& prog, Visit&& visit) {
    for (const program::TaskInfo& info : prog.info) {
        const parallel::Coordinates& at = prog.gpus[info.gpu.index()].coordinates;
        const bool compute = info.category == program::TaskCategory::Compute ||
                             info.category == program::TaskCategory::Recompute;
        if (at.tp != 0 || at.dp != 0 || !compute || info.priced < 0) {
            continue;
        }
        const program::PricedOps& priced = prog.priced[static_cast<std::size_t>(info.priced)];
        for (std::size_t i = info.first_op; i < static_cast<std::size_t>(info.first_op) + info.op_count;
             ++i) {
            visit((*priced.ops)[i], priced.durations[i]);
        }
    }
}

/// The number of stage representatives the means divide by (at least 1).
[[nodiscard]] inline double stage_count(const program::IterationProgram& prog) {
    std::int64_t stages = 0;
    for (const program::SimulatedGpu& g : prog.gpus) {
        stages += g.coordinates.tp == 0 && g.coordinates.dp == 0 ? 1 : 0;
    }
    return stages > 0 ? static_cast<double>(stages) : 1.0;
}

/// Busy time of the compute ops `select(op)` picks in one iteration, mean over stage representatives:
/// an "of the compute" line of the breakdown.
template <typename Select>
[[nodiscard]] Seconds stage_mean_op_time(const program::IterationProgram& prog, Select&& select) {
    SimTime total{};
    for_each_stage_compute_op(prog, [&](const workload::Op& op, SimTime d) {
        if (select(op)) {
            total += d;
        }
    });
    return Seconds{to_seconds(total).value / stage_count(prog)};
}

}  // namespace trainsim::report
