// The memory-bound kernels of a Megatron layer on one CPU core, in fp32, with the arithmetic of the GPU
// kernels (so that their cost relative to a plain copy is comparable): LayerNorm, bias-GeLU (tanh),
// bias-dropout-add, causal scaled masked softmax, dropout, the Adam step, a copy and an empty call.
#pragma once

#include <memory>

#include "calibrate/bench/backend.h"

namespace trainsim::calibrate {

/// Bytes of one element of the CPU kernels.
inline constexpr std::int64_t kCpuElementBytes = 4;

/// A timed kernel with its buffers, filled with deterministic values.
[[nodiscard]] std::unique_ptr<TimedOp> make_cpu_kernel(const KernelCase& kernel);

}  // namespace trainsim::calibrate
