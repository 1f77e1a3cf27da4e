// What selective recomputation re-runs in one layer: Megatron-Core's recompute_modules, each where the
// layer has the module (transformer_layer.py, multi_latent_attention.py, moe/moe_layer.py,
// moe/experts.py). The layer's op lists (transformer_layer.h) drop what a recomputed module no longer
// keeps and re-run its forward ops, marked is_recompute, just before its backward needs them.
#pragma once

#include "sim/config/scenario.h"
#include "sim/workload/layer_shape.h"

namespace trainsim::workload {

struct SelectiveRecompute {
    /// core_attn (checkpointed): the core attention keeps only its inputs.
    bool core_attn = false;
    /// layernorm (output discarded): the norm before MLA's down projections; Transformer Engine fuses
    /// the one before a GQA block's linear_qkv, which Megatron-Core then leaves alone.
    bool input_norm = false;
    /// mla_up_proj (output discarded): MLA's latent norms, up projections and RoPE; Q, K and V go.
    bool mla_up_proj = false;
    /// layernorm (output discarded): the norm before an MoE layer's router (fused into a dense fc1).
    bool pre_mlp_norm = false;
    /// mlp (checkpointed): a dense layer's MLP keeps only its input.
    bool mlp = false;
    /// moe (checkpointed): the whole MoE MLP, its dispatch and combine included, keeps only its input.
    bool moe = false;
    /// moe_act (output discarded): the routed experts' activation; fc2's input goes.
    bool moe_act = false;
    /// shared_experts (checkpointed): the shared expert keeps nothing (its input is the router's).
    bool shared_experts = false;
};

/// The modules re-run inline in a layer of `shape` under `granularity`: shape.recompute_modules with
/// `selective`; nothing otherwise (a fully recomputed layer re-runs everything, and `overlapped`
/// recomputes the core attention on its background lane).
[[nodiscard]] SelectiveRecompute selective_recompute(const LayerShape& shape,
                                                     config::RecomputeGranularity granularity);

}  // namespace trainsim::workload
