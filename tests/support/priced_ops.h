#pragma once
// Every priced op of a built iteration, for tests that check an op's price or bytes where it ran.

#include <cstddef>
#include <cstdint>

#include "sim/program/iteration_program.h"

namespace trainsim::testing {

/// Calls `f(pipeline_rank, op, duration)` for each op of each priced task of `prog`, in task order.
template <typename F> void for_each_priced_op(const program::IterationProgram& prog, F&& f) {
    for (const program::TaskInfo& info : prog.info) {
        if (info.priced < 0) {
            continue;
        }
        const std::int64_t stage = prog.gpus[info.gpu.index()].coordinates.pp;
        const program::PricedOps& priced = prog.priced[static_cast<std::size_t>(info.priced)];
        for (std::size_t i = info.first_op; i < static_cast<std::size_t>(info.first_op) + info.op_count;
             ++i) {
            f(stage, (*priced.ops)[i], priced.durations[i]);
        }
    }
}

}  // namespace trainsim::testing
