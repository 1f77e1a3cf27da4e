// The cluster as a Boost.Graph: GPUs, NVSwitch domains, NICs, leaf, spine and core switches, joined by
// directed links (one per direction: links are full duplex) of a given capacity. Routes between GPUs
// are found on it; the flow model shares the links' capacities among the transfers that cross them.
//
// Parallel uplinks between two switch tiers (ECMP across spines) are one link of their summed capacity:
// a fluid model of ideal ECMP spreading, without hash collisions.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/network/topology_spec.h"

namespace trainsim::network {

enum class VertexKind : std::uint8_t { Gpu, NvSwitch, Nic, Leaf, Spine, Core };

struct VertexProps {
    VertexKind kind = VertexKind::Gpu;
    std::int64_t index = 0;  // GPU: global rank; NIC: node·nics + nic; switches: their own count
};
struct LinkProps {
    std::int32_t id = 0;  // dense link id, 0..num_links-1 (its endpoints and capacity: Topology's links_)
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, VertexProps, LinkProps>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
using LinkId = std::int32_t;

class Topology {
public:
    /// A cluster of ceil(num_gpus / gpus_per_node) hosts of `spec`'s shape.
    Topology(const TopologySpec& spec, std::int64_t num_gpus);

    [[nodiscard]] const TopologySpec& spec() const { return spec_; }
    [[nodiscard]] const Graph& graph() const { return graph_; }
    [[nodiscard]] std::int64_t num_gpus() const { return num_gpus_; }
    [[nodiscard]] std::int64_t num_links() const { return static_cast<std::int64_t>(links_.size()); }
    [[nodiscard]] double capacity_GBps(LinkId l) const {
        return links_[static_cast<std::size_t>(l)].capacity_GBps;
    }
    /// "node 3 nic 5 -> leaf 0.5" and the like.
    [[nodiscard]] std::string link_name(LinkId l) const;

    [[nodiscard]] std::int64_t node_of(std::int64_t gpu) const { return gpu / spec_.gpus_per_node; }
    [[nodiscard]] std::int64_t nvlink_domain_of(std::int64_t gpu) const {
        return gpu / spec_.nvlink_domain_gpus;
    }
    /// The NIC (rail) GPU `gpu` sends through: local index · nics / gpus_per_node.
    [[nodiscard]] std::int64_t rail_of(std::int64_t gpu) const {
        return (gpu % spec_.gpus_per_node) * spec_.nics_per_node / spec_.gpus_per_node;
    }

    /// The links a transfer from GPU `from` to GPU `to` crosses: over NVLink inside one NVLink domain,
    /// else out through `from`'s NIC, across the fabric by a shortest path, and in through `to`'s NIC.
    [[nodiscard]] const std::vector<LinkId>& route(std::int64_t from, std::int64_t to) const;

private:
    Vertex add_vertex(VertexKind kind, std::int64_t index);
    void add_duplex(Vertex a, Vertex b, double capacity_GBps);
    /// The switch-to-switch links from leaf `from` to leaf `to` (a shortest path over the switches).
    [[nodiscard]] const std::vector<LinkId>& switch_path(Vertex from, Vertex to) const;

    struct LinkRecord {
        Vertex from, to;
        double capacity_GBps;
    };

    TopologySpec spec_;
    std::int64_t num_gpus_;
    Graph graph_;
    std::vector<LinkRecord> links_;
    std::vector<Vertex> gpu_vertex_, nvswitch_vertex_, nic_vertex_;
    // GPU → NVSwitch, NVSwitch → GPU, GPU → NIC and NIC → GPU links, by GPU.
    std::vector<LinkId> gpu_up_, gpu_down_, gpu_to_nic_, nic_to_gpu_;
    // NIC → leaf and leaf → NIC links and each NIC's leaf, by NIC.
    std::vector<LinkId> nic_up_, nic_down_;
    std::vector<Vertex> nic_leaf_;
    // Routes by (from GPU, to GPU) and switch paths by (from leaf, to leaf), found once each: a program
    // asks for the same pairs again and again (every micro-batch's sends, every layer's collectives).
    mutable std::unordered_map<std::uint64_t, std::vector<LinkId>> routes_;
    mutable std::unordered_map<std::uint64_t, std::vector<LinkId>> switch_paths_;
};

}  // namespace trainsim::network
