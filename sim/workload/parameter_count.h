// Parameters held by one GPU (one tensor-parallel rank of one pipeline stage), Megatron's layout.
#pragma once

#include <cstdint>

#include "sim/config/scenario.h"
#include "sim/workload/layer_shape.h"

namespace trainsim::workload {

/// One transformer layer's parameters on one TP rank: QKV and fc1 split by columns (with their
/// biases), projection and fc2 split by rows (their biases and both norms replicated). QKV is
/// (a + 2g)·d wide, fc1 2·ffn with SwiGLU; without add_bias_linear there are no biases. With
/// multi-latent attention the attention block is mla_attention_parameters_per_rank's (mla_attention.h).
[[nodiscard]] std::int64_t layer_parameters_per_rank(const LayerShape& shape);

/// One LayerNorm (weight and bias, 2h) or RMSNorm (weight, h).
[[nodiscard]] std::int64_t norm_parameters(const LayerShape& shape);

/// Learned absolute position embedding (s·h) on the first stage; none with RoPE.
[[nodiscard]] std::int64_t position_embedding_parameters(const config::Scenario& scenario);

/// Whether pipeline rank `pipeline_rank` holds output-layer weights of its own (untied, or the last
/// stage's copy of a tied word embedding when p > 1).
[[nodiscard]] bool output_layer_has_own_weights(const config::Scenario& scenario, std::int64_t pipeline_rank);

/// Whether the rank holds one of the two copies of a tied word embedding whose gradients are
/// all-reduced between the first and last stage (tied weights and p > 1), or of the word embedding that
/// the MTP depths use on the last stage (mtp_block.h).
[[nodiscard]] bool holds_tied_embedding_copy(const config::Scenario& scenario, std::int64_t pipeline_rank);

struct StageParameters {
    std::int64_t transformer = 0;  // the stage's layers
    std::int64_t embedding = 0;    // word (v/t·h) and position (s·h) embeddings on the first stage;
                                   // the output layer's weights on the last (untied, or a tied copy
                                   // when p > 1)
    std::int64_t final_layernorm = 0;
    /// The MTP depths' own weights on the last stage (mtp_block.h); their embedding copy is in `embedding`.
    std::int64_t mtp = 0;
    /// The routed experts' share of `transformer` and `mtp`: their gradients are reduced, and the distributed
    /// optimizer shards their state, over expert data parallelism instead of d·c (Megatron-Core).
    std::int64_t expert = 0;
    [[nodiscard]] std::int64_t total() const { return transformer + embedding + final_layernorm + mtp; }
};

/// Parameters on one TP rank of pipeline rank `pipeline_rank` (all of its virtual chunks).
[[nodiscard]] StageParameters stage_parameters(const config::Scenario& scenario, std::int64_t pipeline_rank);

/// The word-embedding parameters on one TP rank (v/t · h), shared between first and last stage.
[[nodiscard]] std::int64_t word_embedding_parameters_per_rank(const config::Scenario& scenario);

/// The LayerShape of the scenario's transformer layers (an MoE layer's when the model has any; see the
/// overload below for one layer of a model mixing dense and MoE layers).
[[nodiscard]] LayerShape layer_shape_of(const config::Scenario& scenario);
/// The shape of model layer `layer`: a dense MLP where moe_layer_freq leaves the layer dense.
[[nodiscard]] LayerShape layer_shape_of(const config::Scenario& scenario, std::int64_t layer);

}  // namespace trainsim::workload
