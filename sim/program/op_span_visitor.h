// op_spans() without its vector: calls a function for each op of a task with its simulated interval,
// for loops over every task of a large program (no allocation per task).
#pragma once

#include <cmath>

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
    const auto first = static_cast<std::size_t>(shape.first_op);
    const auto last = first + static_cast<std::size_t>(shape.op_count);
    if (program.program.has_compute_shares()) {
        // Under hardware.compute_contention=engine a task runs longer than its ops' prices where
        // collectives ran beside it: each op takes its share of the whole span (where in the span the
        // slowdown fell is not recorded).
        SimTime priced{};
        for (std::size_t k = first; k < last; ++k) {
            priced += p.durations[k];
        }
        const SimTime span = timing.end - timing.start;
        if (priced > SimTime{} && span != priced) {
            const double scale = ratio(span, priced);
            SimTime before{};
            SimTime at = timing.start;
            for (std::size_t k = first; k < last; ++k) {
                before += p.durations[k];
                const SimTime end = k + 1 == last ? timing.end : timing.start + scaled(before, scale);
                visit(OpSpan{&(*p.ops)[k], at, end});
                at = end;
            }
            return;
        }
    }
    SimTime at = timing.start;
    for (std::size_t k = first; k < last; ++k) {
        visit(OpSpan{&(*p.ops)[k], at, at + p.durations[k]});
        at += p.durations[k];
    }
}

}  // namespace trainsim::program
