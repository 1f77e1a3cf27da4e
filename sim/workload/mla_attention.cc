#include "sim/workload/mla_attention.h"

#include <string>

#include "sim/workload/element_bytes.h"
#include "sim/workload/tensor_parallel_linear.h"

namespace trainsim::workload {
namespace {

using cost::CollectiveKind;
using cost::GemmClass;
using cost::MemoryBoundKind;

// Element counts per rank and micro-batch.
struct MlaSizes {
    std::int64_t s, b, h;
    std::int64_t sb;      // s·b: the tokens a column-parallel GEMM sees (after SP's all-gather)
    std::int64_t local;   // this rank's tokens: s·b/t with SP, s·b without (the duplicated GEMMs' m)
    std::int64_t heads;   // a/t
    std::int64_t qk;      // q/k head dimension: d_qk + d_rope
    std::int64_t rope;    // d_rope, the shared RoPE key's width
    std::int64_t v;       // d_v
    std::int64_t rq;      // q_lora_rank (0: a full-rank query projection)
    std::int64_t rkv;     // kv_lora_rank
    std::int64_t q_out;   // (a/t)·(d_qk + d_rope): Q, and K after assembly
    std::int64_t kv_out;  // (a/t)·(d_qk + d_v): linear_kv_up_proj's output (k without RoPE, and V)
    std::int64_t S;       // b·(a/t)·s²: unfused attention scores
};

MlaSizes mla_sizes(const LayerShape& x) {
    const config::MlaConfig& m = *x.mla;
    MlaSizes z{};
    z.s = x.seq;
    z.b = x.micro_batch;
    z.h = x.hidden;
    z.sb = x.tokens();
    z.local = x.sequence_sharded_elements() / x.hidden;
    z.heads = x.local_heads();
    z.qk = m.qk_head_dim + m.qk_pos_emb_head_dim;
    z.rope = m.qk_pos_emb_head_dim;
    z.v = m.v_head_dim;
    z.rq = m.q_lora_rank.value_or(0);
    z.rkv = m.kv_lora_rank;
    z.q_out = z.heads * z.qk;
    z.kv_out = z.heads * (m.qk_head_dim + m.v_head_dim);
    z.S = z.b * z.heads * z.s * z.s;
    return z;
}

bool sequence_sharded(const LayerShape& x) {
    return x.sequence_parallel && x.tp > 1;
}

// With SP a column-parallel GEMM's input is all-gathered from the sequence shards first (TE's
// LayerNormColumnParallelLinear gathers its norm's output).
void sp_gather(OpListBuilder& ops, const LayerShape& x, const MlaSizes& z, const std::string& name,
               std::int64_t width) {
    if (sequence_sharded(x)) {
        ops.sync_collective(name, CollectiveKind::AllGather, z.sb * width * kActivationBytes);
    }
}

// A latent's norm fused into its column-parallel up projection: the norm runs on the rank's tokens and
// keeps its input (`keep_latent`); the GEMM keeps its input's shard (`keep_up_input`; TE gathers it again
// for the backward).
void latent_norm_and_up(OpListBuilder& ops, const LayerShape& x, const MlaSizes& z, const std::string& name,
                        std::int64_t rank, std::int64_t out, bool keep_latent, bool keep_up_input) {
    const std::int64_t latent = z.local * rank * kActivationBytes;
    ops.memory(name + "_norm", MemoryBoundKind::LayerNorm, 2 * latent, Bytes{keep_latent ? latent : 0});
    sp_gather(ops, x, z, name + "_up_proj.allgather", rank);
    ops.gemm(name + "_up_proj", {z.sb, out, rank}, Bytes{keep_up_input ? latent : 0});
}

void latent_norm_and_up_backward(OpListBuilder& ops, const LayerShape& x, const MlaSizes& z,
                                 const std::string& name, std::int64_t rank, std::int64_t out) {
    column_parallel_backward(ops, x, z.sb, rank, out, name + "_up_proj");
    // Read the input and the output gradient, write the input gradient.
    ops.memory(name + "_norm.bwd", MemoryBoundKind::LayerNorm, 3 * z.local * rank * kActivationBytes);
}

// Bytes of the three tensors the core attention reads: Q and K of d_qk + d_rope per head, V of d_v.
std::int64_t qkv_elements(const MlaSizes& z) {
    return 2 * z.sb * z.q_out + z.sb * z.heads * z.v;
}

}  // namespace

void mla_core_attention_forward(OpListBuilder& ops, const LayerShape& x, bool keep_scores, bool keep_any) {
    const MlaSizes z = mla_sizes(x);
    const std::int64_t batch = z.b * z.heads;
    if (x.flash_attention) {
        // One kernel: QKᵀ over d_qk + d_rope and attention over V of d_v, 2·s²·(d_qk + d_rope + d_v) FLOPs
        // per head before the causal mask (described with k = d_qk + d_rope + d_v, the cost model halves
        // the time for the mask). It keeps Q, K, V and the fp32 log-sum-exp, as the dense layer's kernel.
        const std::int64_t lse = batch * z.s * kFp32Bytes;
        const Bytes saved{(keep_any ? qkv_elements(z) * kActivationBytes : 0) + (keep_scores ? lse : 0)};
        ops.gemm("attn.flash", {z.s, z.s, z.qk + z.v, batch}, saved, GemmClass::FlashForward);
        return;
    }
    ops.gemm("attn.qk", {z.s, z.s, z.qk, batch}, Bytes{keep_any ? 2 * z.sb * z.q_out * kActivationBytes : 0},
             GemmClass::AttentionScore);
    ops.memory("attn.softmax", MemoryBoundKind::ScaleMaskSoftmax, 2 * z.S * kActivationBytes,
               Bytes{keep_scores ? z.S * kActivationBytes : 0});
    ops.memory("attn.dropout", MemoryBoundKind::Dropout, 2 * z.S * kActivationBytes + z.S * kMaskBytes,
               Bytes{keep_scores ? z.S * kMaskBytes : 0});
    const Bytes av_saved{(keep_scores ? z.S * kActivationBytes : 0) +
                         (keep_any ? z.sb * z.heads * z.v * kActivationBytes : 0)};
    ops.gemm("attn.av", {z.s, z.v, z.s, batch}, av_saved, GemmClass::AttentionOverValue);
}

namespace {

// From the latents to Q, K and V: the latent norms and up projections, then the fused RoPE (Megatron's
// qkv_up_proj_and_rope_apply, the part mla_up_proj recomputes). `qkv_saved`: the bytes the RoPE kernels
// keep of what they write (Q; K and V), when a recompute rewrites the core attention's discarded inputs.
void up_projections_and_rope(OpListBuilder& ops, const LayerShape& x, const MlaSizes& z, bool keep_latent,
                             bool keep_up_input, bool qkv_saved) {
    if (z.rq > 0) {
        latent_norm_and_up(ops, x, z, "q", z.rq, z.q_out, keep_latent, keep_up_input);
    }
    latent_norm_and_up(ops, x, z, "kv", z.rkv, z.kv_out, keep_latent, keep_up_input);
    // Fused MLA RoPE: rotate Q's d_rope part in place (read and write Q); read the up projection's
    // k_nope and V and the RoPE key, write K (the key broadcast to the a/t heads) and V.
    const std::int64_t q = z.sb * z.q_out * kActivationBytes;
    const std::int64_t kv = qkv_elements(z) * kActivationBytes - q;
    ops.memory("mla.rope_q", MemoryBoundKind::Generic, 2 * q, Bytes{qkv_saved ? q : 0});
    ops.memory("mla.rope_kv", MemoryBoundKind::Generic,
               (z.sb * z.kv_out + z.sb * z.rope + z.sb * z.q_out + z.sb * z.heads * z.v) * kActivationBytes,
               Bytes{qkv_saved ? kv : 0});
}

}  // namespace

void mla_up_proj_recompute(OpListBuilder& ops, const LayerShape& x) {
    // The latents are the checkpoint's inputs, still held; the up projections' inputs and Q, K, V are
    // written again and kept until the backward ends.
    up_projections_and_rope(ops, x, mla_sizes(x), /*keep_latent=*/false, /*keep_up_input=*/true,
                            /*qkv_saved=*/true);
}

void mla_attention_forward(OpListBuilder& ops, const LayerShape& x, MlaKeep keep) {
    const MlaSizes z = mla_sizes(x);
    // Both down projections (or q_proj and kv_down_proj) read the input norm's output; BF16 keeps it once.
    const Bytes norm_output{keep.norm_output ? z.local * z.h * kActivationBytes : 0};
    if (z.rq > 0) {
        ops.gemm("q_down_proj", {z.local, z.rq, z.h}, norm_output);
    } else {
        sp_gather(ops, x, z, "q_proj.allgather", z.h);
        ops.gemm("q_proj", {z.sb, z.q_out, z.h}, norm_output);
    }
    // Under FP8 each TE linear keeps its own quantized copy of the shared input (fp8_layer.h halves both).
    ops.gemm("kv_down_proj", {z.local, z.rkv + z.rope, z.h}, x.fp8 ? norm_output : Bytes{0});
    // The latent stays on the rank's tokens; the RoPE key is gathered to the whole sequence.
    sp_gather(ops, x, z, "k_pos_emb.allgather", z.rope);
    up_projections_and_rope(ops, x, z, keep.latents, keep.up_projections, /*qkv_saved=*/false);
    mla_core_attention_forward(ops, x, keep.scores, keep.up_projections);
}

void mla_attention_backward(OpListBuilder& ops, const LayerShape& x) {
    const MlaSizes z = mla_sizes(x);
    const std::int64_t batch = z.b * z.heads;
    if (x.flash_attention) {
        // FA2's backward: QKᵀ again, dQ and dK over d_qk + d_rope; dP and dV over d_v (five GEMMs, 2.5×
        // the forward when the head dimensions are equal).
        ops.gemm("attn.flash.bwd", {z.s, z.s, 3 * z.qk + 2 * z.v, batch}, Bytes{0}, GemmClass::FlashBackward);
    } else {
        ops.gemm("attn.av.dgrad_probs", {z.s, z.s, z.v, batch}, Bytes{0}, GemmClass::AttentionScore);
        ops.gemm("attn.av.dgrad_v", {z.s, z.v, z.s, batch}, Bytes{0}, GemmClass::AttentionOverValue);
        ops.memory("attn.dropout.bwd", MemoryBoundKind::Dropout,
                   2 * z.S * kActivationBytes + z.S * kMaskBytes);
        ops.memory("attn.softmax.bwd", MemoryBoundKind::ScaleMaskSoftmax, 3 * z.S * kActivationBytes);
        ops.gemm("attn.qk.dgrad_q", {z.s, z.qk, z.s, batch}, Bytes{0}, GemmClass::AttentionOverValue);
        ops.gemm("attn.qk.dgrad_k", {z.s, z.qk, z.s, batch}, Bytes{0}, GemmClass::AttentionOverValue);
    }
    // RoPE's backward: dK and dV back to the up projection's output gradient and the RoPE key's
    // gradient (summed over the heads); dQ rotated back.
    ops.memory("mla.rope_kv.bwd", MemoryBoundKind::Generic,
               (z.sb * z.q_out + z.sb * z.heads * z.v + z.sb * z.kv_out + z.sb * z.rope) * kActivationBytes);
    ops.memory("mla.rope_q.bwd", MemoryBoundKind::Generic, 2 * z.sb * z.q_out * kActivationBytes);
    latent_norm_and_up_backward(ops, x, z, "kv", z.rkv, z.kv_out);
    if (z.rq > 0) {
        latent_norm_and_up_backward(ops, x, z, "q", z.rq, z.q_out);
    }
    // The gathered RoPE key's gradient goes back to its sequence shards.
    if (sequence_sharded(x)) {
        ops.sync_collective("k_pos_emb.grad_reducescatter", CollectiveKind::ReduceScatter,
                            z.sb * z.rope * kActivationBytes);
    }
    ops.gemm("kv_down_proj.dgrad", {z.local, z.h, z.rkv + z.rope});
    ops.gemm("kv_down_proj.wgrad", {z.rkv + z.rope, z.h, z.local});
    if (z.rq > 0) {
        ops.gemm("q_down_proj.dgrad", {z.local, z.h, z.rq});
        ops.gemm("q_down_proj.wgrad", {z.rq, z.h, z.local});
    } else {
        column_parallel_backward(ops, x, z.sb, z.h, z.q_out, "q_proj");
    }
    // The two projections' input gradients meet at the norm's output: read both, write one.
    ops.memory("mla.input_grad_add", MemoryBoundKind::Generic, 3 * z.local * z.h * kActivationBytes);
}

std::int64_t mla_attention_parameters_per_rank(const LayerShape& x) {
    const MlaSizes z = mla_sizes(x);
    const auto norm = [&x](std::int64_t width) { return x.rmsnorm ? width : 2 * width; };
    const std::int64_t q = z.rq > 0 ? z.h * z.rq + norm(z.rq) + z.rq * z.q_out : z.h * z.q_out;
    const std::int64_t kv = z.h * (z.rkv + z.rope) + norm(z.rkv) + z.rkv * z.kv_out;
    const std::int64_t proj = z.heads * z.v * z.h + (x.bias ? z.h : 0);
    return q + kv + proj;
}

}  // namespace trainsim::workload
