#include "sim/cost/collective_contention.h"

#include <algorithm>
#include <stdexcept>

namespace trainsim::cost {

namespace {

// src/include/device.h NCCL_SIMPLE_MAX_NTHREADS and src/include/comm.h NCCL_SIMPLE_THREAD_THRESHOLD
// (NVIDIA/nccl @5067397): the bytes below which topoGetAlgoInfo gives up a channel.
constexpr std::int64_t kNcclSimpleThreads = 512;
constexpr std::int64_t kNcclSimpleThreadThreshold = 64;
constexpr std::int64_t kBytesPerChannel = kNcclSimpleThreads * kNcclSimpleThreadThreshold;

// Max-min fairness between the collective and a kernel that could each fill HBM alone.
constexpr double kMaxHbmShare = 0.5;

double hbm_bytes_per_bus_byte(const CollectiveContention& c, CollectiveKind kind) {
    switch (kind) {
    case CollectiveKind::ReduceScatter:
        return c.hbm_bytes_per_reduced_byte;
    case CollectiveKind::AllReduce:
        return 0.5 * (c.hbm_bytes_per_reduced_byte + c.hbm_bytes_per_copied_byte);
    case CollectiveKind::AllGather:
    case CollectiveKind::AllToAll:
    case CollectiveKind::SendRecv:
        return c.hbm_bytes_per_copied_byte;
    }
    throw std::invalid_argument("collective_contention: unknown collective kind");
}

}  // namespace

int nccl_active_channels(int channels, Bytes bytes) {
    const std::int64_t fit = bytes.value / kBytesPerChannel;
    return static_cast<int>(std::clamp<std::int64_t>(fit, 1, std::max(channels, 1)));
}

ContentionShares collective_contention(const HardwareProfile& profile, CollectiveKind kind, Bytes bytes,
                                       int group_size, Scope scope, Seconds duration) {
    if (!profile.collective_contention) {
        throw std::logic_error("collective_contention: profile " + profile.name +
                               " has no network.collective_contention (check_fits_profile)");
    }
    const CollectiveContention& c = *profile.collective_contention;
    ContentionShares s;
    s.channels = nccl_active_channels(
        scope == Scope::IntraNode ? c.intra_node_channels : c.inter_node_channels, bytes);
    s.sm_share = static_cast<double>(s.channels) / profile.num_sms;
    if (duration.value > 0.0 && group_size > 1) {
        const double bus_bytes = static_cast<double>(bytes.value) * busbw_factor(kind, group_size);
        const double hbm_rate = hbm_bytes_per_bus_byte(c, kind) * bus_bytes / duration.value;
        s.hbm_share = std::min(kMaxHbmShare, hbm_rate / (profile.hbm_GBps * kBytesPerGB));
    }
    return s;
}

OverlapSlowdown overlap_slowdown(const ContentionShares& shares) {
    return {1.0 / (1.0 - shares.sm_share), 1.0 / (1.0 - shares.hbm_share)};
}

}  // namespace trainsim::cost
