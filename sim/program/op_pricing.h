// Prices workload ops with the cost model: each op's duration on the GPU at given coordinates, with
// its collective's real group size and node span from the layout.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>

#include "sim/config/scenario.h"
#include "sim/cost/collective_contention.h"
#include "sim/cost/cost_model.h"
#include "sim/parallel/expert_layout.h"
#include "sim/parallel/layout.h"
#include "sim/workload/op.h"

namespace trainsim::program {

/// Whether the scenario's MoE token dispatcher synchronises the host with the GPU in each MoE layer's
/// forward (every dispatcher but alltoall with moe_pad_expert_input_to_capacity).
[[nodiscard]] bool moe_dispatcher_synchronizes(const config::Scenario& scenario);

/// Throws InputError when the scenario asks for a node the profile does not describe, or for a
/// dispatcher that synchronises the host on a profile without host costs.

void check_fits_profile(const config::Scenario& scenario, const cost::HardwareProfile& profile);

class OpPricing {
public:
    OpPricing(const cost::CostModel& cost, const parallel::Layout& layout) : cost_(cost), layout_(layout) {}
    /// With the scenario: its expert layout too, when the model has experts (the expert groups).
    OpPricing(const cost::CostModel& cost, const parallel::Layout& layout, const config::Scenario& scenario)
        : cost_(cost), layout_(layout), stage_copies_(scenario.bidirectional_placement()),
          contention_(scenario.hardware.collective_contention),
          engine_contention_(scenario.hardware.compute_contention == config::ComputeContention::Engine) {
        if (scenario.model.moe) {
            experts_.emplace(scenario);
        }
    }

    [[nodiscard]] Seconds duration(const workload::Op& op, const parallel::Coordinates& at) const;
    /// How much longer compute runs beside `collective` (an op of kind Collective) at `at`, which runs for
    /// `duration` (its price): by the SMs it says it holds (Op::comm_sms), else by the scenario's
    /// hardware.collective_contention: the link's fixed share for every kernel, or NCCL's channels for
    /// compute-bound and its HBM traffic for memory-bound kernels (sim/cost/collective_contention.h).
    [[nodiscard]] cost::OverlapSlowdown compute_slowdown_beside(const workload::Op& collective,
                                                                const parallel::Coordinates& at,
                                                                SimTime duration) const;
    /// hardware.compute_contention=engine: the engine decides what collectives take from the compute
    /// beside them (sim/engine/gpu_compute.h), so prices leave it out.
    [[nodiscard]] bool engine_contention() const { return engine_contention_; }
    /// The rate a GPU's compute runs at beside `collective` under engine contention: the inverse of
    /// compute_slowdown_beside's compute-bound factor (nccl_channels: the SMs its channels leave).
    [[nodiscard]] double compute_rate_beside(const workload::Op& collective, const parallel::Coordinates& at,
                                             SimTime duration) const;
    /// The same beside a pipeline send/receive between `from` and `to`: the fixed share of its link.
    [[nodiscard]] double compute_rate_beside_transfer(const parallel::Coordinates& from,
                                                      const parallel::Coordinates& to) const;
    /// A pipeline send/receive of `bytes` between two GPUs.
    [[nodiscard]] Seconds p2p(Bytes bytes, const parallel::Coordinates& from,
                              const parallel::Coordinates& to) const;
    [[nodiscard]] const parallel::Layout& layout() const { return layout_; }
    /// The profile's host costs; null when it has no host section.
    [[nodiscard]] const cost::HostCosts* host() const {
        return cost_.profile().host ? &*cost_.profile().host : nullptr;
    }
    /// The expert layers' rank order; null for a model without experts.
    [[nodiscard]] const parallel::ExpertLayout* experts() const { return experts_ ? &*experts_ : nullptr; }

    /// The span of the group an op's collective runs over.
    [[nodiscard]] parallel::GroupSpan group_span(workload::CommGroup group,
                                                 const parallel::Coordinates& at) const;

    /// The spans of the groups at `at`: everything an op's price depends on besides the op, so GPUs
    /// that agree price every op list the same.
    struct Placement {
        parallel::GroupSpan tensor, data, embedding, model_parallel, context, expert, expert_data,
            expert_tensor, expert_tensor_and_model, stage_copies;
        friend bool operator==(const Placement&, const Placement&) = default;
    };
    [[nodiscard]] Placement placement(const parallel::Coordinates& at) const;

    /// Shares priced op lists between GPUs (identical layers and ranks are priced once, DESIGN.md §3
    /// "Scale"): the index first registered for `ops` at `at`'s placement, or else `next`, registered
    /// now, with true. The caller keeps the indexed lists; one OpPricing serves one program.
    [[nodiscard]] std::pair<std::int32_t, bool>
    shared_index(const workload::OpList& ops, const parallel::Coordinates& at, std::int32_t next) const;

private:
    [[nodiscard]] int busy_ranks_per_node() const;
    /// The span a collective op runs over (a context-parallel ring step: one hop of the ring).
    [[nodiscard]] parallel::GroupSpan collective_span(const workload::Op& op,
                                                      const parallel::Coordinates& at) const;

    struct ListKey {
        const workload::OpList* ops;
        Placement placement;
        friend bool operator==(const ListKey&, const ListKey&) = default;
    };
    struct ListKeyHash {
        std::size_t operator()(const ListKey& k) const noexcept;
    };

    const cost::CostModel& cost_;
    const parallel::Layout& layout_;
    std::optional<parallel::ExpertLayout> experts_;  // MoE models only
    // Only DualPipe sums gradients between the copies r and p - 1 - r: without it that pair is no part of
    // a placement, so ranks whose mirrors sit on different nodes still share their priced lists.
    bool stage_copies_ = false;
    config::CollectiveContentionModel contention_ = config::CollectiveContentionModel::FixedShare;
    bool engine_contention_ = false;
    mutable std::unordered_map<ListKey, std::int32_t, ListKeyHash> shared_;
};

}  // namespace trainsim::program
