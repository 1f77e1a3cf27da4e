#include "sim/parallel/expert_layout.h"

namespace trainsim::parallel {

namespace {

// Nodes spanned by `count` ranks from `first` with a fixed stride; nodes hold consecutive ranks (the
// same closed form as layout.cc's).
std::int64_t nodes_spanned(std::int64_t first, std::int64_t stride, std::int64_t count,
                           std::int64_t per_node) {
    if (stride >= per_node) {
        return count;
    }
    return (first + (count - 1) * stride) / per_node - first / per_node + 1;
}

}  // namespace

ExpertLayout::ExpertLayout(const config::Scenario& sc)
    : etp_(sc.parallelism.expert_tensor_parallel()), ep_(sc.parallelism.expert_model_parallel_size),
      edp_(sc.parallelism.expert_data_parallel_size()), gpus_per_node_(sc.hardware.gpus_per_node) {}

ExpertCoordinates ExpertLayout::coordinates(std::int64_t rank) const {
    ExpertCoordinates c;
    c.etp = rank % etp_;
    c.ep = (rank / etp_) % ep_;
    c.edp = (rank / (etp_ * ep_)) % edp_;
    c.pp = rank / (etp_ * ep_ * edp_);
    return c;
}

GroupSpan ExpertLayout::expert_parallel_group(std::int64_t rank) const {
    ExpertCoordinates c = coordinates(rank);
    c.ep = 0;
    return {ep_, nodes_spanned(global_rank(c), etp_, ep_, gpus_per_node_)};
}

GroupSpan ExpertLayout::expert_data_group(std::int64_t rank) const {
    ExpertCoordinates c = coordinates(rank);
    c.edp = 0;
    return {edp_, nodes_spanned(global_rank(c), etp_ * ep_, edp_, gpus_per_node_)};
}

}  // namespace trainsim::parallel
