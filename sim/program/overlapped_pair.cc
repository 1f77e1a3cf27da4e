#include "sim/program/overlapped_pair.h"

#include <algorithm>

#include "sim/workload/moe_token_dispatch.h"

namespace trainsim::program {

bool is_expert_exchange(const workload::Op& op) {
    // The all-to-alls, or the allgather dispatcher's tp_ep collectives: Megatron-Core's dispatch and
    // combine nodes. The expert-TP all-gather and reduce-scatter run inside the experts' node
    // (dispatch_postprocess and combine_preprocess, in MoELayer.routed_experts_compute).
    const bool exchange_group =
        op.group == workload::CommGroup::Expert || op.group == workload::CommGroup::ExpertTensorAndModel;
    return op.kind == workload::OpKind::Collective && exchange_group &&
           op.name != workload::kTokensPerExpertGather;
}

namespace {

using Piece = std::vector<PairSpan>;

// A chain's pieces: its spans cut after each run of expert exchanges.
std::vector<Piece> pieces_of(PairChain chain, std::span<const workload::OpList* const> lists) {
    std::vector<Piece> pieces(1);
    for (std::size_t item = 0; item < lists.size(); ++item) {
        const workload::OpList& ops = *lists[item];
        std::size_t begin = 0;
        for (std::size_t i = 0; i < ops.size(); ++i) {
            const bool run_ends =
                is_expert_exchange(ops[i]) && (i + 1 == ops.size() || !is_expert_exchange(ops[i + 1]));
            if (run_ends) {
                pieces.back().push_back({chain, item, begin, i + 1});
                pieces.emplace_back();
                begin = i + 1;
            }
        }
        if (begin < ops.size()) {
            pieces.back().push_back({chain, item, begin, ops.size()});
        }
    }
    if (pieces.back().empty()) {
        pieces.pop_back();
    }
    return pieces;
}

bool exchanges(std::span<const workload::OpList* const> lists) {
    return std::any_of(lists.begin(), lists.end(), [](const workload::OpList* ops) {
        return std::any_of(ops->begin(), ops->end(), is_expert_exchange);
    });
}

}  // namespace

std::vector<PairSpan> overlapped_pair_order(std::span<const workload::OpList* const> forward,
                                            std::span<const workload::OpList* const> backward) {
    const std::vector<Piece> f = pieces_of(PairChain::Forward, forward);
    const std::vector<Piece> b = pieces_of(PairChain::Backward, backward);
    std::vector<PairSpan> order;
    auto append = [&order](const Piece& piece) { order.insert(order.end(), piece.begin(), piece.end()); };
    if (!exchanges(forward) && !exchanges(backward)) {
        std::for_each(f.begin(), f.end(), append);
        std::for_each(b.begin(), b.end(), append);
        return order;
    }
    for (std::size_t k = 0; k < std::max(f.size(), b.size()); ++k) {
        if (k < b.size()) {
            append(b[k]);
        }
        if (k < f.size()) {
            append(f[k]);
        }
    }
    return order;
}

}  // namespace trainsim::program
