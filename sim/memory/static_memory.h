// Memory that lives for the whole iteration: weights, gradients and optimizer state.
#pragma once

#include "sim/config/scenario.h"
#include "sim/core/units.h"

namespace trainsim::memory {

/// Bytes per parameter with mixed precision and Adam (Megatron-LM's distributed-optimizer guide):
/// 16-bit weight (2) + fp32 gradient (4) + fp32 master weight, first and second moment (12), each in
/// the format the scenario gives (workload/optimizer_state.h): W + G + S.
/// With the distributed optimizer the S bytes of optimizer state are sharded over the d replicas;
/// optim_grads shards the gradient too (W + (G + S)/d), optim_grads_params everything ((W + G + S)/d).
[[nodiscard]] double bytes_per_parameter(const config::Scenario& scenario);

/// With optim_grads_params (FSDP), the full 16-bit weights of the layers gathered at any one time: the
/// layer computing and the one prefetched, 2 × 2 × its parameters; 0 otherwise.
[[nodiscard]] Bytes gathered_layer_bytes(const config::Scenario& scenario, std::int64_t pipeline_rank);

/// Static bytes on one GPU of pipeline rank `pipeline_rank`: parameters × bytes_per_parameter, plus the
/// gathered layers under FSDP, plus 4 − G bytes for each of NeMo's fp32 embedding gradients
/// (workload/fp32_embedding_gradients.h).
[[nodiscard]] Bytes static_bytes(const config::Scenario& scenario, std::int64_t pipeline_rank);

}  // namespace trainsim::memory
