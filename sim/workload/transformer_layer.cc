#include "sim/workload/transformer_layer.h"

#include <stdexcept>
#include <string>

#include "sim/workload/cp_ring_kernels.h"
#include "sim/workload/element_bytes.h"
#include "sim/workload/fp8_layer.h"
#include "sim/workload/mla_attention.h"
#include "sim/workload/moe_layer.h"
#include "sim/workload/moe_sizes.h"
#include "sim/workload/op_list_builder.h"
#include "sim/workload/selective_recompute.h"
#include "sim/workload/tensor_parallel_linear.h"
#include "sim/workload/tp_comm_overlap.h"

namespace trainsim::workload {
namespace {

using config::RecomputeGranularity;
using cost::CollectiveKind;
using cost::GemmClass;
using cost::MemoryBoundKind;

// Element counts per rank for one micro-batch. Activations are 2 bytes (bf16/fp16), dropout masks 1.
struct Sizes {
    std::int64_t sb, h, d, s, local_heads, b;
    std::int64_t E;     // norm/dropout/residual tensor: s·b·h, or s·b·h/t with SP
    std::int64_t full;  // s·b·h, the tensor a TP collective moves
    std::int64_t q;     // s·b·a·d/t: Q, the attention output and projection input (s·b·h/t for GPT)
    std::int64_t kv;    // s·b·g·d/t: K, and V (equal to q without grouped-query attention)
    std::int64_t F;     // s·b·ffn/t: MLP hidden per rank (the GeLU/SwiGLU output)
    std::int64_t F_in;  // s·b·fc1 width/t: fc1's output (2F with SwiGLU)
    std::int64_t S;     // b·(a/t)·s²: attention scores per rank
    std::int64_t qkv_out, ffn_local, fc1_local, attn_out;
};

Sizes sizes_of(const LayerShape& x) {
    Sizes z{};
    z.sb = x.tokens();
    z.h = x.hidden;
    z.d = x.head_dim();
    z.s = x.seq;
    z.b = x.micro_batch;
    z.local_heads = x.local_heads();
    z.E = x.sequence_sharded_elements();
    z.full = x.tokens() * x.hidden;
    z.attn_out = x.attention_output_width();  // a·d/t (a·d_v/t with multi-latent attention)
    z.q = z.sb * z.attn_out;
    z.kv = z.sb * x.local_groups() * z.d;
    z.ffn_local = x.ffn / x.tp;
    z.fc1_local = x.fc1_local_width();
    z.F = x.tokens() * z.ffn_local;
    z.F_in = x.tokens() * z.fc1_local;
    z.S = x.micro_batch * z.local_heads * x.seq * x.seq;
    // Megatron-Core's fused QKV projection: a query heads and g key and value heads of d channels each.
    z.qkv_out = (x.heads + 2 * x.groups()) * z.d / x.tp;
    return z;
}

// Names that depend on the layer's style; the GPT-3 layer keeps the names it always had.
std::string norm_name(const LayerShape& x, int which) {
    return (x.rmsnorm ? "rmsnorm" : "ln") + std::to_string(which);
}
std::string dropout_add_name(const LayerShape& x, const std::string& block) {
    return block + (x.bias ? ".bias_dropout_add" : ".dropout_add");
}
std::string activation_name(const LayerShape& x) {
    if (x.swiglu) {
        return x.bias ? "bias_swiglu" : "swiglu";
    }
    return x.bias ? "bias_gelu" : "gelu";
}

// Context parallelism (Megatron-Core's cp_comm_type, run by Transformer Engine's
// attn_forward_func_with_cp). Each rank holds s/c tokens: chunks r and 2c−1−r of a 2·c split, so every
// rank owns the same share of the causal mask. Its local attention kernels below are described as
// FlashAttention kernels on m = s/c query tokens; the cost model charges a kernel half its non-causal
// FLOPs (the causal share), so a kernel {s/c, n, d} costs the real work of s/c × n/2 score blocks.
//
// p2p (ring attention): c steps. Step 0 attends the rank's own two chunks under the causal mask
// (s/c × s/c, half masked); step i ≥ 1 attends the keys and values of rank r−i, fully unmasked on half
// the data: both local query chunks against its first chunk (i ≤ r), or the second query chunk against
// both of its chunks (i > r). Either way s/c × s/(2c) unmasked, the same work as step 0: every step is
// the kernel {s/c, s/c, d}, c of them 1/c of the whole causal attention. Before step i computes, the
// keys and values for step i+1 go to the next rank and come from the previous one (a send/recv on its
// own stream), so the exchange of step i+1 runs under the attention of step i.
std::int64_t cp_kv_bytes(const Sizes& z) {
    return 2 * z.kv * kActivationBytes;  // K and V of the rank's s/c tokens
}

// TE's memory-bound kernels around the steps (cp_ring_kernels.h): the K/V pack before the ring, the
// half-chunk copy before each step i ≥ 1, the output merge after the last step.
CpRingTensors cp_ring_tensors(const Sizes& z) {
    return {z.q, 2 * z.kv};
}

void cp_ring_forward(OpListBuilder& ops, const LayerShape& x, const Sizes& z, std::int64_t batch,
                     Bytes saved) {
    const CpRingTensors t = cp_ring_tensors(z);
    ops.memory("attn.cp_kv_pack", MemoryBoundKind::Generic, cp_kv_pack_bytes(t));
    std::int32_t arriving = -1;  // the exchange that brings this step's keys and values
    for (std::int64_t i = 0; i < x.cp; ++i) {
        std::int32_t next = -1;
        if (i + 1 < x.cp) {
            next = ops.async_collective("attn.cp_kv_exchange." + std::to_string(i + 1),
                                        CollectiveKind::SendRecv, cp_kv_bytes(z), CommGroup::Context);
        }
        if (arriving >= 0) {
            ops.join(arriving);
            ops.memory("attn.cp_kv_half." + std::to_string(i), MemoryBoundKind::Generic, cp_kv_half_bytes(t));
        }
        ops.gemm("attn.flash.cp_step." + std::to_string(i), {z.s, z.s, z.d, 2 * batch},
                 i == 0 ? saved : Bytes{0}, GemmClass::FlashForward);
        arriving = next;
    }
    ops.memory("attn.cp_out_merge", MemoryBoundKind::Generic, cp_out_merge_bytes(t, x.cp));
}

// The ring's backward (TE's AttnFuncWithCPAndKVP2P.backward): the same c steps, the keys and values
// travelling again, and each step's dK/dV sent on after it (accumulated into the gradient of the block
// it belongs to); the last one returns to the block's owner before the QKV backward can use it.
void cp_ring_backward(OpListBuilder& ops, const LayerShape& x, const Sizes& z, std::int64_t batch) {
    const CpRingTensors t = cp_ring_tensors(z);
    ops.memory("attn.cp_kv_pack.bwd", MemoryBoundKind::Generic, cp_kv_pack_bytes(t));
    std::int32_t arriving = -1;
    std::int32_t returned = -1;
    for (std::int64_t i = 0; i < x.cp; ++i) {
        std::int32_t next = -1;
        if (i + 1 < x.cp) {
            next = ops.async_collective("attn.cp_kv_exchange.bwd." + std::to_string(i + 1),
                                        CollectiveKind::SendRecv, cp_kv_bytes(z), CommGroup::Context);
        }
        if (arriving >= 0) {
            ops.join(arriving);
            ops.memory("attn.cp_kv_half.bwd." + std::to_string(i), MemoryBoundKind::Generic,
                       cp_kv_half_bytes(t));
        }
        ops.gemm("attn.flash.bwd.cp_step." + std::to_string(i), {z.s, z.s, z.d, 5 * batch}, Bytes{0},
                 GemmClass::FlashBackward);
        ops.memory("attn.cp_grad_merge." + std::to_string(i), MemoryBoundKind::Generic,
                   cp_grad_merge_bytes(t, i));
        returned = ops.async_collective("attn.cp_dkv_exchange." + std::to_string(i), CollectiveKind::SendRecv,
                                        cp_kv_bytes(z), CommGroup::Context);
        arriving = next;
    }
    ops.join(returned);
}

// a2a (DeepSpeed-Ulysses, TE's AttnFuncWithCPAndQKVOA2A): all-to-alls over the c context-parallel ranks
// trade the sequence shards for head shards, so each rank runs ordinary causal attention on the whole
// sequence s·c for a/(t·c) heads and then trades the output back. TE sends Q, K and V as three
// all-to-alls (each rank's buffer: its s/c tokens of the tensor, (c−1)/c of which leave it), and each
// traded tensor is copied once by an index_select that puts the load-balanced chunks back in sequence
// order (before the attention) or into chunk order (before the return trip). Nothing overlaps them:
// the attention waits for its inputs and the output projection for its input.
void cp_a2a(OpListBuilder& ops, const std::string& name, std::int64_t elements) {
    ops.sync_collective(name, CollectiveKind::AllToAll, elements * kActivationBytes, CommGroup::Context);
}
void cp_a2a_reorder(OpListBuilder& ops, const std::string& name, std::int64_t elements) {
    ops.memory(name, MemoryBoundKind::Generic, 2 * elements * kActivationBytes);
}

void cp_a2a_forward(OpListBuilder& ops, const LayerShape& x, const Sizes& z, std::int64_t batch,
                    Bytes saved) {
    for (const auto& [tensor, elements] : {std::pair{"q", z.q}, std::pair{"k", z.kv}, std::pair{"v", z.kv}}) {
        cp_a2a(ops, std::string("attn.cp_a2a.") + tensor, elements);
        cp_a2a_reorder(ops, std::string("attn.cp_a2a.") + tensor + ".reorder", elements);
    }
    // The whole sequence, 1/c of the rank's heads: the same causal work as 1/c of the layer's attention.
    ops.gemm("attn.flash", {z.s * x.cp, z.s * x.cp, z.d, 2 * batch / x.cp}, saved, GemmClass::FlashForward);
    cp_a2a_reorder(ops, "attn.cp_a2a.out.reorder", z.q);
    cp_a2a(ops, "attn.cp_a2a.out", z.q);
}

// The backward mirrors it: the output gradient goes to the head shards, the FlashAttention backward runs
// there, and dQ, dK, dV come back to the sequence shards.
void cp_a2a_backward(OpListBuilder& ops, const LayerShape& x, const Sizes& z, std::int64_t batch) {
    cp_a2a(ops, "attn.cp_a2a.dout", z.q);
    cp_a2a_reorder(ops, "attn.cp_a2a.dout.reorder", z.q);
    ops.gemm("attn.flash.bwd", {z.s * x.cp, z.s * x.cp, z.d, 5 * batch / x.cp}, Bytes{0},
             GemmClass::FlashBackward);
    for (const auto& [tensor, elements] :
         {std::pair{"dq", z.q}, std::pair{"dk", z.kv}, std::pair{"dv", z.kv}}) {
        cp_a2a_reorder(ops, std::string("attn.cp_a2a.") + tensor + ".reorder", elements);
        cp_a2a(ops, std::string("attn.cp_a2a.") + tensor, elements);
    }
}

// Core attention forward: QKᵀ, scale-mask-softmax, dropout, attention over V. `keep_scores` is false
// under selective recompute, which drops the b·a·s² tensors (Korthikanti §5). With grouped-query
// attention the g key and value heads are expanded to the a query heads before the batched GEMMs.
//
// With FlashAttention (Dao 2022, 2023) the same work is one kernel that keeps no s×s tensor: it saves its
// inputs Q, K and V, and the fp32 log-sum-exp of each row's softmax (b·(a/t)·s × 4 bytes) in place of
// the scores; its output is the projection's input, kept there. Dropout, if any, runs inside it from a
// saved RNG seed. Selective recompute drops the log-sum-exp and runs the kernel again.
void core_attention_forward(OpListBuilder& ops, const LayerShape& x, const Sizes& z, bool keep_scores,
                            bool keep_any) {
    if (x.mla) {
        mla_core_attention_forward(ops, x, keep_scores, keep_any);
        return;
    }
    const std::int64_t batch = z.b * z.local_heads;
    if (x.cp > 1 && !x.flash_attention) {
        // validate_scenario refuses it: CP runs inside TE's fused attention.
        throw std::invalid_argument("context parallelism is modelled with FlashAttention");
    }
    if (x.flash_attention) {
        const std::int64_t lse = batch * z.s * kFp32Bytes;
        const Bytes saved{(keep_any ? (z.q + 2 * z.kv) * kActivationBytes : 0) + (keep_scores ? lse : 0)};
        if (x.cp > 1 && x.cp_comm == config::CpCommType::P2p) {
            cp_ring_forward(ops, x, z, batch, saved);
            return;
        }
        if (x.cp > 1 && x.cp_comm == config::CpCommType::A2a) {
            cp_a2a_forward(ops, x, z, batch, saved);
            return;
        }
        if (x.cp > 1 && x.cp_comm == config::CpCommType::AllGather) {
            // TE's AttnFuncWithCPAndKVAllGather: every rank's keys and values gathered first, then the
            // local s/c queries against the s keys their causal mask reaches (1/c of the causal work).
            ops.sync_collective("attn.cp_kv_allgather", CollectiveKind::AllGather, x.cp * cp_kv_bytes(z),
                                CommGroup::Context);
            ops.gemm("attn.flash", {z.s, z.s * x.cp, z.d, 2 * batch}, saved, GemmClass::FlashForward);
            return;
        }
        // Two GEMMs' worth of FLOPs: QKᵀ and attention over V (the cost model halves them for the mask).
        ops.gemm("attn.flash", {z.s, z.s, z.d, 2 * batch}, saved, GemmClass::FlashForward);
        return;
    }
    const Bytes qk_saved{keep_any ? (z.q + z.kv) * kActivationBytes : 0};  // Q and K
    ops.gemm("attn.qk", {z.s, z.s, z.d, batch}, qk_saved, GemmClass::AttentionScore);
    ops.memory("attn.softmax", MemoryBoundKind::ScaleMaskSoftmax, 2 * z.S * kActivationBytes,
               Bytes{keep_scores ? z.S * kActivationBytes : 0});
    ops.memory("attn.dropout", MemoryBoundKind::Dropout, 2 * z.S * kActivationBytes + z.S * kMaskBytes,
               Bytes{keep_scores ? z.S * kMaskBytes : 0});
    // Saves the dropout output (when scores are kept) and V.
    const Bytes av_saved{(keep_scores ? z.S * kActivationBytes : 0) +
                         (keep_any ? z.kv * kActivationBytes : 0)};
    ops.gemm("attn.av", {z.s, z.d, z.s, batch}, av_saved, GemmClass::AttentionOverValue);
}

// Rotary position embedding on Q and K after the QKV projection (Megatron-Core's fused RoPE): read and
// write both. It keeps nothing beyond the small cos/sin table; its backward rotates dQ and dK back.
void rope(OpListBuilder& ops, const LayerShape& x, const Sizes& z, const char* name) {
    if (x.rope) {
        ops.memory(name, MemoryBoundKind::Rope, 2 * (z.q + z.kv) * kActivationBytes);
    }
}

// A row-parallel linear's backward (projection, fc2): the gradient of g is an all-gather with SP and
// the identity without.
void row_parallel_backward(OpListBuilder& ops, const LayerShape& x, const Sizes& z, const std::string& name,
                           std::int64_t in_features) {
    if (x.sequence_parallel) {
        ops.sync_collective(name + ".grad_allgather", CollectiveKind::AllGather, z.full * kActivationBytes);
    }
    ops.gemm(name + ".dgrad", {z.sb, in_features, z.h});
    ops.gemm(name + ".wgrad", {in_features, z.h, z.sb});
}

void tp_output_reduction(OpListBuilder& ops, const LayerShape& x, const Sizes& z, const std::string& name) {
    if (x.tp == 1) {
        return;
    }
    if (x.sequence_parallel) {
        ops.sync_collective(name + ".reducescatter", CollectiveKind::ReduceScatter,
                            z.full * kActivationBytes);
    } else {
        ops.sync_collective(name + ".allreduce", CollectiveKind::AllReduce, z.full * kActivationBytes);
    }
}

void tp_input_gather(OpListBuilder& ops, const LayerShape& x, const Sizes& z, const std::string& name) {
    if (x.sequence_parallel) {
        ops.sync_collective(name + ".allgather", CollectiveKind::AllGather, z.full * kActivationBytes);
    }
}

// The norms before the attention block and the MLP: they read x and write y (RMSNorm moves the same
// bytes as LayerNorm), keeping `saved` (their input).
void norm_forward(OpListBuilder& ops, const LayerShape& x, const Sizes& z, int which, Bytes saved) {
    ops.memory(norm_name(x, which), MemoryBoundKind::LayerNorm, 2 * z.E * kActivationBytes, saved);
}

// The dense MLP after its norm: fc1 (with SP's gather of the norm's output), the activation, fc2 and its
// TP reduction, each keeping its input when `keep`.
void dense_mlp_forward(OpListBuilder& ops, const LayerShape& x, const Sizes& z, bool keep) {
    auto saved = [keep](std::int64_t bytes) { return Bytes{keep ? bytes : 0}; };
    tp_input_gather(ops, x, z, norm_name(x, 2));
    ops.gemm("fc1", {z.sb, z.fc1_local, z.h}, saved(z.E * kActivationBytes));
    // GeLU reads fc1's output and writes its own; SwiGLU reads both halves (2F) and writes F. Each
    // keeps its input for the backward, and fc2 keeps its own input (the activation's output).
    ops.memory(activation_name(x), MemoryBoundKind::BiasGelu, (z.F_in + z.F) * kActivationBytes,
               saved(z.F_in * kActivationBytes));
    ops.gemm("fc2", {z.sb, z.h, z.ffn_local}, saved(z.F * kActivationBytes));
    tp_output_reduction(ops, x, z, "fc2");
}

// Returns the index of the layer's first op.
std::int32_t forward_into(OpListBuilder& ops, const LayerShape& x, RecomputeGranularity recompute) {
    const auto first = static_cast<std::int32_t>(ops.ops().size());
    const Sizes z = sizes_of(x);
    const bool full = recompute == RecomputeGranularity::Full;
    const bool keep = !full;  // full recompute keeps only the layer input
    const SelectiveRecompute r = selective_recompute(x, recompute);
    // Selective recompute drops the scores when it recomputes the core attention; overlapped recompute
    // (its background lane) always does.
    const bool keep_scores = recompute == RecomputeGranularity::None ||
                             (recompute == RecomputeGranularity::Selective && !r.core_attn);
    auto saved = [keep](std::int64_t bytes) { return Bytes{keep ? bytes : 0}; };

    // Full recompute keeps only the layer input: 2sbh (Table 2), or its sequence shard 2sbh/t with SP,
    // because with SP the tensor passed between layers is already [s/t, b, h]. A norm recomputed by
    // selective recompute's layernorm keeps its input too (its output is what goes).
    norm_forward(ops, x, z, 1, Bytes{z.E * kActivationBytes});
    if (x.mla) {
        // Down/up projections, RoPE, core attention.
        mla_attention_forward(ops, x,
                              MlaKeep{keep && !r.input_norm, keep, keep && !r.mla_up_proj, keep_scores});
    } else {
        tp_input_gather(ops, x, z, norm_name(x, 1));
        ops.gemm("qkv", {z.sb, z.qkv_out, z.h}, saved(z.E * kActivationBytes));
        rope(ops, x, z, "rope");
        core_attention_forward(ops, x, z, keep_scores, keep);
    }
    ops.gemm("proj", {z.sb, z.h, z.attn_out}, saved(z.sb * z.attn_out * kActivationBytes));
    tp_output_reduction(ops, x, z, "proj");
    ops.memory(dropout_add_name(x, "attn"), MemoryBoundKind::BiasDropoutAdd,
               3 * z.E * kActivationBytes + z.E * kMaskBytes, saved(z.E * kMaskBytes));
    norm_forward(ops, x, z, 2, saved(z.E * kActivationBytes));
    if (x.moe()) {
        // Routes the norm's output as it is: no TP collective around it.
        moe_mlp_forward(ops, x, keep ? MoeKeep::under(r) : MoeKeep::nothing());
    } else {
        dense_mlp_forward(ops, x, z, keep && !r.mlp);  // mlp's checkpoint keeps only its input (the norm's)
    }
    ops.memory(dropout_add_name(x, "mlp"), MemoryBoundKind::BiasDropoutAdd,
               3 * z.E * kActivationBytes + z.E * kMaskBytes, saved(z.E * kMaskBytes));
    return first;
}

// The hook for FP8 training: the BF16 op list, rewritten by fp8_layer.h when the layer runs in FP8.
// TE's userbuffers overlap then chunks the sequence-parallel collectives beside their GEMMs (it sees the
// FP8 gathers' bytes, since TE gathers FP8).
OpList finish(OpListBuilder& ops, const LayerShape& x) {
    OpList out = x.fp8 ? fp8_layer_ops(ops.take(), x, *x.fp8) : ops.take();
    return x.tp_comm_overlap ? overlap_tp_comm(out, x) : out;
}

// Core attention backward: the input gradients of attention over V and of QKᵀ, through dropout and
// softmax; or FlashAttention's one backward kernel.
void core_attention_backward(OpListBuilder& ops, const LayerShape& x, const Sizes& z, std::int64_t batch) {
    if (x.cp > 1 && x.cp_comm == config::CpCommType::P2p) {
        cp_ring_backward(ops, x, z, batch);
        return;
    }
    if (x.cp > 1 && x.cp_comm == config::CpCommType::A2a) {
        cp_a2a_backward(ops, x, z, batch);
        return;
    }
    if (x.cp > 1 && x.cp_comm == config::CpCommType::AllGather) {
        // The backward gathers the keys and values again (they are not kept) and reduce-scatters dK/dV
        // back to their owners.
        ops.sync_collective("attn.cp_kv_allgather.bwd", CollectiveKind::AllGather, x.cp * cp_kv_bytes(z),
                            CommGroup::Context);
        ops.gemm("attn.flash.bwd", {z.s, z.s * x.cp, z.d, 5 * batch}, Bytes{0}, GemmClass::FlashBackward);
        ops.sync_collective("attn.cp_dkv_reducescatter", CollectiveKind::ReduceScatter, x.cp * cp_kv_bytes(z),
                            CommGroup::Context);
        return;
    }
    if (x.flash_attention) {
        // FA2's backward: five GEMMs' worth (it recomputes QKᵀ), 2.5 × the forward (FA2 §4.1).
        ops.gemm("attn.flash.bwd", {z.s, z.s, z.d, 5 * batch}, Bytes{0}, GemmClass::FlashBackward);
        return;
    }
    ops.gemm("attn.av.dgrad_probs", {z.s, z.s, z.d, batch}, Bytes{0}, GemmClass::AttentionScore);
    ops.gemm("attn.av.dgrad_v", {z.s, z.d, z.s, batch}, Bytes{0}, GemmClass::AttentionOverValue);
    ops.memory("attn.dropout.bwd", MemoryBoundKind::Dropout, 2 * z.S * kActivationBytes + z.S * kMaskBytes);
    ops.memory("attn.softmax.bwd", MemoryBoundKind::ScaleMaskSoftmax, 3 * z.S * kActivationBytes);
    ops.gemm("attn.qk.dgrad_q", {z.s, z.d, z.s, batch}, Bytes{0}, GemmClass::AttentionOverValue);
    ops.gemm("attn.qk.dgrad_k", {z.s, z.d, z.s, batch}, Bytes{0}, GemmClass::AttentionOverValue);
}

// A norm run again by selective recompute's layernorm (Megatron's CheckpointWithoutOutput): its input is
// held, and `rewritten`, the output its readers had kept, is kept again until the backward ends.
void recompute_norm(OpListBuilder& ops, const LayerShape& x, const Sizes& z, int which, Bytes rewritten) {
    ops.set_recompute(true);
    norm_forward(ops, x, z, which, rewritten);
    ops.set_recompute(false);
}

}  // namespace

OpList layer_forward(const LayerShape& shape, RecomputeGranularity recompute) {
    OpListBuilder ops(OpRole::Layer);
    forward_into(ops, shape, recompute);
    return finish(ops, shape);
}

OpList layer_forward_unsaved(const LayerShape& shape) {
    OpList ops = layer_forward(shape, RecomputeGranularity::Full);
    for (Op& op : ops) {
        op.saved_bytes = Bytes{0};
    }
    return ops;
}

OpList layer_full_recompute(const LayerShape& shape, bool input_is_checkpoint) {
    // The recomputed forward keeps what a forward without recompute keeps, until its backward frees it.
    OpListBuilder ops(OpRole::Layer, /*is_recompute=*/true);
    forward_into(ops, shape, RecomputeGranularity::None);
    OpList out = finish(ops, shape);
    if (input_is_checkpoint) {
        out.front().saved_bytes = Bytes{0};  // LayerNorm's saved input is the checkpoint itself
    }
    return out;
}

OpList layer_backward(const LayerShape& x, RecomputeGranularity recompute) {
    const Sizes z = sizes_of(x);
    OpListBuilder ops(OpRole::Layer);
    if (recompute == RecomputeGranularity::Full) {
        ops.set_recompute(true);
        const std::int32_t first = forward_into(ops, x, RecomputeGranularity::None);
        ops.set_saved(first, Bytes{0});  // LayerNorm's saved input is the checkpoint itself
        ops.set_recompute(false);
    }
    // MLP block, in reverse. Autograd sums the two gradients that meet at each residual connection
    // (read both, write one), and each bias gradient is a reduction over the tokens of its output
    // gradient (for projection and fc2 inside the fused bias-dropout-add's backward).
    ops.memory(dropout_add_name(x, "mlp") + ".bwd", MemoryBoundKind::BiasDropoutAdd,
               2 * z.E * kActivationBytes + z.E * kMaskBytes);
    const SelectiveRecompute r = selective_recompute(x, recompute);
    if (r.pre_mlp_norm) {
        // layernorm's hook on the MLP output's gradient: the norm runs again and rewrites its output, which
        // the router and the shared expert read.
        const MoeSizes m = moe_sizes(x);
        const bool shared_kept_input = x.shared_ffn > 0 && MoeKeep::under(r).shared;
        recompute_norm(ops, x, z, 2, Bytes{(m.T * m.h + (shared_kept_input ? z.E : 0)) * kActivationBytes});
    }
    if (r.mlp) {
        // mlp's checkpoint: the dense MLP's forward again (the norm inside Transformer Engine's fc1 too),
        // keeping what a forward keeps; its input is the checkpoint's, held.
        ops.set_recompute(true);
        norm_forward(ops, x, z, 2, Bytes{0});
        dense_mlp_forward(ops, x, z, /*keep=*/true);
        ops.set_recompute(false);
    }
    if (x.moe()) {
        moe_mlp_backward(ops, x, r);
    } else {
        if (x.bias) {
            ops.memory("fc2.bias_grad", MemoryBoundKind::Generic, z.E * kActivationBytes);
        }
        row_parallel_backward(ops, x, z, "fc2", z.ffn_local);
        // Read the output gradient (F) and the saved input (F_in), write the input gradient (F_in).
        ops.memory(activation_name(x) + ".bwd", MemoryBoundKind::BiasGelu,
                   (z.F + 2 * z.F_in) * kActivationBytes);
        if (x.bias) {
            ops.memory("fc1.bias_grad", MemoryBoundKind::Generic, z.F_in * kActivationBytes);
        }
        column_parallel_backward(ops, x, z.sb, z.h, z.fc1_local, "fc1");
    }
    ops.memory(norm_name(x, 2) + ".bwd", MemoryBoundKind::LayerNorm, 3 * z.E * kActivationBytes);
    ops.memory("mlp.residual_grad_add", MemoryBoundKind::Generic, 3 * z.E * kActivationBytes);
    // Attention block, in reverse.
    ops.memory(dropout_add_name(x, "attn") + ".bwd", MemoryBoundKind::BiasDropoutAdd,
               2 * z.E * kActivationBytes + z.E * kMaskBytes);
    if (r.input_norm) {
        // layernorm's hook on the attention output's gradient: the norm before MLA's down projections
        // rewrites its output (kept once, BF16, for their weight gradients).
        recompute_norm(ops, x, z, 1, Bytes{z.E * kActivationBytes});
    }
    if (x.bias) {
        ops.memory("proj.bias_grad", MemoryBoundKind::Generic, z.E * kActivationBytes);
    }
    row_parallel_backward(ops, x, z, "proj", z.attn_out);
    if (r.mla_up_proj) {
        // mla_up_proj's hook on the core attention output's gradient, before the core attention's own
        // recompute, which reads the Q, K and V it rewrites.
        ops.set_recompute(true);
        mla_up_proj_recompute(ops, x);
        ops.set_recompute(false);
    }
    if (r.core_attn) {
        // Megatron's checkpointed core attention re-runs its forward when its backward is reached.
        ops.set_recompute(true);
        core_attention_forward(ops, x, z, /*keep_scores=*/true, /*keep_any=*/false);
        ops.set_recompute(false);
    }
    if (x.mla) {
        mla_attention_backward(ops, x);
    } else {
        const std::int64_t batch = z.b * z.local_heads;
        core_attention_backward(ops, x, z, batch);
        rope(ops, x, z, "rope.bwd");
        if (x.bias) {
            ops.memory("qkv.bias_grad", MemoryBoundKind::Generic, z.sb * z.qkv_out * kActivationBytes);
        }
        column_parallel_backward(ops, x, z.sb, z.h, z.qkv_out, "qkv");
    }
    ops.memory(norm_name(x, 1) + ".bwd", MemoryBoundKind::LayerNorm, 3 * z.E * kActivationBytes);
    ops.memory("attn.residual_grad_add", MemoryBoundKind::Generic, 3 * z.E * kActivationBytes);
    return finish(ops, x);
}

OpList layer_selective_recompute(const LayerShape& shape) {
    OpListBuilder ops(OpRole::Layer, /*is_recompute=*/true);
    core_attention_forward(ops, shape, sizes_of(shape), /*keep_scores=*/true, /*keep_any=*/false);
    return ops.take();
}

Bytes layer_activation_bytes(const LayerShape& shape, RecomputeGranularity recompute) {
    Bytes total{0};
    for (const Op& op : layer_forward(shape, recompute)) {
        total += op.saved_bytes;
    }
    return total;
}

}  // namespace trainsim::workload
