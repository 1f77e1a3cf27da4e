// The shape of a cluster's network (scenario key hardware.topology, scenarios/README.md): how GPUs
// reach each other inside an NVLink domain, which NIC each GPU uses, and how NICs reach each other
// through leaf, spine and core switches. Rates come from the hardware profile; the shape from here.
#pragma once

#include <cstdint>
#include <string>

namespace trainsim::network {

enum class FabricKind : std::uint8_t {
    /// NIC r of every node of a scalable unit goes to that unit's leaf r (DGX SuperPOD): a rail-aligned
    /// transfer stays on one leaf.
    RailOptimized,
    /// Every NIC of a node goes to the same leaf, which serves `nodes_per_leaf` nodes.
    FatTree,
};

struct TopologySpec {
    FabricKind kind = FabricKind::RailOptimized;
    std::int64_t gpus_per_node = 8;       // GPUs of one host (the layout's node)
    std::int64_t nvlink_domain_gpus = 8;  // GPUs under one NVSwitch domain (8; 72 for an NVL72 rack)
    std::int64_t nics_per_node = 8;       // compute NICs per host; GPU g uses NIC g·nics/gpus
    std::int64_t nodes_per_leaf = 20;     // hosts per scalable unit (one leaf per rail, or one leaf)
    double oversubscription = 1.0;        // leaf tier: downlink capacity / uplink capacity
    std::int64_t nodes_per_pod = 0;       // hosts under one spine group; 0: a single spine tier
    double pod_oversubscription = 1.0;    // spine tier: downlink capacity / uplink to the core
    bool amd_host = false;                // host CPU vendor, which NCCL's tuning reads (DGX A100: AMD EPYC)
    bool nvls = false;                    // the NVSwitch reduces in the switch (NVLink SHARP, NCCL's NVLS)
    bool sharp = false;                   // the IB switches reduce in the network (SHARP, NCCL's CollNet)
    // Rates, GB/s per direction (from the hardware profile).
    double nvlink_GBps = 0.0;       // one GPU's NVLink bandwidth into its NVSwitch domain
    double nic_GBps = 0.0;          // one NIC (one rail)
    double nvlink_link_GBps = 0.0;  // one GPU's NVLink as NCCL's topology counts it (its NVLS graph search)
};

[[nodiscard]] const char* to_string(FabricKind k);

}  // namespace trainsim::network
