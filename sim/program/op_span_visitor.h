// op_spans() without its vector: calls a function for each op of a task with its simulated interval,
// for loops over every task of a large program (no allocation per task).
#pragma once

#include "sim/program/iteration_program.h"

namespace trainsim::program {

/// Calls `visit(OpSpan)` for each op of `task` (one span with a null op for a pipeline transfer), in
/// order, laid out back to back from the task's start; a single op spans the whole task (a collective's
/// time comes from its rendezvous, which can differ from the op's own price).
template <typename Visit>
void for_each_op_span(const IterationProgram& program, const TaskShape& shape,
                      const engine::TaskTiming& timing, Visit&& visit) {
    if (shape.priced < 0) {
        visit(OpSpan{nullptr, timing.start, timing.end});
        return;
    }
    const PricedOps& p = program.priced[static_cast<std::size_t>(shape.priced)];
    if (shape.op_count == 1) {
        visit(OpSpan{&(*p.ops)[shape.first_op], timing.start, timing.end});
        return;
    }
    SimTime at = timing.start;
    for (std::size_t k = shape.first_op; k < static_cast<std::size_t>(shape.first_op + shape.op_count); ++k) {
        visit(OpSpan{&(*p.ops)[k], at, at + p.durations[k]});
        at += p.durations[k];
    }
}

}  // namespace trainsim::program
