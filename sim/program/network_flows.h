// Communication as flows on the cluster's topology (hardware.network_model=flow): registers every link
// of the topology as an engine resource and turns each collective and pipeline transfer into a flow
// spec over the links its group crosses, including the groups a folded run stands for (DESIGN.md §3
// "Scale": their traffic shares the links of the simulated one).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/cost/cost_model.h"
#include "sim/engine/program.h"
#include "sim/network/collective_flows.h"
#include "sim/network/topology.h"
#include "sim/parallel/expert_layout.h"
#include "sim/parallel/layout.h"
#include "sim/workload/op.h"

namespace trainsim::program {

struct Fold;

/// The topology a scenario describes with the profile's rates: hardware.topology's shape, the profile's
/// NICs, NVLink rate and NVLink domain size.
[[nodiscard]] network::TopologySpec topology_spec(const config::Scenario& scenario,
                                                  const cost::HardwareProfile& profile);

class NetworkFlows {
public:
    /// Registers the topology's links as resources of `program` (resource id = link id).
    NetworkFlows(engine::Program& program, std::shared_ptr<const network::Topology> topology,
                 const cost::CostModel& cost, const parallel::Layout& layout, const Fold& fold);

    /// The flow of collective `op` (kind Collective) run by the GPU at `at`; `experts` is the expert
    /// layers' rank order, for the expert groups (null without experts).
    [[nodiscard]] engine::FlowSpecId collective(const workload::Op& op, const parallel::Coordinates& at,
                                                const parallel::ExpertLayout* experts = nullptr);
    /// The flow of a pipeline transfer of `bytes` from `from` to `to`.
    [[nodiscard]] engine::FlowSpecId transfer(Bytes bytes, const parallel::Coordinates& from,
                                              const parallel::Coordinates& to);

private:
    /// The group instances `group` at `at` stands for: its own, and under folding the identical ones of
    /// the GPUs it represents.
    [[nodiscard]] std::vector<std::vector<std::int64_t>> copies(workload::CommGroup group,
                                                                const parallel::Coordinates& at) const;
    /// The ranks the GPU at `at` stands for: itself, under folding its tensor- and data-parallel peers,
    /// and always its context-parallel ones; in rank order.
    [[nodiscard]] std::vector<std::int64_t> stood_for(const parallel::Coordinates& at) const;
    /// The flow of an expert-group collective: what the ranks `at` stands for send to their groups.
    [[nodiscard]] engine::FlowSpecId expert_collective(const workload::Op& op,
                                                       const parallel::Coordinates& at,
                                                       const parallel::ExpertLayout& experts);
    [[nodiscard]] engine::FlowSpecId add(const network::NetworkFlow& f);

    engine::Program& program_;
    std::shared_ptr<const network::Topology> topology_;
    network::CollectiveFlows flows_;
    const parallel::Layout& layout_;
    bool fold_tensor_, fold_data_;
    // (group, first rank of its first copy, collective kind, bytes) → spec, and
    // (from rank, to rank, bytes) → spec: a layer's collectives repeat every micro-batch.
    std::map<std::tuple<int, std::int64_t, int, std::int64_t>, engine::FlowSpecId> collective_specs_;
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, engine::FlowSpecId> transfer_specs_;
};

}  // namespace trainsim::program
