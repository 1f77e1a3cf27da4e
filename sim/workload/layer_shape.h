// The sizes that determine one transformer layer's work on one tensor-parallel rank.
#pragma once

#include <cstdint>
#include <optional>

#include "sim/config/scenario.h"

namespace trainsim::workload {

struct LayerShape {
    std::int64_t seq = 0;          // s on this rank: the sequence / c with context parallelism
    std::int64_t micro_batch = 0;  // b
    std::int64_t hidden = 0;       // h
    std::int64_t heads = 0;        // a
    std::int64_t ffn = 0;          // MLP hidden size (4h in the papers)
    std::int64_t vocab = 0;        // v (padded)
    std::int64_t tp = 1;           // t
    bool sequence_parallel = false;
    // The layer's style (DESIGN.md §8); the defaults are the GPT-3 layer.
    std::int64_t query_groups = 0;         // g, key/value heads (grouped-query attention); 0: one per head
    std::int64_t kv_channels = 0;          // d, channels per head; 0: hidden / heads
    bool swiglu = false;                   // gated MLP: fc1 is 2·ffn wide, SwiGLU instead of GeLU
    bool rmsnorm = false;                  // RMSNorm instead of LayerNorm (a weight, no bias)
    bool rope = false;                     // rotary embedding on Q and K instead of learned positions
    bool bias = true;                      // biases in the linear layers (Megatron's add_bias_linear)
    std::optional<config::Fp8Recipe> fp8;  // FP8 training (sim/workload/fp8_layer.h); unset: BF16
    bool fp8_split_accumulator = true;     // TE's split accumulator on the GEMMs it uses it for
    bool flash_attention = false;          // one FlashAttention kernel per pass, no s×s tensors kept
    std::optional<bool> cross_entropy_loss_fusion;  // the loss's passes (cross_entropy_passes.h)
    /// Bytes of an embedding table's main_grad element, into which its dense 16-bit gradient is added
    /// every micro-batch (stage_ops.h): G (training.main_grads_dtype), or 4 with NeMo's fp32 embedding
    /// gradients (fp32_embedding_gradients.h's embedding_gradient_bytes).
    std::int64_t embedding_main_grad_bytes = 4;
    /// Context parallelism (flash attention only): c ranks share the sequence, each holding `seq`
    /// tokens (two of the 2·c chunks); attention reaches the other ranks' keys and values by `cp_comm`.
    std::int64_t cp = 1;
    config::CpCommType cp_comm = config::CpCommType::P2p;
    bool tp_comm_overlap = false;  // TE userbuffers: SP collectives chunked beside their GEMMs
    /// What selective recomputation re-runs (training.recompute_modules; selective_recompute.h).
    config::RecomputeModules recompute_modules;
    // Mixture of experts (sim/workload/moe_layer.h): the MLP is a router and `experts` routed experts of
    // width `moe_ffn`, each token sent to `topk` of them, the experts split over `ep` ranks and each
    // expert's MLP over `etp` (expert tensor parallelism: fc1 by columns, fc2 by rows). 0: dense.
    std::int64_t experts = 0;
    std::int64_t topk = 0;
    std::int64_t moe_ffn = 0;
    std::int64_t ep = 1;
    std::int64_t etp = 1;
    std::int64_t shared_ffn = 0;         // the shared expert's MLP width (0: none), split over the t ranks
    bool shared_expert_overlap = false;  // the shared expert beside the all-to-alls (shared_expert.h)
    double load_skew = 1.0;              // the busiest expert's tokens over the mean (moe_load_skew)
    double capacity_factor = 0.0;        // moe_expert_capacity_factor; 0: dropless
    bool pad_to_capacity = false;        // moe_pad_expert_input_to_capacity
    config::MoeTokenDispatcher moe_dispatcher = config::MoeTokenDispatcher::AllToAll;
    // Multi-latent attention (sim/workload/mla_attention.h) in place of the GQA block; unset: GQA.
    std::optional<config::MlaConfig> mla;

    [[nodiscard]] bool moe() const { return experts > 0; }
    /// The same layer with the dense MLP of `ffn`: the dense layers of a model that moe_layer_freq mixes.
    [[nodiscard]] LayerShape with_dense_mlp() const {
        LayerShape x = *this;
        x.experts = 0;
        return x;
    }

    [[nodiscard]] std::int64_t tokens() const { return seq * micro_batch; }  // s·b
    [[nodiscard]] std::int64_t head_dim() const { return kv_channels > 0 ? kv_channels : hidden / heads; }
    [[nodiscard]] std::int64_t groups() const { return query_groups > 0 ? query_groups : heads; }
    [[nodiscard]] std::int64_t local_heads() const { return heads / tp; }
    [[nodiscard]] std::int64_t local_groups() const { return groups() / tp; }
    /// Width of the core attention's output on one rank, the output projection's input: (a/t)·d, or
    /// (a/t)·v_head_dim with multi-latent attention.
    [[nodiscard]] std::int64_t attention_output_width() const {
        return local_heads() * (mla ? mla->v_head_dim : head_dim());
    }
    /// Width of fc1's output on one rank: ffn/t, twice that for the gated MLP's two up-projections.
    [[nodiscard]] std::int64_t fc1_local_width() const { return (swiglu ? 2 : 1) * ffn / tp; }
    /// Elements of one [s, b, h] activation as held by one rank: s·b·h, or s·b·h/t with sequence
    /// parallelism (LayerNorm, dropout and residual run on a 1/t shard of the sequence).
    [[nodiscard]] std::int64_t sequence_sharded_elements() const {
        return sequence_parallel ? tokens() * hidden / tp : tokens() * hidden;
    }
};

}  // namespace trainsim::workload
