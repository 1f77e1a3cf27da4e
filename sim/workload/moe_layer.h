// The mixture-of-experts MLP as Megatron-Core's MoELayer runs it (megatron/core/transformer/moe:
// router.py, token_dispatcher.py, experts.py GroupedMLP), per rank and micro-batch: router GEMM and
// top-k, the token dispatch (all-to-all or all-gather, moe_token_dispatch.h), the local experts' grouped
// GEMMs, the combine; and the backward's mirror. It replaces the dense MLP between the second norm and
// the residual add.
//
// Modelled: expert tensor parallelism (each rank a 1/etp slice of its local experts' MLP width on the
// expert-TP group's routed copies, moe_sizes.h), dropless routing, balanced (every expert receives T·k/N of
// the group's routed tokens, as the published benchmarks force it) or skewed (moe_load_skew), the shared
// expert as a tensor-parallel dense MLP after the routed ones (or, with moe_shared_expert_overlap, beside
// the dispatch and combine all-to-alls: shared_expert.h), no expert biases; BF16 or FP8. Under FP8
// (fp8_layer.h) the routed experts' grouped GEMMs (TE GroupedLinear) and the shared expert's linears run
// in FP8 with TE's quantize kernels, each expert's rows padded to the FP8 alignment (moe_sizes.h); the
// router's GEMM and top-k stay BF16 (moe/router.py), and the dispatch/combine exchange BF16 tokens (the
// alltoall and allgather dispatchers have no FP8 path: transformer_config.py's moe_dispatch_fwd_dtype
// = "mxfp8" needs the ncclep flex dispatcher). parameter_count.cc's layer_shape_of refuses the rest with
// one line.
#pragma once

#include "sim/workload/layer_shape.h"
#include "sim/workload/op_list_builder.h"
#include "sim/workload/selective_recompute.h"

namespace trainsim::workload {

/// What the MoE MLP's forward keeps for its backward: everything (`all`), nothing under full recompute,
/// or what selective recompute's modules leave (`under`).
struct MoeKeep {
    bool input = true;       // the norm's output the router and the shared expert read
    bool routed = true;      // the router's probabilities, the experts' and the combine's tensors
    bool act_output = true;  // the experts' activation output, fc2's input (moe_act drops it)
    bool shared = true;      // the shared expert's own tensors

    [[nodiscard]] static MoeKeep all() { return {}; }
    [[nodiscard]] static MoeKeep nothing() { return {false, false, false, false}; }
    /// The forward's keep under selective recompute of `r`'s modules: moe keeps only its input (the
    /// checkpoint's), layernorm drops that input, moe_act the activation output, shared_experts the
    /// shared expert's tensors.
    [[nodiscard]] static MoeKeep under(const SelectiveRecompute& r);
};

/// The MoE MLP's forward ops appended to `ops`.
void moe_mlp_forward(OpListBuilder& ops, const LayerShape& x, MoeKeep keep);

/// The MoE MLP's backward ops appended to `ops`, from the output gradient to the input gradient; the
/// modules `r` recomputes run forward again (is_recompute) where their backward needs them: the whole
/// MLP (moe) or the shared expert first, the experts' activation (moe_act) before fc2's backward.
void moe_mlp_backward(OpListBuilder& ops, const LayerShape& x, const SelectiveRecompute& r);

/// Parameters of the num_experts/EP local experts of one MoE MLP on one rank (without the router).
[[nodiscard]] std::int64_t moe_expert_parameters_per_rank(const LayerShape& x);

/// Parameters of one MoE MLP on one rank: the router (replicated) and the num_experts/EP local experts.
[[nodiscard]] std::int64_t moe_mlp_parameters_per_rank(const LayerShape& x);

}  // namespace trainsim::workload
