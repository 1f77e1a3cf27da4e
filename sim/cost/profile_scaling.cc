#include "sim/cost/profile_scaling.h"

#include <algorithm>
#include <cstdio>

namespace trainsim::cost {

namespace {

std::string factor_text(double factor) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, " ×%g", factor);
    return buffer;
}

// An efficiency is a fraction of a peak: a nudge cannot take it past the peak.
double scaled_efficiency(double y, double factor) {
    return std::min(1.0, y * factor);
}

void scale_curve(Curve& curve, double factor, bool is_efficiency) {
    for (double& y : curve.y) {
        y = is_efficiency ? scaled_efficiency(y, factor) : y * factor;
    }
    if (!curve.y.empty()) {
        curve.source += factor_text(factor) + " (whatif)";
    }
}

}  // namespace

const std::vector<ProfileParameter>& all_profile_parameters() {
    static const std::vector<ProfileParameter> all = {
        ProfileParameter::GemmEfficiency, ProfileParameter::HbmBandwidth, ProfileParameter::NvlinkBandwidth,
        ProfileParameter::NvlinkLatency,  ProfileParameter::NicBandwidth, ProfileParameter::NicLatency,
        ProfileParameter::LaunchOverhead};
    return all;
}

const char* to_string(ProfileParameter p) {
    switch (p) {
    case ProfileParameter::GemmEfficiency:
        return "GEMM efficiency";
    case ProfileParameter::HbmBandwidth:
        return "HBM bandwidth";
    case ProfileParameter::NvlinkBandwidth:
        return "NVLink bandwidth";
    case ProfileParameter::NvlinkLatency:
        return "NVLink latency";
    case ProfileParameter::NicBandwidth:
        return "NIC bandwidth";
    case ProfileParameter::NicLatency:
        return "NIC latency";
    case ProfileParameter::LaunchOverhead:
        return "launch overhead";
    }
    return "?";
}

const char* key_of(ProfileParameter p) {
    switch (p) {
    case ProfileParameter::GemmEfficiency:
        return "gemm_efficiency";
    case ProfileParameter::HbmBandwidth:
        return "hbm_bandwidth";
    case ProfileParameter::NvlinkBandwidth:
        return "nvlink_bandwidth";
    case ProfileParameter::NvlinkLatency:
        return "nvlink_latency";
    case ProfileParameter::NicBandwidth:
        return "nic_bandwidth";
    case ProfileParameter::NicLatency:
        return "nic_latency";
    case ProfileParameter::LaunchOverhead:
        return "launch_overhead";
    }
    return "?";
}

HardwareProfile scale_profile(HardwareProfile profile, ProfileParameter p, double factor) {
    switch (p) {
    case ProfileParameter::GemmEfficiency:
        scale_curve(profile.gemm_efficiency_vs_flops, factor, true);
        scale_curve(profile.fp8_gemm_efficiency_vs_flops, factor, true);
        scale_curve(profile.flash_forward_efficiency_vs_seq_length, factor, true);
        scale_curve(profile.flash_backward_efficiency_vs_seq_length, factor, true);
        profile.attention_score_efficiency = scaled_efficiency(profile.attention_score_efficiency, factor);
        profile.attention_over_value_efficiency =
            scaled_efficiency(profile.attention_over_value_efficiency, factor);
        break;
    case ProfileParameter::HbmBandwidth:
        profile.hbm_GBps *= factor;
        break;
    case ProfileParameter::NvlinkBandwidth:
        scale_curve(profile.intra_node.busbw_GBps_vs_bytes, factor, false);
        profile.intra_node.p2p_GBps *= factor;
        break;
    case ProfileParameter::NvlinkLatency:
        profile.intra_node.latency_base_us *= factor;
        profile.intra_node.latency_per_hop_us *= factor;
        profile.intra_node.p2p_latency_us *= factor;
        break;
    case ProfileParameter::NicBandwidth:
        profile.inter_node.nic_GBps *= factor;
        break;
    case ProfileParameter::NicLatency:
        profile.inter_node.latency_base_us *= factor;
        profile.inter_node.ring_hop_latency_us *= factor;
        profile.inter_node.tree_hop_latency_us *= factor;
        profile.inter_node.p2p_latency_us *= factor;
        break;
    case ProfileParameter::LaunchOverhead:
        profile.gemm_min_kernel_us *= factor;
        profile.memory_bound_launch_us *= factor;
        if (profile.host) {
            profile.host->kernel_launch_us *= factor;
            profile.host->op_dispatch_us *= factor;
            profile.host->collective_dispatch_us *= factor;
        }
        break;
    }
    profile.description += std::string("; whatif: ") + to_string(p) + factor_text(factor);
    return profile;
}

}  // namespace trainsim::cost
