// The GPT transformer layer as Megatron-LM runs it, per tensor-parallel rank and micro-batch:
// op lists for the forward, the backward and the recompute, with tensor-parallel communication where
// Megatron puts it (papers.md §1.11) and the saved tensors of Korthikanti §4.1.
#pragma once

#include "sim/config/scenario.h"
#include "sim/workload/layer_shape.h"
#include "sim/workload/op.h"

namespace trainsim::workload {

/// Forward of one layer: LN, QKV, core attention (QKᵀ, scale-mask-softmax, dropout, attention over V),
/// projection, bias-dropout-add, LN, fc1, bias-GeLU, fc2, bias-dropout-add. Without SP each
/// row-parallel GEMM is followed by a synchronous all-reduce; with SP each column-parallel GEMM is
/// preceded by an all-gather and each row-parallel GEMM followed by a reduce-scatter. `saved_bytes`
/// follow the recompute policy (what the layer keeps for its backward).
[[nodiscard]] OpList layer_forward(const LayerShape& shape, config::RecomputeGranularity recompute);

/// Backward of one layer, input-gradient (dgrad) and weight-gradient (wgrad) GEMMs separate. Without
/// SP the dgrad all-reduce of each column-parallel GEMM runs asynchronously under its wgrad GEMM; with
/// SP the input all-gather runs under the dgrad GEMM and the dgrad reduce-scatter under the wgrad GEMM.
/// With `Selective`, the core attention is recomputed just before its backward (Megatron's
/// checkpointed core attention). With `Full`, the whole forward runs again first (its collectives
/// synchronous, as in any forward: the overlap the backward enjoys is not available to it).
[[nodiscard]] OpList layer_backward(const LayerShape& shape, config::RecomputeGranularity recompute);

/// The recomputed forward of full recomputation alone (ops marked is_recompute). It keeps what a
/// forward without recompute keeps, except, when `input_is_checkpoint`, the layer input: the
/// checkpoint already holds it (the first layer of a checkpointed group).
[[nodiscard]] OpList layer_full_recompute(const LayerShape& shape, bool input_is_checkpoint = true);

/// The forward of a layer inside a checkpointed group of several layers (Megatron's uniform method with
/// recompute_num_layers > 1) other than the first: it keeps nothing.
[[nodiscard]] OpList layer_forward_unsaved(const LayerShape& shape);

/// The recomputed core attention of selective recompute alone (QKᵀ, softmax, dropout, attention over V,
/// marked is_recompute; they keep the b·a·s² tensors until the backward frees them).
[[nodiscard]] OpList layer_selective_recompute(const LayerShape& shape);

/// Bytes one layer keeps for its backward, Korthikanti Table 2 (the sum of the forward's saved_bytes).
[[nodiscard]] Bytes layer_activation_bytes(const LayerShape& shape, config::RecomputeGranularity recompute);

}  // namespace trainsim::workload
