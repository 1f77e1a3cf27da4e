// The expert layers' rank order (Megatron-Core's expert RankGenerator): the t·c·d ranks of each
// pipeline stage regrouped as etp × ep × edp, expert tensor parallelism innermost, then expert
// parallelism, then expert data parallelism, then the pipeline stage (the default order "tp-cp-ep-dp-pp"
// with tp = etp and cp = 1; megatron/core/parallel_state.py, initialize_model_parallel):
//   global rank = etp + ETP·(ep + EP·(edp + EDP·pp)).
// The pipeline coordinate equals the dense layout's, as Megatron asserts, so a GPU holds its stage's
// experts and its stage's dense layers.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/parallel/layout.h"

namespace trainsim::parallel {

struct ExpertCoordinates {
    std::int64_t etp = 0;
    std::int64_t ep = 0;
    std::int64_t edp = 0;
    std::int64_t pp = 0;
    friend bool operator==(const ExpertCoordinates&, const ExpertCoordinates&) = default;
};

class ExpertLayout {
public:
    /// The scenario must have passed validate_scenario (etp·ep divides t·c·d).
    explicit ExpertLayout(const config::Scenario& scenario);

    [[nodiscard]] std::int64_t expert_tensor_size() const { return etp_; }
    [[nodiscard]] std::int64_t expert_parallel_size() const { return ep_; }
    [[nodiscard]] std::int64_t expert_data_size() const { return edp_; }

    [[nodiscard]] std::int64_t global_rank(const ExpertCoordinates& c) const {
        return c.etp + etp_ * (c.ep + ep_ * (c.edp + edp_ * c.pp));
    }
    [[nodiscard]] ExpertCoordinates coordinates(std::int64_t rank) const;

    /// The expert-parallel group of rank `rank` (varying ep: the dispatch and combine all-to-all), and
    /// its expert-data-parallel group (varying edp: the expert gradients' reduction).
    [[nodiscard]] GroupSpan expert_parallel_group(std::int64_t rank) const;
    [[nodiscard]] GroupSpan expert_data_group(std::int64_t rank) const;
    /// Its expert tensor-parallel group (varying etp: the etp consecutive ranks that split each local
    /// expert) and its tp_ep group (varying etp and ep: etp·ep consecutive ranks, Megatron-Core's
    /// expert tensor and model parallel group).
    [[nodiscard]] GroupSpan expert_tensor_group(std::int64_t rank) const;
    [[nodiscard]] GroupSpan expert_tensor_and_model_group(std::int64_t rank) const;
    /// The global ranks of `rank`'s group `group` of those four, in rank order.
    enum class Group : std::uint8_t { ExpertParallel, ExpertData, ExpertTensor, ExpertTensorAndModel };
    [[nodiscard]] std::vector<std::int64_t> members(Group group, std::int64_t rank) const;

private:
    std::int64_t etp_, ep_, edp_, gpus_per_node_;
};

}  // namespace trainsim::parallel
