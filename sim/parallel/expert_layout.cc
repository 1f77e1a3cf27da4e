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

GroupSpan ExpertLayout::expert_tensor_group(std::int64_t rank) const {
    ExpertCoordinates c = coordinates(rank);
    c.etp = 0;
    return {etp_, nodes_spanned(global_rank(c), 1, etp_, gpus_per_node_)};
}

GroupSpan ExpertLayout::expert_tensor_and_model_group(std::int64_t rank) const {
    ExpertCoordinates c = coordinates(rank);
    c.etp = 0;
    c.ep = 0;
    return {etp_ * ep_, nodes_spanned(global_rank(c), 1, etp_ * ep_, gpus_per_node_)};
}

std::vector<std::int64_t> ExpertLayout::members(Group group, std::int64_t rank) const {
    const ExpertCoordinates at = coordinates(rank);
    std::vector<std::int64_t> out;
    const bool varies_etp = group == Group::ExpertTensor || group == Group::ExpertTensorAndModel;
    const bool varies_ep = group == Group::ExpertParallel || group == Group::ExpertTensorAndModel;
    const bool varies_edp = group == Group::ExpertData;
    for (std::int64_t edp = 0; edp < (varies_edp ? edp_ : 1); ++edp) {
        for (std::int64_t ep = 0; ep < (varies_ep ? ep_ : 1); ++ep) {
            for (std::int64_t etp = 0; etp < (varies_etp ? etp_ : 1); ++etp) {
                ExpertCoordinates c = at;
                c.etp = varies_etp ? etp : at.etp;
                c.ep = varies_ep ? ep : at.ep;
                c.edp = varies_edp ? edp : at.edp;
                out.push_back(global_rank(c));
            }
        }
    }
    return out;
}

}  // namespace trainsim::parallel
