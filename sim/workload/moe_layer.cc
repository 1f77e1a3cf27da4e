#include "sim/workload/moe_layer.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/workload/element_bytes.h"
#include "sim/workload/moe_sizes.h"
#include "sim/workload/moe_token_dispatch.h"
#include "sim/workload/shared_expert.h"

namespace trainsim::workload {
namespace {

using cost::CollectiveKind;
using cost::GemmClass;
using cost::MemoryBoundKind;
using cost::TokenDim;

std::string expert_activation_name(const LayerShape& x) {
    return x.swiglu ? "experts.swiglu" : "experts.gelu";
}

// The experts' activation: reads fc1's output (f_in wide) and writes f per row, each row weighted by its
// routing probability (experts.py bias_act_func with permuted_probs, e.g. weighted_bias_swiglu_impl).
void expert_activation(OpListBuilder& ops, const LayerShape& x, const MoeSizes& z, Bytes saved) {
    ops.memory(expert_activation_name(x), MemoryBoundKind::BiasGelu, z.R_pad * (z.f_in + z.f) * kActivationBytes,
               saved);
}

// What the experts' activation keeps: its input (fc1's output) and the permuted probabilities it weights
// the rows by (fused_bias_swiglu.py WeightedSwiGLUFunction: save_for_backward(input, weights)), both
// padded under FP8 (experts.py pads permuted_probs with the tokens).
std::int64_t expert_activation_saved(const MoeSizes& z) {
    return z.R_pad * (z.f_in * kActivationBytes + kProbBytes);
}

}  // namespace

MoeKeep MoeKeep::under(const SelectiveRecompute& r) {
    MoeKeep keep;
    keep.input = !r.pre_mlp_norm;
    keep.routed = !r.moe;
    keep.act_output = keep.routed && !r.moe_act;
    keep.shared = !r.moe && !r.shared_experts;
    return keep;
}

void moe_mlp_forward(OpListBuilder& ops, const LayerShape& x, MoeKeep keep) {
    const MoeSizes z = moe_sizes(x);
    auto saved = [routed = keep.routed](std::int64_t bytes) { return Bytes{routed ? bytes : 0}; };
    // Router: logits = x·Wᵀ (h → N), keeping x, the pre-MLP norm's output (moe_utils.py
    // RouterGatingLinearFunction); then the score function and top-k (read the logits, write the
    // probabilities). TE's fused top-k (moe_router_fusion, as Megatron-MoE-ModelZoo's DeepSeek-V3 and
    // Qwen3 configs run it) keeps the scores in FP32 and the routing map, [T, N] each (TE router.py
    // FusedTopkScoreFunction; csrc/extensions/router.cpp allocates intermediate_output kFloat).
    ops.gemm("router", {z.T, z.n, z.h}, Bytes{keep.input ? z.T * z.h * kActivationBytes : 0});
    ops.memory("router.softmax_topk", MemoryBoundKind::Generic, 2 * z.T * z.n * kActivationBytes,
               saved(z.T * z.n * (kFp32Bytes + kRouteBytes)));
    // moe_shared_expert_overlap: the dispatcher runs the shared expert's pieces beside its all-to-alls.
    OverlappedSharedExpert overlapped(x, keep.shared);
    OverlappedSharedExpert* beside = x.shared_expert_overlap ? &overlapped : nullptr;
    const std::int32_t host_wait = moe_dispatch_forward(ops, x, z, keep.routed, beside);
    const std::int32_t first_expert_op = ops.next_index();
    if (z.R_pad != z.R_max) {
        // Fp8Padding (TE's fused_multi_row_padding): read the R_max rows, write them and the zero rows.
        ops.memory("experts.fp8_padding", MemoryBoundKind::Generic,
                   (z.R_max + z.R_pad) * z.h * kActivationBytes);
    }
    // TEGroupedMLP: one GEMM per local expert on its own rows (cost::GroupedGemm), padded under FP8.
    ops.grouped_gemm("experts.fc1", {z.rows, z.f_in, z.h, z.L}, expert_gemms(z, TokenDim::M),
                     saved(z.R_pad * z.h * kActivationBytes));
    if (host_wait >= 0) {
        ops.set_host_wait(first_expert_op, host_wait);  // the CPU reads tokens_per_expert before the experts
    }
    expert_activation(ops, x, z, saved(expert_activation_saved(z)));
    ops.grouped_gemm("experts.fc2", {z.rows, z.h, z.f, z.L}, expert_gemms(z, TokenDim::M),
                     Bytes{keep.act_output ? z.R_pad * z.f * kActivationBytes : 0});
    if (z.R_pad != z.R_max) {
        // Fp8Unpadding: copy each expert's R_max real rows out of the padded output (read and write them).
        ops.memory("experts.fp8_unpadding", MemoryBoundKind::Generic, 2 * z.R_max * z.h * kActivationBytes);
    }
    moe_combine_forward(ops, x, z, beside);
    if (beside != nullptr) {
        beside->get_output(ops);
    } else if (x.shared_ffn > 0) {
        shared_expert_forward(ops, x, keep.shared, keep.shared && x.fp8 == config::Fp8Recipe::Delayed);
        shared_expert_output_add(ops, x);
    }
}

void moe_mlp_backward(OpListBuilder& ops, const LayerShape& x, const SelectiveRecompute& r) {
    const MoeSizes z = moe_sizes(x);
    // Megatron's checkpoints re-run their forward when the gradient reaches them; what they recompute
    // is kept until this backward ends. The checkpoint's input (the norm's output) is held already.
    ops.set_recompute(true);
    if (r.moe) {
        // Inside the checkpoint the other modules' own recompute applies again (moe_act, shared_experts).
        moe_mlp_forward(ops, x, MoeKeep{false, true, !r.moe_act, !r.shared_experts});
    }
    if (r.shared_experts) {
        shared_expert_forward(ops, x, /*keep=*/true, /*fc1_fp8_copy=*/x.fp8.has_value());
    }
    ops.set_recompute(false);
    OverlappedSharedExpert overlapped(x, /*keep=*/true);
    OverlappedSharedExpert* beside = x.shared_expert_overlap ? &overlapped : nullptr;
    if (x.shared_ffn > 0 && beside == nullptr) {
        shared_expert_backward(ops, x);
    }
    moe_combine_backward(ops, x, z, beside);
    if (z.R_pad != z.R_max) {
        // Fp8Unpadding's backward pads the output gradient back (read R_max rows, write R_pad).
        ops.memory("experts.fp8_unpadding.bwd", MemoryBoundKind::Generic,
                   (z.R_max + z.R_pad) * z.h * kActivationBytes);
    }
    if (r.moe_act) {
        // CheckpointWithoutOutput's hook on fc2's output: the activation runs again and rewrites fc2's
        // input (experts.py), kept until fc2's weight gradient.
        ops.set_recompute(true);
        expert_activation(ops, x, z, Bytes{z.R_pad * z.f * kActivationBytes});
        ops.set_recompute(false);
    }
    ops.grouped_gemm("experts.fc2.dgrad", {z.rows, z.f, z.h, z.L}, expert_gemms(z, TokenDim::M));
    ops.grouped_gemm("experts.fc2.wgrad", {z.f, z.h, z.rows, z.L}, expert_gemms(z, TokenDim::K));
    ops.memory(expert_activation_name(x) + ".bwd", MemoryBoundKind::BiasGelu,
               z.R_pad * (z.f + 2 * z.f_in) * kActivationBytes);
    ops.grouped_gemm("experts.fc1.dgrad", {z.rows, z.h, z.f_in, z.L}, expert_gemms(z, TokenDim::M));
    ops.grouped_gemm("experts.fc1.wgrad", {z.h, z.f_in, z.rows, z.L}, expert_gemms(z, TokenDim::K));
    if (z.R_pad != z.R_max) {
        // Fp8Padding's backward drops the padding rows' gradient (read and write the R_max real rows).
        ops.memory("experts.fp8_padding.bwd", MemoryBoundKind::Generic, 2 * z.R_max * z.h * kActivationBytes);
    }
    moe_dispatch_backward(ops, x, z, beside);
    // Softmax backward: read the probabilities and their gradient, write the logits' gradient.
    ops.memory("router.softmax_topk.bwd", MemoryBoundKind::Generic, 3 * z.T * z.n * kActivationBytes);
    ops.gemm("router.dgrad", {z.T, z.h, z.n});
    ops.gemm("router.wgrad", {z.h, z.n, z.T});
    // The router's input gradient and the permuted tokens' meet at the norm's output: read both, write one.
    ops.memory("moe.input_grad_add", MemoryBoundKind::Generic, 3 * z.T * z.h * kActivationBytes);
    if (beside != nullptr) {
        beside->input_grad(ops);
    } else if (x.shared_ffn > 0) {
        shared_expert_input_grad_add(ops, x);
    }
}

std::int64_t moe_expert_parameters_per_rank(const LayerShape& x) {
    const MoeSizes z = moe_sizes(x);
    return z.L * (z.h * z.f_in + z.f * z.h);
}

std::int64_t moe_mlp_parameters_per_rank(const LayerShape& x) {
    const std::int64_t router = x.hidden * x.experts;  // replicated, reduced over DP with the dense weights
    // The shared expert is split over the t ranks and reduced over DP like the dense MLP.
    const std::int64_t shared_local = x.shared_ffn / x.tp;
    const std::int64_t shared = x.hidden * (x.swiglu ? 2 : 1) * shared_local + shared_local * x.hidden;
    return router + shared + moe_expert_parameters_per_rank(x);
}

}  // namespace trainsim::workload
