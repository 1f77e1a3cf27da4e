#include "sim/program/op_pricing.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

#include "sim/core/input_error.h"

namespace trainsim::program {

namespace {

std::string format_capability(double capability) {
    char text[16];
    std::snprintf(text, sizeof text, "%.1f", capability);
    return text;
}

}  // namespace

void check_fits_profile(const config::Scenario& scenario, const cost::HardwareProfile& profile) {
    if (scenario.hardware.gpus_per_node > profile.gpus_per_node) {
        throw InputError("hardware.gpus_per_node=" + std::to_string(scenario.hardware.gpus_per_node) +
                         " exceeds the " + std::to_string(profile.gpus_per_node) +
                         " GPUs per node of profile " + profile.name +
                         "; pass --set hardware.gpus_per_node=" + std::to_string(profile.gpus_per_node) +
                         " to simulate nodes of that size");
    }
    if (moe_dispatcher_synchronizes(scenario) && !profile.host) {
        throw InputError("model.moe_token_dispatcher_type=\"" +
                         std::string(config::to_string(scenario.model.moe->token_dispatcher)) +
                         "\" synchronises the host with the GPU in every MoE layer, which needs the host "
                         "section of profile " +
                         profile.name + " (kernel_launch_us, op_dispatch_us, collective_dispatch_us)");
    }
    if (scenario.hardware.collective_contention == config::CollectiveContentionModel::NcclChannels) {
        if (!profile.collective_contention) {
            throw InputError("hardware.collective_contention=\"nccl_channels\" needs the "
                             "network.collective_contention section of profile " +
                             profile.name +
                             " (intra_node_channels, inter_node_channels, hbm_bytes_per_reduced_byte, "
                             "hbm_bytes_per_copied_byte); use \"fixed_share\" with it");
        }
        const cost::CollectiveContention& c = *profile.collective_contention;
        const int channels = std::max(c.intra_node_channels, c.inter_node_channels);
        if (channels >= profile.num_sms) {
            throw InputError("hardware.collective_contention=\"nccl_channels\": profile " + profile.name +
                             " runs " + std::to_string(channels) +
                             " NCCL channels (network.collective_contention), which must be fewer than its " +
                             std::to_string(profile.num_sms) +
                             " SMs (compute.gemm.num_sms): compute beside a collective would have none left");
        }
    }
    const std::optional<config::Fp8Recipe> fp8 = scenario.training.fp8();
    if (fp8 && !profile.has_fp8()) {
        throw InputError("training.fp8_format=\"" +
                         std::string(config::to_string(*scenario.training.fp8_format)) +
                         "\" needs FP8 tensor cores, and profile " + profile.name +
                         " has none (no gpu.fp8_peak_tflops and compute.gemm_fp8)");
    }
    // MXFP8's E8M0 block scales are a Blackwell tensor-core format (compute capability 10.x).
    constexpr double kFirstMxfp8Capability = 10.0;
    if (fp8 == config::Fp8Recipe::Mxfp8 && profile.compute_capability < kFirstMxfp8Capability) {
        throw InputError(
            "training.fp8_recipe=\"mxfp8\" needs a Blackwell GPU (gpu.compute_capability >= 10), and "
            "profile " +
            profile.name + " has " +
            (profile.compute_capability > 0.0 ? format_capability(profile.compute_capability)
                                              : std::string("no compute_capability")));
    }
}

bool moe_dispatcher_synchronizes(const config::Scenario& scenario) {
    if (!scenario.model.moe || scenario.model.moe->num_moe_layers() == 0) {
        return false;
    }
    // Only the alltoall dispatcher's drop-and-pad mode knows every split on the host (token_dispatcher.py).
    const config::MoeConfig& moe = *scenario.model.moe;
    return !(moe.token_dispatcher == config::MoeTokenDispatcher::AllToAll &&
             moe.pad_expert_input_to_capacity);
}

parallel::GroupSpan OpPricing::group_span(workload::CommGroup group, const parallel::Coordinates& at) const {
    switch (group) {
    case workload::CommGroup::Tensor:
        return layout_.tensor_group(at);
    case workload::CommGroup::Data:
        return layout_.data_group(at);
    case workload::CommGroup::Embedding:
        return layout_.embedding_group(at);
    case workload::CommGroup::ModelParallel:
        return layout_.model_parallel_group(at);
    case workload::CommGroup::Context:
        return layout_.context_group(at);
    case workload::CommGroup::Expert:
        // The EP group's node span decides NVLink or the NICs (Megatron-Core's expert rank order).
        if (!experts_) {
            throw std::logic_error("OpPricing: an expert-parallel collective without an expert layout");
        }
        return experts_->expert_parallel_group(layout_.global_rank(at));
    case workload::CommGroup::ExpertData:
        if (!experts_) {
            throw std::logic_error("OpPricing: an expert-data-parallel collective without an expert layout");
        }
        return experts_->expert_data_group(layout_.global_rank(at));
    case workload::CommGroup::ExpertTensor:
        if (!experts_) {
            throw std::logic_error(
                "OpPricing: an expert tensor-parallel collective without an expert layout");
        }
        return experts_->expert_tensor_group(layout_.global_rank(at));
    case workload::CommGroup::ExpertTensorAndModel:
        if (!experts_) {
            throw std::logic_error("OpPricing: a tp_ep collective without an expert layout");
        }
        return experts_->expert_tensor_and_model_group(layout_.global_rank(at));
    case workload::CommGroup::StageCopies:
        return layout_.stage_copy_group(at);
    }
    return {};
}

OpPricing::Placement OpPricing::placement(const parallel::Coordinates& at) const {
    return {layout_.tensor_group(at),
            layout_.data_group(at),
            layout_.embedding_group(at),
            layout_.model_parallel_group(at),
            layout_.context_group(at),
            experts_ ? experts_->expert_parallel_group(layout_.global_rank(at)) : parallel::GroupSpan{},
            experts_ ? experts_->expert_data_group(layout_.global_rank(at)) : parallel::GroupSpan{},
            experts_ ? experts_->expert_tensor_group(layout_.global_rank(at)) : parallel::GroupSpan{},
            experts_ ? experts_->expert_tensor_and_model_group(layout_.global_rank(at))
                     : parallel::GroupSpan{},
            stage_copies_ ? layout_.stage_copy_group(at) : parallel::GroupSpan{}};
}

std::size_t OpPricing::ListKeyHash::operator()(const ListKey& k) const noexcept {
    std::size_t h = std::hash<const void*>{}(k.ops);
    for (const parallel::GroupSpan& g :
         {k.placement.tensor, k.placement.data, k.placement.embedding, k.placement.model_parallel,
          k.placement.context, k.placement.expert, k.placement.expert_data, k.placement.expert_tensor,
          k.placement.expert_tensor_and_model, k.placement.stage_copies}) {
        h = (h ^ static_cast<std::size_t>(g.size * 1000003 + g.nodes)) * 0x9E3779B97F4A7C15ULL;
    }
    return h;
}

std::pair<std::int32_t, bool> OpPricing::shared_index(const workload::OpList& ops,
                                                      const parallel::Coordinates& at,
                                                      std::int32_t next) const {
    const auto [it, added] = shared_.try_emplace(ListKey{&ops, placement(at)}, next);
    return {it->second, added};
}

cost::OverlapSlowdown OpPricing::compute_slowdown_beside(const workload::Op& collective,
                                                         const parallel::Coordinates& at,
                                                         SimTime duration) const {
    if (collective.comm_sms > 0) {
        const double f = cost_.compute_slowdown_beside_sms(collective.comm_sms);
        return {f, f};
    }
    if (contention_ == config::CollectiveContentionModel::FixedShare) {
        const double f = cost_.compute_slowdown_while_overlapped(group_span(collective.group, at).scope());
        return {f, f};
    }
    const parallel::GroupSpan span = collective_span(collective, at);
    return cost::overlap_slowdown(
        cost::collective_contention(cost_.profile(), collective.collective, collective.collective_bytes,
                                    static_cast<int>(span.size), span.scope(), to_seconds(duration)));
}

double OpPricing::compute_rate_beside(const workload::Op& collective, const parallel::Coordinates& at,
                                      SimTime duration) const {
    return 1.0 / compute_slowdown_beside(collective, at, duration).compute_bound;
}

double OpPricing::compute_rate_beside_transfer(const parallel::Coordinates& from,
                                               const parallel::Coordinates& to) const {
    return 1.0 / cost_.compute_slowdown_while_overlapped(layout_.pair(from, to).scope());
}

parallel::GroupSpan OpPricing::collective_span(const workload::Op& op,
                                               const parallel::Coordinates& at) const {
    // A ring step's send/recv moves between neighbours: priced as one hop of the ring.
    const bool ring_hop =
        op.group == workload::CommGroup::Context && op.collective == cost::CollectiveKind::SendRecv;
    return ring_hop ? layout_.context_ring_hop(at) : group_span(op.group, at);
}

Seconds OpPricing::duration(const workload::Op& op, const parallel::Coordinates& at) const {
    switch (op.kind) {
    case workload::OpKind::Gemm:
        return op.grouped.empty() ? cost_.gemm(op.gemm, op.gemm_class, op.gemm_precision)
                                  : cost_.grouped_gemm(op.gemm, op.grouped, op.gemm_precision);
    case workload::OpKind::MemoryBound:
        return cost_.memory_bound(op.bytes_moved, op.memory_kind);
    case workload::OpKind::Collective: {
        const parallel::GroupSpan span = collective_span(op, at);
        return cost_.collective(op.collective, op.collective_bytes, static_cast<int>(span.size), span.scope(),
                                static_cast<int>(span.nodes), busy_ranks_per_node());
    }
    }
    return Seconds{0.0};
}

int OpPricing::busy_ranks_per_node() const {
    // Every GPU runs the same phase of the iteration at about the same time (all TP ranks send their
    // pipeline shard, all data-parallel groups reduce together), so all GPUs of a node compete for its NICs.
    return static_cast<int>(std::min(layout_.gpus_per_node(), layout_.world_size()));
}

Seconds OpPricing::p2p(Bytes bytes, const parallel::Coordinates& from,
                       const parallel::Coordinates& to) const {
    const parallel::GroupSpan span = layout_.pair(from, to);
    return cost_.collective(cost::CollectiveKind::SendRecv, bytes, 2, span.scope(),
                            static_cast<int>(span.nodes), busy_ranks_per_node());
}

}  // namespace trainsim::program
