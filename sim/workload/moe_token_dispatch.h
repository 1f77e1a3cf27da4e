// How tokens reach their experts and come back: Megatron-Core's token dispatchers
// (megatron/core/transformer/moe/token_dispatcher.py), as the ops of one rank and micro-batch.
//
// alltoall (MoEAlltoAllTokenDispatcher): permute the T local tokens into R = T·k copies grouped by
// expert, all-to-all them over the EP group, and back after the experts, then unpermute. With expert
// tensor parallelism (etp > 1) the received copies are all-gathered over the expert-TP group before the
// experts (with their probs) and the experts' partial outputs reduce-scattered back before the combine
// all-to-all (dispatch_postprocess, combine_preprocess); the tokens-per-expert gather runs over tp_ep.
//
// allgather (MoEAllGatherTokenDispatcher, Megatron's default): all-gather the routing map, the probs and
// the hidden states over the tp_ep group (expert tensor × expert model parallel, etp·ep ranks), so every
// rank holds the group's G = ETP·EP·T tokens; permute out
// the copies routed to its local experts; after them unpermute into a G-row buffer (zero where no local
// expert was chosen) and reduce-scatter it back over the same group, summing each token's k outputs.
// The backward mirrors it: the reduce-scatter's backward is an all-gather of the output gradient, the
// all-gathers' backward reduce-scatters of the hidden and the probs gradients (the routing map is
// gathered under no_grad).
//
// With moe_shared_expert_overlap (alltoall only) the dispatcher calls the shared expert's pieces around
// its exchanges (`shared`, shared_expert.h), and the exchanges run on NCCL's stream (use_nccl_stream):
// the shared expert's compute does not wait for them, and the routed op after them does (handle.wait()).
#pragma once

#include <string_view>

#include "sim/workload/layer_shape.h"
#include "sim/workload/moe_sizes.h"
#include "sim/workload/op_list_builder.h"
#include "sim/workload/shared_expert.h"

namespace trainsim::workload {

/// The alltoall dispatcher's exchange of per-expert token counts (MoEAlltoAllTokenDispatcher.preprocess):
/// counts, not tokens, issued with the router's work on the compute stream, so DualPipe's overlapped
/// pairs do not cut a chunk there (overlapped_pair.cc), as Megatron-Core's schedule plan keeps it in the
/// attention node.
inline constexpr std::string_view kTokensPerExpertGather = "moe.dispatch.tokens_per_expert.allgather";

/// From the router's output to the local experts' input: permute and dispatch, with the dispatcher's
/// host synchronisation (Op::host_waits_for): the alltoall dispatcher's CPU reads the split sizes at its
/// cuda_sync_point (token_dispatcher.py, _maybe_dtoh_and_synchronize: before permutation 1 when tokens
/// are dropped, else before the all-to-all with EP, else before the experts; never under
/// drop-and-pad), the allgather dispatcher's before its permute (tokens_per_expert .cpu()). Returns the
/// op the CPU still waits for before it issues the experts' first op, or -1. `keep`: the permute keeps its
/// index maps (false under full recompute and the moe module's).
[[nodiscard]] std::int32_t moe_dispatch_forward(OpListBuilder& ops, const LayerShape& x, const MoeSizes& z,
                                                bool keep, OverlappedSharedExpert* shared = nullptr);

/// From the local experts' output to this rank's tokens: combine and unpermute (which keeps nothing of
/// its own: the permute's row_id_map serves it).
void moe_combine_forward(OpListBuilder& ops, const LayerShape& x, const MoeSizes& z,
                         OverlappedSharedExpert* shared = nullptr);

/// The combine's backward: from the MoE output's gradient to the local experts' output gradient.
void moe_combine_backward(OpListBuilder& ops, const LayerShape& x, const MoeSizes& z,
                          OverlappedSharedExpert* shared = nullptr);

/// The dispatch's backward: from the local experts' input gradient to this rank's tokens' gradient.
void moe_dispatch_backward(OpListBuilder& ops, const LayerShape& x, const MoeSizes& z,
                           OverlappedSharedExpert* shared = nullptr);

}  // namespace trainsim::workload
