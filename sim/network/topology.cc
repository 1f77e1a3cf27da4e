#include "sim/network/topology.h"

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <stdexcept>

namespace trainsim::network {

const char* kind_name(FabricKind k) {
    switch (k) {
    case FabricKind::RailOptimized:
        return "rail_optimized";
    case FabricKind::FatTree:
        return "fat_tree";
    }
    return "unknown";
}

namespace {

const char* kind_name(VertexKind k) {
    switch (k) {
    case VertexKind::Gpu:
        return "gpu";
    case VertexKind::NvSwitch:
        return "nvswitch";
    case VertexKind::Nic:
        return "nic";
    case VertexKind::Leaf:
        return "leaf";
    case VertexKind::Spine:
        return "spine";
    case VertexKind::Core:
        return "core";
    }
    return "?";
}

// Boost's filtered_graph wants a default-constructible, assignable predicate: a lambda is neither.
struct IsSwitch {
    const Graph* graph = nullptr;
    bool operator()(Vertex v) const {
        const VertexKind k = (*graph)[v].kind;
        return k == VertexKind::Leaf || k == VertexKind::Spine || k == VertexKind::Core;
    }
};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
    return (a + b - 1) / b;
}

}  // namespace

Vertex Topology::add_vertex(VertexKind kind, std::int64_t index) {
    return boost::add_vertex(VertexProps{kind, index}, graph_);
}

void Topology::add_duplex(Vertex a, Vertex b, double capacity_GBps) {
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
        const auto id = static_cast<LinkId>(links_.size());
        boost::add_edge(from, to, LinkProps{id}, graph_);
        links_.push_back({from, to, capacity_GBps});
    }
}

Topology::Topology(const TopologySpec& spec, std::int64_t num_gpus) : spec_(spec), num_gpus_(num_gpus) {
    if (num_gpus < 1 || spec.gpus_per_node < 1 || spec.nics_per_node < 1 || spec.nodes_per_leaf < 1 ||
        spec.nvlink_domain_gpus < 1 || !(spec.oversubscription >= 1.0) ||
        !(spec.pod_oversubscription >= 1.0) || !(spec.nvlink_GBps > 0.0) || !(spec.nic_GBps > 0.0) ||
        spec.nodes_per_pod < 0) {
        throw std::invalid_argument("Topology: sizes must be >= 1, rates > 0 and oversubscription >= 1");
    }
    const std::int64_t nodes = ceil_div(num_gpus, spec.gpus_per_node);
    const std::int64_t domains = ceil_div(num_gpus, spec.nvlink_domain_gpus);
    // GPUs and their NVLink domains.
    for (std::int64_t d = 0; d < domains; ++d) {
        nvswitch_vertex_.push_back(add_vertex(VertexKind::NvSwitch, d));
    }
    for (std::int64_t g = 0; g < num_gpus; ++g) {
        gpu_vertex_.push_back(add_vertex(VertexKind::Gpu, g));
        gpu_up_.push_back(static_cast<LinkId>(links_.size()));
        gpu_down_.push_back(static_cast<LinkId>(links_.size() + 1));
        add_duplex(gpu_vertex_.back(), nvswitch_vertex_[static_cast<std::size_t>(nvlink_domain_of(g))],
                   spec.nvlink_GBps);
    }
    // NICs, shared by gpus_per_node / nics_per_node GPUs each.
    for (std::int64_t n = 0; n < nodes; ++n) {
        for (std::int64_t i = 0; i < spec.nics_per_node; ++i) {
            nic_vertex_.push_back(add_vertex(VertexKind::Nic, n * spec.nics_per_node + i));
        }
    }
    for (std::int64_t g = 0; g < num_gpus; ++g) {
        const Vertex nic =
            nic_vertex_[static_cast<std::size_t>(node_of(g) * spec.nics_per_node + rail_of(g))];
        gpu_to_nic_.push_back(static_cast<LinkId>(links_.size()));
        nic_to_gpu_.push_back(static_cast<LinkId>(links_.size() + 1));
        add_duplex(gpu_vertex_[static_cast<std::size_t>(g)], nic, spec.nic_GBps);
    }
    // Leaves: one per (scalable unit, rail) when rail-optimised, else one per scalable unit.
    const std::int64_t units = ceil_div(nodes, spec.nodes_per_leaf);
    const std::int64_t leaves_per_unit = spec.kind == FabricKind::RailOptimized ? spec.nics_per_node : 1;
    std::vector<Vertex> leaves;
    for (std::int64_t l = 0; l < units * leaves_per_unit; ++l) {
        leaves.push_back(add_vertex(VertexKind::Leaf, l));
    }
    for (std::int64_t n = 0; n < nodes; ++n) {
        for (std::int64_t i = 0; i < spec.nics_per_node; ++i) {
            const std::int64_t leaf = (n / spec.nodes_per_leaf) * leaves_per_unit +
                                      (spec.kind == FabricKind::RailOptimized ? i : 0);
            nic_up_.push_back(static_cast<LinkId>(links_.size()));
            nic_down_.push_back(static_cast<LinkId>(links_.size() + 1));
            nic_leaf_.push_back(leaves[static_cast<std::size_t>(leaf)]);
            add_duplex(nic_vertex_[static_cast<std::size_t>(n * spec.nics_per_node + i)],
                       leaves[static_cast<std::size_t>(leaf)], spec.nic_GBps);
        }
    }
    if (units == 1 && leaves_per_unit == 1) {
        return;  // one scalable unit on one leaf: every pair of NICs meets there
    }
    // Rail-optimised leaves of one unit still need the spine: a transfer between GPUs of different rails
    // on different hosts (a pipeline send from GPU 7 to GPU 3 of the next host) crosses it.
    // Spines: one aggregated spine per pod (its switches' ECMP bundle), leaves' uplinks at the leaf
    // tier's oversubscription; pods joined by one aggregated core at the spine tier's.
    const std::int64_t nodes_per_pod = spec.nodes_per_pod > 0 ? spec.nodes_per_pod : nodes;
    const std::int64_t units_per_pod = std::max<std::int64_t>(1, nodes_per_pod / spec.nodes_per_leaf);
    const std::int64_t pods = ceil_div(units, units_per_pod);
    std::vector<Vertex> spines;
    for (std::int64_t p = 0; p < pods; ++p) {
        spines.push_back(add_vertex(VertexKind::Spine, p));
    }
    const double leaf_down_GBps =
        static_cast<double>(spec.nodes_per_leaf * spec.nics_per_node / leaves_per_unit) * spec.nic_GBps;
    for (std::int64_t l = 0; l < units * leaves_per_unit; ++l) {
        const std::int64_t unit = l / leaves_per_unit;
        add_duplex(leaves[static_cast<std::size_t>(l)],
                   spines[static_cast<std::size_t>(unit / units_per_pod)],
                   leaf_down_GBps / spec.oversubscription);
    }
    if (pods > 1) {
        const Vertex core = add_vertex(VertexKind::Core, 0);
        const double pod_down_GBps =
            static_cast<double>(units_per_pod * leaves_per_unit) * leaf_down_GBps / spec.oversubscription;
        for (const Vertex s : spines) {
            add_duplex(s, core, pod_down_GBps / spec.pod_oversubscription);
        }
    }
}

