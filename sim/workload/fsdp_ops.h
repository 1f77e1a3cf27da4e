// FSDP / ZeRO-3 (parallelism.data_parallel_sharding_strategy = optim_grads_params, Megatron-Core's FSDP):
// each transformer layer's weights are all-gathered over the data-parallel group before its forward
// and again before its backward, and its gradients reduce-scattered right after its backward. All three
// run asynchronously on the data-parallel stream; the program issues the next layer's gather before the
// current layer computes (prefetch depth one, so two layers' full weights are resident at a time).
#pragma once

#include <cstdint>

#include "sim/config/scenario.h"
#include "sim/workload/op.h"

namespace trainsim::workload {

/// Whether the scenario shards parameters (ZeRO-3): optim_grads_params.
[[nodiscard]] bool shards_parameters(const config::Scenario& scenario);

/// The all-gather of `parameters` 16-bit weights over the data-parallel group (nccl-tests' S: the
/// gathered size, parameters × 2 bytes).
[[nodiscard]] OpList fsdp_parameter_gather(std::int64_t parameters);

/// The reduce-scatter of `parameters` fp32 gradients over the data-parallel group (S: the full
/// gradient, parameters × kGradientBytes).
[[nodiscard]] OpList fsdp_gradient_reduce_scatter(std::int64_t parameters);

/// Per-iteration data-parallel traffic of one GPU under optim_grads_params, in nccl-tests' S summed over
/// the collectives: every micro-batch gathers each layer's weights twice (2 bytes each) and
/// reduce-scatters its gradients (4 bytes): m · layers · P_layer · (2·2 + 4).
[[nodiscard]] std::int64_t fsdp_layer_traffic_bytes(std::int64_t microbatches, std::int64_t layers,
                                                    std::int64_t layer_parameters);

}  // namespace trainsim::workload
