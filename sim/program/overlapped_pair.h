// DualPipe's overlapped F&B chunk pair: the order in which the forward chunk's and the backward chunk's
// ops go onto one GPU's streams so that each one's expert all-to-alls run beside the other's compute.
//
// dualpipe.py hands a pair to the module's overlapped_forward_backward; DeepSeek-V3 (§3.2.1, Figure 4)
// cuts each chunk into attention, dispatch, MLP and combine and interleaves the two chunks' pieces.
// Megatron-Core implements the same per-layer order for its EP overlap
// (megatron/core/models/common/model_chunk_schedule_plan.py, TransformerLayerSchedulePlan.run):
//   comm stream:    combine_bwd | dispatch_fwd  dispatch_bwd | combine_fwd
//   compute stream: attn_fwd    | mlp_bwd  mlp_bwd_dw  mlp_fwd | attn_bwd  attn_bwd_dw
// that is: the backward's combine, the forward's attention (to its dispatch), the backward's MLP (to
// its dispatch), the forward's MLP (to its combine), the backward's attention, and so on, layer i of
// the forward beside layer n − 1 − i of the backward, the backward's output-layer work first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/workload/op.h"

namespace trainsim::program {

enum class PairChain : std::uint8_t { Forward, Backward };

/// Ops [begin, end) of list `item` of one chain (the lists in the order the chain lowers them).
struct PairSpan {
    PairChain chain = PairChain::Forward;
    std::size_t item = 0;
    std::size_t begin = 0, end = 0;
    friend bool operator==(const PairSpan&, const PairSpan&) = default;
};

/// Whether op `op` is one of the expert all-to-alls (or the allgather dispatcher's collectives) that the
/// pair hides.
[[nodiscard]] bool is_expert_exchange(const workload::Op& op);

/// The pair's lowering order. Each chain is cut into pieces, a piece ending with a run of expert
/// exchanges (so a piece is the compute that produces a dispatch or combine, and that exchange); the
/// pieces are lowered alternately, the backward's first, each chain's remainder once the other has
/// none. Without any expert exchange (dense layers, no expert parallelism) there is nothing to hide,
/// and the pair runs as dualpipe.py runs a module without overlapped_forward_backward: the forward, then
/// the backward.
[[nodiscard]] std::vector<PairSpan> overlapped_pair_order(std::span<const workload::OpList* const> forward,
                                                          std::span<const workload::OpList* const> backward);

}  // namespace trainsim::program
