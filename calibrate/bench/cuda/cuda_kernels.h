// The memory-bound kernels as timed operations on the current device: buffers allocated and filled once,
// `calls` launches back to back between two events.
#pragma once

#include <memory>

#include "calibrate/bench/backend.h"

namespace trainsim::calibrate::cuda {

/// Bytes of one activation element of the GPU kernels (bf16).
inline constexpr std::int64_t kElementBytes = 2;

[[nodiscard]] std::unique_ptr<TimedOp> make_cuda_kernel(const KernelCase& kernel, int sms);

}  // namespace trainsim::calibrate::cuda
