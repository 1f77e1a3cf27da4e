#include "sim/program/network_flows.h"

#include <algorithm>
#include <stdexcept>

#include "sim/program/iteration_program.h"

namespace trainsim::program {

namespace {

network::GpuGeneration generation_of(const cost::HardwareProfile& profile) {
    // NCCL's tables are indexed by compute capability (tuning.cc's compCapIndex: >= 10 Blackwell, >= 9
    // Hopper, >= 8 Ampere). A profile without gpu.compute_capability is named by its dense BF16 peak
    // instead (A100 312 TFLOP/s; H100/H200 989; B200 and later above 1500).
    const double cc = profile.compute_capability;
    if (cc > 0.0) {
        return cc >= 10.0  ? network::GpuGeneration::Blackwell
               : cc >= 9.0 ? network::GpuGeneration::Hopper
               : cc >= 8.0 ? network::GpuGeneration::Ampere
                           : network::GpuGeneration::Volta;
    }
    if (profile.peak_tflops >= 1500.0) {
        return network::GpuGeneration::Blackwell;
    }
    return profile.peak_tflops >= 600.0 ? network::GpuGeneration::Hopper : network::GpuGeneration::Ampere;
}

}  // namespace

network::TopologySpec topology_spec(const config::Scenario& scenario, const cost::HardwareProfile& profile) {
    const config::TopologyConfig& t = scenario.hardware.topology;
    network::TopologySpec s;
    s.kind = t.kind == config::FabricKind::RailOptimized ? network::FabricKind::RailOptimized
                                                         : network::FabricKind::FatTree;
    s.gpus_per_node = scenario.hardware.gpus_per_node;
    s.nvlink_domain_gpus = scenario.hardware.gpus_per_node;
    // The profile's NICs serve its node; a scenario node of fewer GPUs keeps the same NICs per GPU.
    s.nics_per_node = std::max<std::int64_t>(1, profile.inter_node.nics_per_node *
                                                    scenario.hardware.gpus_per_node / profile.gpus_per_node);
    s.nodes_per_leaf = t.nodes_per_leaf;
    s.oversubscription = t.oversubscription;
    s.nodes_per_pod = t.nodes_per_pod;
    s.pod_oversubscription = t.pod_oversubscription;
    // A GPU's NVLink rate into the NVSwitch domain: the largest per-GPU bus bandwidth NCCL reached on the
    // measured intra-node curve (the profile's network.intra_node.busbw_GBps_vs_bytes).
    const auto& curve = profile.intra_node.busbw_GBps_vs_bytes.y;
    s.nvlink_GBps =
        curve.empty() ? profile.intra_node.p2p_GBps : *std::max_element(curve.begin(), curve.end());
    s.nic_GBps = profile.inter_node.nic_GBps;
    // DGX A100 hosts have AMD EPYC CPUs, DGX H100 and later Intel Xeon (NVIDIA DGX datasheets); NCCL's
    // tuning reads the vendor.
    s.amd_host = generation_of(profile) == network::GpuGeneration::Ampere;
    // NVLink SHARP is in the third-generation NVSwitch and later (DGX H100/H200, B200, GB200 NVL72; not
    // the A100's), and NCCL uses it only from compute capability 9.0 (search.cc), so by default Hopper
    // and later have it; hardware.topology.nvls overrides.
    const network::GpuGeneration g = generation_of(profile);
    s.nvls = t.nvls.value_or(g == network::GpuGeneration::Hopper || g == network::GpuGeneration::Blackwell);
    s.sharp = t.sharp;
    // NCCL's figure for one GPU's NVLink (18 x SM90_NVLINK_BW 20.6 = 370.8 on H100), the profile's p2p rate.
    s.nvlink_link_GBps = profile.intra_node.p2p_GBps;
    return s;
}

NetworkFlows::NetworkFlows(engine::Program& program, std::shared_ptr<const network::Topology> topology,
                           const cost::CostModel& cost, const parallel::Layout& layout, const Fold& fold)
    : program_(program), topology_(std::move(topology)),
      flows_(*topology_, cost, generation_of(cost.profile())), layout_(layout), fold_tensor_(fold.tensor),
      fold_data_(fold.data) {
    for (network::LinkId l = 0; l < topology_->num_links(); ++l) {
        const engine::ResourceId r = program_.add_resource(topology_->capacity_GBps(l) * 1e9);
        if (r != engine::ResourceId{l}) {
            throw std::logic_error("NetworkFlows: the program already had resources");
        }
    }
}

std::vector<std::vector<std::int64_t>> NetworkFlows::copies(workload::CommGroup group,
                                                            const parallel::Coordinates& at) const {
    const std::int64_t t = layout_.tensor_size(), d = layout_.data_size(), p = layout_.pipeline_size();
    const std::int64_t c = layout_.context_size();
    // The coordinates of the simulated group and of the folded ones beside it.
    std::vector<std::int64_t> tps{at.tp}, dps{at.dp}, cps{at.cp};
    const bool varies_tp =
        group == workload::CommGroup::Tensor || group == workload::CommGroup::ModelParallel;
    const bool varies_dp = group == workload::CommGroup::Data;
    // The data-parallel group with context parallelism is Megatron's dp × cp group (Layout::data_group).
    const bool varies_cp = group == workload::CommGroup::Context || group == workload::CommGroup::Data;
    if (fold_tensor_ && !varies_tp) {
        tps.clear();
        for (std::int64_t i = 0; i < t; ++i)
            tps.push_back(i);
    }
    if (fold_data_ && !varies_dp) {
        dps.clear();
        for (std::int64_t i = 0; i < d; ++i)
            dps.push_back(i);
    }
    if (!varies_cp) {
        // Context-parallel ranks are always folded (iteration_program.cc): each simulated GPU stands
        // for the c ranks of its context-parallel group, whose groups run beside its own.
        cps.clear();
        for (std::int64_t i = 0; i < c; ++i)
            cps.push_back(i);
    }
    std::vector<std::vector<std::int64_t>> out;
    for (const std::int64_t dp : dps) {
        for (const std::int64_t cp : cps) {
            for (const std::int64_t tp : tps) {
                std::vector<std::int64_t> members;
                switch (group) {
                case workload::CommGroup::Tensor:
                    for (std::int64_t i = 0; i < t; ++i)
                        members.push_back(layout_.global_rank({i, dp, at.pp, cp}));
                    break;
                case workload::CommGroup::Data:
                    for (std::int64_t i = 0; i < d; ++i) {
                        for (std::int64_t j = 0; j < c; ++j)
                            members.push_back(layout_.global_rank({tp, i, at.pp, j}));
                    }
                    break;
                case workload::CommGroup::Embedding:
                    members = {layout_.global_rank({tp, dp, 0, cp}),
                               layout_.global_rank({tp, dp, p - 1, cp})};
                    break;
                case workload::CommGroup::StageCopies: {
                    // In one order from both sides, so the pair's two GPUs build one flow spec.
                    const auto [low, high] = layout_.stage_copy_ranks(at.pp);
                    members = {layout_.global_rank({tp, dp, low, cp}),
                               layout_.global_rank({tp, dp, high, cp})};
                    break;
                }
                case workload::CommGroup::Context:
                    // In ring order: context-parallel rank i sends to i + 1 (Transformer Engine's
                    // cp_global_ranks order).
                    for (std::int64_t i = 0; i < c; ++i)
                        members.push_back(layout_.global_rank({tp, dp, at.pp, i}));
                    break;
                case workload::CommGroup::Expert:
                case workload::CommGroup::ExpertData:
                case workload::CommGroup::ExpertTensor:
                case workload::CommGroup::ExpertTensorAndModel:
                    // Not reached: collective() lowers them rank by rank (expert_collective).
                    throw std::logic_error("NetworkFlows: expert groups have no copies");
                case workload::CommGroup::ModelParallel:
                    for (std::int64_t s = 0; s < p; ++s) {
                        for (std::int64_t i = 0; i < t; ++i)
                            members.push_back(layout_.global_rank({i, dp, s, cp}));
                    }
                    break;
                }
                out.push_back(std::move(members));
                if (varies_tp) {
                    break;  // one group covers every tp
                }
            }
        }
    }
    return out;
}

engine::FlowSpecId NetworkFlows::add(const network::NetworkFlow& f) {
    engine::FlowSpec spec;
    spec.amount = f.amount_bytes;
    spec.max_rate = f.max_rate_GBps * 1e9;
    spec.latency = to_sim_time(f.latency);
    for (const auto& [link, weight] : f.uses) {
        spec.uses.push_back({engine::ResourceId{link}, weight});
    }
    return program_.add_flow_spec(std::move(spec));
}

namespace {

// Ring attention's backward runs its ring the other way: Transformer Engine's
// AttnFuncWithCPAndKVP2P.backward sends the keys and values (and each step's dK/dV) to the previous
// context-parallel rank and receives from the next. The op names are transformer_layer.cc's.
bool reversed_ring(const workload::Op& op) {
    return op.name.starts_with("attn.cp_kv_exchange.bwd.") || op.name.starts_with("attn.cp_dkv_exchange.");
}

parallel::ExpertLayout::Group expert_group(workload::CommGroup group) {
    switch (group) {
    case workload::CommGroup::ExpertData:
        return parallel::ExpertLayout::Group::ExpertData;
    case workload::CommGroup::ExpertTensor:
        return parallel::ExpertLayout::Group::ExpertTensor;
    case workload::CommGroup::ExpertTensorAndModel:
        return parallel::ExpertLayout::Group::ExpertTensorAndModel;
    default:
        return parallel::ExpertLayout::Group::ExpertParallel;
    }
}

}  // namespace

std::vector<std::int64_t> NetworkFlows::stood_for(const parallel::Coordinates& at) const {
    std::vector<std::int64_t> ranks;
    const std::int64_t t = layout_.tensor_size(), d = layout_.data_size(), c = layout_.context_size();
    for (std::int64_t dp = 0; dp < (fold_data_ ? d : 1); ++dp) {
        for (std::int64_t cp = 0; cp < c; ++cp) {
            for (std::int64_t tp = 0; tp < (fold_tensor_ ? t : 1); ++tp) {
                ranks.push_back(
                    layout_.global_rank({fold_tensor_ ? tp : at.tp, fold_data_ ? dp : at.dp, at.pp, cp}));
            }
        }
    }
    std::sort(ranks.begin(), ranks.end());
    return ranks;
}

// The expert groups meet no peer in the program: every simulated GPU runs its own all-to-all and
// expert-gradient reduction (op_lowering.cc's next_collective, a rendezvous of one). So each GPU's flow is
// the traffic its own ranks send, and the flows of all simulated GPUs add up to every group's whole
// collective: the members' shares of one group run at the same time and share its links as the one
// collective would.
engine::FlowSpecId NetworkFlows::expert_collective(const workload::Op& op, const parallel::Coordinates& at,
                                                   const parallel::ExpertLayout& experts) {
    const std::vector<std::int64_t> senders = stood_for(at);
    const std::tuple<int, std::int64_t, int, std::int64_t> key{static_cast<int>(op.group), senders.front(),
                                                               2 * static_cast<int>(op.collective),
                                                               op.collective_bytes.value};
    const auto known = collective_specs_.find(key);
    if (known != collective_specs_.end()) {
        return known->second;
    }
    const parallel::ExpertLayout::Group which = expert_group(op.group);
    // The groups the senders belong to (Megatron-Core's expert rank order, expert_layout.h), each once.
    std::vector<std::vector<std::int64_t>> groups;
    for (const std::int64_t rank : senders) {
        std::vector<std::int64_t> group = experts.members(which, rank);
        if (std::find(groups.begin(), groups.end(), group) == groups.end()) {
            groups.push_back(std::move(group));
        }
    }
    const engine::FlowSpecId id = add(flows_.collective(op.collective, op.collective_bytes, groups, senders));
    collective_specs_.emplace(key, id);
    return id;
}

engine::FlowSpecId NetworkFlows::collective(const workload::Op& op, const parallel::Coordinates& at,
                                            const parallel::ExpertLayout* experts) {
    if (workload::is_expert_token_group(op.group) || op.group == workload::CommGroup::ExpertData) {
        if (experts == nullptr) {
            throw std::logic_error("NetworkFlows: an expert-group collective without an expert layout");
        }
        return expert_collective(op, at, *experts);
    }
    const std::vector<std::vector<std::int64_t>> groups = copies(op.group, at);
    const bool ring_step = op.collective == cost::CollectiveKind::SendRecv;
    if (ring_step && op.group != workload::CommGroup::Context) {
        throw std::logic_error("NetworkFlows: a send/recv collective outside the context-parallel ring");
    }
    const bool reverse = ring_step && reversed_ring(op);
    const std::tuple<int, std::int64_t, int, std::int64_t> key{
        static_cast<int>(op.group), groups.front().front(),
        2 * static_cast<int>(op.collective) + (reverse ? 1 : 0), op.collective_bytes.value};
    const auto known = collective_specs_.find(key);
    if (known != collective_specs_.end()) {
        return known->second;
    }
    // A send/recv of the context-parallel group is one step of its ring (transformer_layer.cc).
    const engine::FlowSpecId id =
        add(ring_step ? flows_.ring_exchange(op.collective_bytes, groups, reverse)
                      : flows_.collective(op.collective, op.collective_bytes, groups));
    collective_specs_.emplace(key, id);
    return id;
}

engine::FlowSpecId NetworkFlows::transfer(Bytes bytes, const parallel::Coordinates& from,
                                          const parallel::Coordinates& to) {
    const std::tuple<std::int64_t, std::int64_t, std::int64_t> key{layout_.global_rank(from),
                                                                   layout_.global_rank(to), bytes.value};
    const auto known = transfer_specs_.find(key);
    if (known != transfer_specs_.end()) {
        return known->second;
    }
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
    const std::int64_t t = layout_.tensor_size(), d = layout_.data_size(), c = layout_.context_size();
    for (std::int64_t dp = 0; dp < (fold_data_ ? d : 1); ++dp) {
        // Every context-parallel rank sends its own share of the sequence (they are always folded).
        for (std::int64_t cp = 0; cp < c; ++cp) {
            for (std::int64_t tp = 0; tp < (fold_tensor_ ? t : 1); ++tp) {
                const parallel::Coordinates a{fold_tensor_ ? tp : from.tp, fold_data_ ? dp : from.dp, from.pp,
                                              cp};
                const parallel::Coordinates b{fold_tensor_ ? tp : to.tp, fold_data_ ? dp : to.dp, to.pp, cp};
                pairs.emplace_back(layout_.global_rank(a), layout_.global_rank(b));
            }
        }
    }
    const engine::FlowSpecId id = add(flows_.transfer(bytes, pairs));
    transfer_specs_.emplace(key, id);
    return id;
}

}  // namespace trainsim::program
