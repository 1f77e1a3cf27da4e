// The parameters every tensor-parallel rank holds whole but trains on different data, whose gradients
// Megatron-Core sums over the TP group once per iteration: finalize_model_grads'
// _allreduce_non_tensor_model_parallel_grads (megatron/core/distributed/finalize_model_grads.py), run
// after the data-parallel gradient sync (finish_grad_sync) and before the embedding-gradient all-reduce,
// one all-reduce of all the rank's chunks' gradients flattened into one buffer. It reduces
//  - with sequence parallelism, the parameters marked `sequence_parallel` (each rank's copy sees only its
//    1/t of the tokens): the norms' weights and biases (TE's LayerNormLinear and TENorm, the final norm
//    on the last stage), the row-parallel linears' replicated biases (TE's Linear in "row" mode), the
//    "duplicated" linears (MLA's q and kv down projections, TELinear) and the fused latent norms of MLA's
//    up projections, and the MoE router's weight (router.py);
//  - with qk_layernorm, the query and key norms of every layer (each rank normalises its own heads).
#pragma once

#include <cstdint>

#include "sim/config/scenario.h"
#include "sim/workload/layer_shape.h"

namespace trainsim::workload {

/// One layer's TP-replicated parameters that need the sum, per rank (0 when the layer has none).
/// `qk_layernorm`: the layer has query/key norms (GQA only; MLA's latent norms are counted with SP).
[[nodiscard]] std::int64_t tp_replicated_layer_parameters(const LayerShape& shape, bool qk_layernorm);

struct TpReplicatedParameters {
    std::int64_t layers = 0;      // the rank's transformer layers, all chunks, and its MTP depths
    std::int64_t final_norm = 0;  // the final norm, on the rank holding the last stage, with SP
    [[nodiscard]] std::int64_t total() const { return layers + final_norm; }
};

/// What pipeline rank `pipeline_rank` all-reduces over its TP group at the end of the iteration; zero
/// at t = 1.
[[nodiscard]] TpReplicatedParameters tp_replicated_parameters(const config::Scenario& scenario,
                                                              std::int64_t pipeline_rank);

}  // namespace trainsim::workload