std::string Topology::link_name(LinkId l) const {
    const LinkRecord& r = links_[static_cast<std::size_t>(l)];
    auto name = [&](Vertex v) {
        const VertexProps& p = graph_[v];
        return std::string(kind_name(p.kind)) + " " + std::to_string(p.index);
    };
    return name(r.from) + " -> " + name(r.to);
}

const std::vector<LinkId>& Topology::switch_path(Vertex from, Vertex to) const {
    const auto key = (static_cast<std::uint64_t>(from) << 32) | static_cast<std::uint64_t>(to);
    const auto known = switch_paths_.find(key);
    if (known != switch_paths_.end()) {
        return known->second;
    }
    // Breadth-first search over the switches only (leaves, spines, core): a path never re-enters a host.
    const boost::filtered_graph<Graph, boost::keep_all, IsSwitch> fabric(graph_, boost::keep_all{},
                                                                         IsSwitch{&graph_});
    std::vector<Vertex> predecessor(boost::num_vertices(graph_), boost::graph_traits<Graph>::null_vertex());
    predecessor[from] = from;
    boost::breadth_first_search(fabric, from,
                                boost::visitor(boost::make_bfs_visitor(
                                    boost::record_predecessors(predecessor.data(), boost::on_tree_edge{}))));
    if (predecessor[to] == boost::graph_traits<Graph>::null_vertex()) {
        throw std::logic_error("Topology: no path between two leaves");
    }
    std::vector<LinkId> path;
    for (Vertex v = to; v != from; v = predecessor[v]) {
        const auto [e, found] = boost::edge(predecessor[v], v, graph_);
        path.push_back(graph_[e].id);
    }
    return switch_paths_.emplace(key, std::vector<LinkId>(path.rbegin(), path.rend())).first->second;
}

const std::vector<LinkId>& Topology::route(std::int64_t from, std::int64_t to) const {
    if (from < 0 || to < 0 || from >= num_gpus_ || to >= num_gpus_) {
        throw std::invalid_argument("Topology::route: GPU out of range");
    }
    const auto key = (static_cast<std::uint64_t>(from) << 32) | static_cast<std::uint64_t>(to);
    const auto known = routes_.find(key);
    if (known != routes_.end()) {
        return known->second;
    }
    std::vector<LinkId> links;
    const auto f = static_cast<std::size_t>(from);
    const auto t = static_cast<std::size_t>(to);
    if (from == to) {
        // nothing crosses a link
    } else if (nvlink_domain_of(from) == nvlink_domain_of(to)) {
        links = {gpu_up_[f], gpu_down_[t]};
    } else {
        const auto a = static_cast<std::size_t>(node_of(from) * spec_.nics_per_node + rail_of(from));
        const auto b = static_cast<std::size_t>(node_of(to) * spec_.nics_per_node + rail_of(to));
        links.push_back(gpu_to_nic_[f]);
        if (a != b) {  // two GPUs sharing a NIC turn around in it
            links.push_back(nic_up_[a]);
            const std::vector<LinkId>& middle = switch_path(nic_leaf_[a], nic_leaf_[b]);
            links.insert(links.end(), middle.begin(), middle.end());
            links.push_back(nic_down_[b]);
        }
        links.push_back(nic_to_gpu_[t]);
    }
    return routes_.emplace(key, std::move(links)).first->second;
}

}  // namespace trainsim::network
