#include "sim/parallel/expert_layout.h"

namespace trainsim::parallel {

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
