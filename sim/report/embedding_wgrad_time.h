// Time of the embedding's dense weight-gradient passes (sim/workload/stage_ops.cc: F.embedding's
// zero-filled 16-bit gradient and its add into main_grad, the embedding*.wgrad_memset and
// embedding*.main_grad_add ops), read off the priced ops of each stage's representative GPU: the
// breakdown's line for them.
#pragma once

#include "sim/core/units.h"
#include "sim/program/iteration_program.h"

namespace trainsim::report {

/// Busy time of one GPU in one iteration, mean over pipeline stages; part of the breakdown's compute
/// (and recompute), not extra time. Only the stages that run an embedding's backward have any.
[[nodiscard]] Seconds embedding_wgrad_time(const program::IterationProgram& program);

}  // namespace trainsim::report
