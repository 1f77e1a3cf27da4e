// Time of Transformer Engine's memory-bound kernels around context parallelism's p2p ring
// (sim/workload/cp_ring_kernels.h: the attn.cp_* ops), read off the priced ops of each stage's
// representative GPU: the breakdown's line for them.
#pragma once

#include "sim/core/units.h"
#include "sim/program/iteration_program.h"

namespace trainsim::report {

/// Busy time of one GPU in one iteration, mean over pipeline stages; part of the breakdown's compute
/// and recompute, not extra time. Zero without context parallelism over the p2p ring.
[[nodiscard]] Seconds cp_ring_kernel_time(const program::IterationProgram& program);

}  // namespace trainsim::report
