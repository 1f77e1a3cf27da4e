// Scaling one kind of a loaded hardware profile's rates (trainsim whatif, issue 20): "what if the NICs
// were 10 % faster" is the same profile with every NIC-bandwidth figure multiplied by 1.1.
#pragma once

#include <string>
#include <vector>

#include "sim/cost/hardware_profile.h"

namespace trainsim::cost {

/// The profile figures whatif nudges, each a group of fields that measure one thing.
enum class ProfileParameter {
    GemmEfficiency,   // every tensor-core efficiency: GEMM (BF16, FP8), attention, FlashAttention curves
    HbmBandwidth,     // hbm_GBps
    NvlinkBandwidth,  // intra_node busbw curve and p2p_GBps
    NvlinkLatency,    // intra_node latency_base_us, latency_per_hop_us, p2p_latency_us
    NicBandwidth,     // inter_node nic_GBps
    NicLatency,       // inter_node latency_base_us, ring/tree hop latencies, p2p_latency_us
    LaunchOverhead,   // gemm_min_kernel_us, memory_bound launch_us, and the host section's costs
};

[[nodiscard]] const std::vector<ProfileParameter>& all_profile_parameters();
/// "NIC bandwidth", "GEMM efficiency", ...
[[nodiscard]] const char* to_string(ProfileParameter p);
/// "nic_bandwidth", ... (JSON and CSV keys)
[[nodiscard]] const char* key_of(ProfileParameter p);

/// `profile` with parameter `p` multiplied by `factor` (> 0). Efficiencies are fractions of a peak, so
/// they stop at 1.0. Each changed curve's and the profile's description say what was scaled.
[[nodiscard]] HardwareProfile scale_profile(HardwareProfile profile, ProfileParameter p, double factor);

}  // namespace trainsim::cost
