// The parallel layout: Megatron-LM's rank order and where each process group's traffic goes.
//
// Megatron's default order (`--rank-ordering`'s default "tp-cp-ep-dp-pp", RankGenerator in
// megatron/core/parallel_state.py) puts tensor-parallel peers innermost, then context-parallel ranks,
// then data-parallel replicas, then pipeline stages: global rank = tp + t·(cp + c·(dp + d·pp)). Nodes
// hold consecutive ranks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "sim/config/scenario.h"
#include "sim/cost/cost_model.h"

namespace trainsim::parallel {

/// Coordinates of one GPU in the layout.
struct Coordinates {
    std::int64_t tp = 0;
    std::int64_t dp = 0;
    std::int64_t pp = 0;
    std::int64_t cp = 0;  // last, so that {tp, dp, pp} still names a GPU of a layout without CP
    friend bool operator==(const Coordinates&, const Coordinates&) = default;
};

/// How far a group's members are spread: their count, and how many nodes they occupy.
struct GroupSpan {
    std::int64_t size = 1;
    std::int64_t nodes = 1;
    friend bool operator==(const GroupSpan&, const GroupSpan&) = default;
    [[nodiscard]] cost::Scope scope() const {
        return nodes > 1 ? cost::Scope::InterNode : cost::Scope::IntraNode;
    }
};

/// Nodes spanned by `count` ≥ 1 ranks starting at `first` with a fixed stride, nodes holding
/// `per_node` consecutive ranks each (closed form: it runs for every priced op of every simulated GPU).
[[nodiscard]] std::int64_t nodes_spanned(std::int64_t first, std::int64_t stride, std::int64_t count,
                                         std::int64_t per_node);

class Layout {
public:
    explicit Layout(const config::Scenario& scenario);

    [[nodiscard]] std::int64_t tensor_size() const { return t_; }
    [[nodiscard]] std::int64_t data_size() const { return d_; }
    [[nodiscard]] std::int64_t pipeline_size() const { return p_; }
    [[nodiscard]] std::int64_t context_size() const { return c_; }
    [[nodiscard]] std::int64_t world_size() const { return t_ * c_ * d_ * p_; }
    [[nodiscard]] std::int64_t gpus_per_node() const { return gpus_per_node_; }

    [[nodiscard]] std::int64_t global_rank(const Coordinates& c) const {
        return c.tp + t_ * (c.cp + c_ * (c.dp + d_ * c.pp));
    }
    [[nodiscard]] Coordinates coordinates(std::int64_t rank) const;
    [[nodiscard]] std::int64_t node_of(std::int64_t rank) const { return rank / gpus_per_node_; }

    /// The tensor-parallel group of `c` (varying tp), its data-parallel group (varying dp and cp: the
    /// ranks that reduce gradients together, Megatron's data-parallel group with context parallelism),
    /// its context-parallel group (varying cp), and the model-parallel group (varying tp and pp: the
    /// gradient-norm all-reduce).
    [[nodiscard]] GroupSpan tensor_group(const Coordinates& c) const;
    [[nodiscard]] GroupSpan data_group(const Coordinates& c) const;
    [[nodiscard]] GroupSpan context_group(const Coordinates& c) const;
    /// One hop of the context-parallel ring (rank cp sends to cp + 1 mod c): the worst hop of the
    /// ring, since every step waits for all of them (across nodes when the group spans nodes).
    [[nodiscard]] GroupSpan context_ring_hop(const Coordinates& c) const;
    [[nodiscard]] GroupSpan model_parallel_group(const Coordinates& c) const;
    /// First and last pipeline stage at the same (tp, dp): the tied word-embedding gradient.
    [[nodiscard]] GroupSpan embedding_group(const Coordinates& c) const;
    /// DualPipe: `c` and the GPU at pipeline rank p − 1 − pp, which holds the same two stages of the
    /// other model copy (the gradient sum of the copies).
    [[nodiscard]] GroupSpan stage_copy_group(const Coordinates& c) const;
    /// The two pipeline ranks of `pp`'s DualPipe copy pair, the lower first, so that both ranks of a
    /// pair name it alike (its rendezvous, its flow).
    [[nodiscard]] std::pair<std::int64_t, std::int64_t> stage_copy_ranks(std::int64_t pp) const {
        return {std::min(pp, p_ - 1 - pp), std::max(pp, p_ - 1 - pp)};
    }
    /// A point-to-point transfer between two GPUs.
    [[nodiscard]] GroupSpan pair(const Coordinates& a, const Coordinates& b) const;

private:
    std::int64_t t_, c_, d_, p_, gpus_per_node_;
};

}  // namespace trainsim::parallel
