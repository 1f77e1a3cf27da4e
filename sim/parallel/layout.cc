#include "sim/parallel/layout.h"

#include <algorithm>

namespace trainsim::parallel {

Layout::Layout(const config::Scenario& sc)
    : t_(sc.parallelism.tensor_model_parallel_size), c_(sc.parallelism.context_parallel_size),
      d_(sc.parallelism.data_parallel_size), p_(sc.parallelism.pipeline_model_parallel_size),
      gpus_per_node_(sc.hardware.gpus_per_node) {}

Coordinates Layout::coordinates(std::int64_t rank) const {
    Coordinates c;
    c.tp = rank % t_;
    c.cp = (rank / t_) % c_;
    c.dp = (rank / (t_ * c_)) % d_;
    c.pp = rank / (t_ * c_ * d_);
    return c;
}

// Nodes hold consecutive ranks, so a rank's node never decreases along the sequence: with a stride of at
// least a node every rank is on a new node; with a smaller one each step moves at most one node on, so no
// node in between is skipped.
std::int64_t nodes_spanned(std::int64_t first, std::int64_t stride, std::int64_t count,
                           std::int64_t per_node) {
    if (stride >= per_node) {
        return count;
    }
    return (first + (count - 1) * stride) / per_node - first / per_node + 1;
}

GroupSpan Layout::tensor_group(const Coordinates& c) const {
    const std::int64_t first = global_rank({0, c.dp, c.pp, c.cp});
    return {t_, nodes_spanned(first, 1, t_, gpus_per_node_)};
}

GroupSpan Layout::data_group(const Coordinates& c) const {
    // cp and dp are adjacent in the rank order: the c·d members are t apart.
    const std::int64_t first = global_rank({c.tp, 0, c.pp, 0});
    return {c_ * d_, nodes_spanned(first, t_, c_ * d_, gpus_per_node_)};
}

GroupSpan Layout::context_group(const Coordinates& c) const {
    const std::int64_t first = global_rank({c.tp, c.dp, c.pp, 0});
    return {c_, nodes_spanned(first, t_, c_, gpus_per_node_)};
}

GroupSpan Layout::context_ring_hop(const Coordinates& c) const {
    if (c_ == 1) {
        return {1, 1};
    }
    return {2, context_group(c).nodes > 1 ? 2 : 1};
}

GroupSpan Layout::model_parallel_group(const Coordinates& c) const {
    // One block of t consecutive ranks per stage, blocks t·c·d apart: the union of each block's node
    // interval, counted in stage order (the intervals only move up, so a block shares nodes only with
    // the one before it).
    std::int64_t nodes = 0;
    std::int64_t previous_last = -1;
    for (std::int64_t pp = 0; pp < p_; ++pp) {
        const std::int64_t base = global_rank({0, c.dp, pp, c.cp});
        const std::int64_t first = std::max(node_of(base), previous_last + 1);
        const std::int64_t last = node_of(base + t_ - 1);
        nodes += std::max<std::int64_t>(0, last - first + 1);
        previous_last = std::max(previous_last, last);
    }
    return {t_ * p_, nodes};
}

GroupSpan Layout::embedding_group(const Coordinates& c) const {
    return pair({c.tp, c.dp, 0, c.cp}, {c.tp, c.dp, p_ - 1, c.cp});
}

GroupSpan Layout::stage_copy_group(const Coordinates& c) const {
    return pair(c, {c.tp, c.dp, p_ - 1 - c.pp, c.cp});
}

GroupSpan Layout::pair(const Coordinates& a, const Coordinates& b) const {
    const bool same = node_of(global_rank(a)) == node_of(global_rank(b));
    return {2, same ? 1 : 2};
}

}  // namespace trainsim::parallel
