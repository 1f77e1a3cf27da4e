#include "sim/parallel/layout.h"

#include <set>

namespace trainsim::parallel {

Layout::Layout(const config::Scenario& sc)
    : t_(sc.parallelism.tensor_model_parallel_size), d_(sc.parallelism.data_parallel_size),
      p_(sc.parallelism.pipeline_model_parallel_size), gpus_per_node_(sc.hardware.gpus_per_node) {}

Coordinates Layout::coordinates(std::int64_t rank) const {
    Coordinates c;
    c.tp = rank % t_;
    c.dp = (rank / t_) % d_;
    c.pp = rank / (t_ * d_);
    return c;
}

namespace {

// Nodes spanned by `count` ranks starting at `first` with a fixed stride. Counted directly: groups are
// at most a few thousand members and this runs once per group kind, not per event.
std::int64_t nodes_spanned(std::int64_t first, std::int64_t stride, std::int64_t count,
                           std::int64_t per_node) {
    std::set<std::int64_t> nodes;
    for (std::int64_t i = 0; i < count; ++i) {
        nodes.insert((first + i * stride) / per_node);
    }
    return static_cast<std::int64_t>(nodes.size());
}

}  // namespace

GroupSpan Layout::tensor_group(const Coordinates& c) const {
    const std::int64_t first = global_rank({0, c.dp, c.pp});
    return {t_, nodes_spanned(first, 1, t_, gpus_per_node_)};
}

GroupSpan Layout::data_group(const Coordinates& c) const {
    const std::int64_t first = global_rank({c.tp, 0, c.pp});
    return {d_, nodes_spanned(first, t_, d_, gpus_per_node_)};
}

GroupSpan Layout::model_parallel_group(const Coordinates& c) const {
    std::set<std::int64_t> nodes;
    for (std::int64_t pp = 0; pp < p_; ++pp) {
        for (std::int64_t tp = 0; tp < t_; ++tp) {
            nodes.insert(node_of(global_rank({tp, c.dp, pp})));
        }
    }
    return {t_ * p_, static_cast<std::int64_t>(nodes.size())};
}

GroupSpan Layout::embedding_group(const Coordinates& c) const {
    return pair({c.tp, c.dp, 0}, {c.tp, c.dp, p_ - 1});
}

GroupSpan Layout::pair(const Coordinates& a, const Coordinates& b) const {
    const bool same = node_of(global_rank(a)) == node_of(global_rank(b));
    return {2, same ? 1 : 2};
}

}  // namespace trainsim::parallel
