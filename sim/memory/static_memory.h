// Memory that lives for the whole iteration: weights, gradients and optimizer state.
#pragma once

#include "sim/config/scenario.h"
#include "sim/core/units.h"

namespace trainsim::memory {

/// Bytes per parameter with mixed precision and Adam (Megatron-LM's distributed-optimizer guide):
/// 16-bit weight (2) + fp32 gradient (4) + fp32 master weight, first and second moment (12).
/// With the distributed optimizer the 12 bytes of optimizer state are sharded over the d replicas.
[[nodiscard]] double bytes_per_parameter(const config::Scenario& scenario);

/// Static bytes on one GPU of pipeline rank `pipeline_rank`.
[[nodiscard]] Bytes static_bytes(const config::Scenario& scenario, std::int64_t pipeline_rank);

}  // namespace trainsim::memory
