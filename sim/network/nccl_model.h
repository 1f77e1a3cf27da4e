// NCCL's own cost model for choosing a collective's algorithm and protocol (src/graph/tuning.cc of
// NVIDIA/nccl @5067397: ncclTopoTuneModel and ncclTopoGetAlgoTime; hardware.md §5.2): for each
// algorithm (ring, tree, and on NVSwitch generations with NVLink SHARP: NVLS, NVLS tree) and protocol
// (LL, LL128, Simple) a latency and a bandwidth, and NCCL runs the pair of least latency + bytes /
// bandwidth. The constants below are NCCL's defaults, cited by name.
#pragma once

#include <cstdint>

#include "sim/core/units.h"
#include "sim/cost/cost_model.h"

namespace trainsim::network {

/// NVLS: the all-reduce reduced in the NVSwitch (NVLink SHARP), across nodes only with SHARP in the IB
/// switches (NCCL's CollNet); NvlsTree: NVLS inside each node and a tree between nodes.
enum class Algorithm : std::uint8_t { Ring, Tree, Nvls, NvlsTree };
enum class Protocol : std::uint8_t { LL, LL128, Simple };
/// The compute-capability row of NCCL's tables (index NCCL_{VOLTA,AMPERE,HOPPER,BLACKWELL}_COMPCAP_IDX).
enum class GpuGeneration : std::uint8_t { Volta, Ampere, Hopper, Blackwell };

[[nodiscard]] const char* to_string(Algorithm a);
[[nodiscard]] const char* to_string(Protocol p);

/// What NCCL knows of a communicator when it tunes: its size and spread, and its graph's channels.
struct Communicator {
    std::int64_t ranks = 2;
    std::int64_t nodes = 2;
    std::int64_t channels = 1;       // ring/tree channels (one per NIC the group drives, across nodes)
    double bw_per_channel_GBps = 0;  // the graph's per-channel bandwidth (bwIntra, or bwInter > 2 nodes)
    GpuGeneration generation = GpuGeneration::Ampere;
    bool amd_host = false;  // NCCL's cpuVendor: AMD hosts get other LL caps and a 2 µs network overhead
    // NCCL's NVLS graph (search.cc), 0 channels when the NVSwitch has no NVLink SHARP (see nvls_graph).
    std::int64_t nvls_channels = 0;
    double nvls_bw_intra_GBps = 0;  // the NVLS graph's bwIntra and bwInter per channel
    double nvls_bw_inter_GBps = 0;
    bool collnet = false;  // SHARP in the IB switches (NCCL_COLLNET_ENABLE): NVLS across nodes
};

/// The NVLS graph NCCL's topology search finds (search.cc ncclTopoCompute), or none.
struct NvlsGraph {
    std::int64_t channels = 0;
    double bw_intra_GBps = 0;
    double bw_inter_GBps = 0;
};

/// NCCL searches an NVLS graph only with an NVSwitch and compute capability >= 9.0 (search.cc: "if
/// (graph->pattern == NCCL_TOPO_PATTERN_NVLS && (system->nodes[NVS].count == 0 || ccMin < 90)) return"):
/// Hopper and Blackwell. One channel per GPU of the node (at most NCCL_MAX_NVLS_ARITY 32), or per NIC
/// across nodes; each channel's head GPU carries twice the channel's rate over its NVLinks and every other
/// GPU once, so the per-channel bwIntra is the fastest of NCCL's speed steps with (channels + 1) × speed
/// within `nvlink_GBps` (one GPU's NVLink, NCCL's 18 × SM90_NVLINK_BW 20.6 on H100). On one node NCCL
/// then raises bwInter a step at a time while it is below 2 × bwIntra; across nodes bwInter is the
/// fastest step within one NIC's `nic_GBps`.
[[nodiscard]] NvlsGraph nvls_graph(GpuGeneration generation, bool nvswitch_sharp, std::int64_t gpus_per_node,
                                   std::int64_t nodes, std::int64_t nics, double nvlink_GBps,
                                   double nic_GBps);

struct AlgorithmChoice {
    Algorithm algorithm = Algorithm::Ring;
    Protocol protocol = Protocol::Simple;
    double latency_us = 0.0;
    /// NCCL's "bandwidth" of the pair: algorithm bandwidth, time = latency + bytes / this.
    double algbw_GBps = 0.0;
    [[nodiscard]] Seconds time(Bytes bytes) const {
        return Seconds{latency_us * 1e-6 + static_cast<double>(bytes.value) / (algbw_GBps * 1e9)};
    }
};

/// NCCL's estimate for one (algorithm, protocol); algbw 0 when NCCL would not use it.
[[nodiscard]] AlgorithmChoice nccl_estimate(cost::CollectiveKind kind, const Communicator& comm, Algorithm a,
                                            Protocol p, Bytes bytes);

/// The (algorithm, protocol) NCCL picks for `bytes`: the least estimated time (ties go to the first in
/// NCCL's loop order: tree, ring, then NVLS and NVLS tree; LL before LL128 before Simple). NCCL
/// disables NVLS tree on one node and NVLS across nodes without CollNet (tuning.cc).
[[nodiscard]] AlgorithmChoice nccl_choose(cost::CollectiveKind kind, const Communicator& comm, Bytes bytes);

}  // namespace trainsim::network
