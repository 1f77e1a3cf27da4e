#pragma once

#include <cstdint>

namespace trainsim::workload {

// Bytes per element of what a layer stores and moves, as Korthikanti et al. 2022 §4 count them: 16-bit
// activations and 1-byte dropout masks; FlashAttention keeps its softmax statistics in fp32.
inline constexpr std::int64_t kActivationBytes = 2;  // a bf16/fp16 activation element
inline constexpr std::int64_t kMaskBytes = 1;        // a dropout-mask element
inline constexpr std::int64_t kFp32Bytes = 4;        // an fp32 element (log-sum-exp statistics)

}  // namespace trainsim::workload
