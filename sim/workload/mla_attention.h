// Multi-latent attention (DeepSeek-V2 §2.1) as Megatron-Core's MLASelfAttention runs it with the Transformer
// Engine layer spec (megatron/core/transformer/multi_latent_attention.py, gpt_layer_specs.py), per
// tensor-parallel rank and micro-batch: the attention block between the input norm and the output
// projection of a transformer layer, in place of the fused QKV projection, RoPE and GQA core attention.
//
//   q path:  linear_q_down_proj h → r_q (TELinear "duplicated": the whole weight on every TP rank, run on
//            the rank's own tokens, s·b/t with SP), the latent's norm fused into linear_q_up_proj
//            r_q → a·(d_qk + d_rope) (column-parallel: with SP the norm's output is all-gathered first);
//            without q_lora_rank one column-parallel linear_q_proj h → a·(d_qk + d_rope);
//   kv path: linear_kv_down_proj h → r_kv + d_rope (duplicated), the d_rope RoPE key all-gathered over
//            TP with SP, the latent's norm fused into linear_kv_up_proj r_kv → a·(d_qk + d_v)
//            (column-parallel);
//   RoPE on the d_rope parts of Q and of the shared key (fused_apply_mla_rope_for_q/_kv, which also
//            assemble Q, K = [k_nope, k_rope] and V), then core attention with q/k head dimension
//            d_qk + d_rope and v head dimension d_v, on a/t heads per rank.
// The output projection a·d_v → h (row-parallel) and its TP reduction are the dense layer's
// (transformer_layer.cc). The four MLA projections have no biases (Megatron builds them with bias=False).
//
// Modelled: TP with or without SP, flash/fused or unfused attention, no/selective/full recompute (the
// latent norms always present, as DeepSeek-V2/V3 define MLA and Megatron's DeepSeek recipes set
// qk_layernorm), BF16 or FP8 (the five projections are TE linears: fp8_layer.h rewrites them; core
// attention stays BF16). parameter_count.cc's layer_shape_of refuses MLA with context parallelism and
// TE userbuffers overlap. With SP the duplicated down projections' and latent norms' weight gradients are
// summed over TP once per iteration (tp_replicated_gradients.h).
#pragma once

#include <cstdint>

#include "sim/workload/layer_shape.h"
#include "sim/workload/op_list_builder.h"

namespace trainsim::workload {

/// What the MLA forward keeps for its backward (all false under full recompute).
struct MlaKeep {
    bool norm_output = true;     // the input norm's output (selective recompute's layernorm drops it)
    bool latents = true;         // the latent norms' inputs
    bool up_projections = true;  // the up projections' inputs and Q, K, V (mla_up_proj drops them)
    bool scores = true;          // the core attention's softmax statistics or scores (core_attn drops them)
};

/// The MLA forward from the input norm's output to the core attention's output (the output projection's
/// input): down projections, latent norms, up projections, RoPE and core attention.
void mla_attention_forward(OpListBuilder& ops, const LayerShape& x, MlaKeep keep);

/// Selective recompute's mla_up_proj (Megatron's CheckpointWithoutOutput around
/// qkv_up_proj_and_rope_apply): the latent norms, up projections (with SP's gathers) and RoPE run again
/// from the kept latents when the core attention's output gradient arrives, rewriting the up
/// projections' inputs and Q, K, V, which are kept until the backward ends.
void mla_up_proj_recompute(OpListBuilder& ops, const LayerShape& x);

/// MLA's core attention alone: FlashAttention's kernel, or QKᵀ, softmax, dropout and attention over V.
/// `keep_any` false keeps nothing (selective recompute's re-run keeps only what `keep_scores` asks).
void mla_core_attention_forward(OpListBuilder& ops, const LayerShape& x, bool keep_scores, bool keep_any);

/// The MLA backward from the core attention's output gradient to the input norm's output gradient (the
/// sum of the two down projections' input gradients).
void mla_attention_backward(OpListBuilder& ops, const LayerShape& x);

/// Weights of the MLA block on one TP rank, output projection included (with its bias under
/// add_bias_linear): the duplicated down projections whole, the latent norms, the column-parallel up
/// projections' a/t heads and the row-parallel output projection's a/t·d_v rows.
[[nodiscard]] std::int64_t mla_attention_parameters_per_rank(const LayerShape& x);

}  // namespace trainsim::workload
