#include "sim/network/collective_flows.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace trainsim::network {

namespace {

// nccl-tests' bus-bandwidth factor: bytes each ring edge carries per byte of S.
double ring_factor(cost::CollectiveKind kind, std::int64_t n) {
    const auto dn = static_cast<double>(n);
    return kind == cost::CollectiveKind::AllReduce ? 2.0 * (dn - 1.0) / dn : (dn - 1.0) / dn;
}

void merge_uses(NetworkFlow& f) {
    std::sort(f.uses.begin(), f.uses.end());
    std::vector<std::pair<LinkId, double>> merged;
    for (const auto& [link, weight] : f.uses) {
        if (!merged.empty() && merged.back().first == link) {
            merged.back().second += weight;
        } else {
            merged.emplace_back(link, weight);
        }
    }
    f.uses = std::move(merged);
}

}  // namespace

CollectiveFlows::CollectiveFlows(const Topology& topology, const cost::CostModel& cost,
                                 GpuGeneration generation)
    : topology_(topology), cost_(cost), generation_(generation) {}

void CollectiveFlows::add_route(NetworkFlow& f, std::int64_t from, std::int64_t to, double weight,
                                std::span<const std::int64_t> senders) const {
    if (!senders.empty() && !std::binary_search(senders.begin(), senders.end(), from)) {
        return;
    }
    for (const LinkId l : topology_.route(from, to)) {
        f.uses.emplace_back(l, weight);
    }
}

std::vector<std::vector<std::int64_t>> CollectiveFlows::by_node(std::span<const std::int64_t> members) const {
    std::map<std::int64_t, std::vector<std::int64_t>> nodes;
    for (const std::int64_t m : members) {
        nodes[topology_.node_of(m)].push_back(m);
    }
    std::vector<std::vector<std::int64_t>> out;
    for (auto& [node, ranks] : nodes) {
        std::sort(ranks.begin(), ranks.end());
        out.push_back(std::move(ranks));
    }
    return out;
}

Communicator CollectiveFlows::communicator(std::span<const std::int64_t> members) const {
    const auto hosts = by_node(members);
    std::vector<std::int64_t> rails;
    for (const std::int64_t m : hosts.front()) {
        rails.push_back(topology_.rail_of(m));
    }
    std::sort(rails.begin(), rails.end());
    rails.erase(std::unique(rails.begin(), rails.end()), rails.end());
    // One channel per NIC the group drives on a host (hardware.md §5.4: "a ring of 8N ranks runs 8
    // rail-aligned channels, one per NIC"), each at one NIC's rate.
    const TopologySpec& spec = topology_.spec();
    Communicator c{static_cast<std::int64_t>(members.size()),
                   static_cast<std::int64_t>(hosts.size()),
                   static_cast<std::int64_t>(rails.size()),
                   spec.nic_GBps,
                   generation_,
                   spec.amd_host};
    const NvlsGraph g = nvls_graph(generation_, spec.nvls, static_cast<std::int64_t>(hosts.front().size()),
                                   c.nodes, c.channels, spec.nvlink_link_GBps, spec.nic_GBps);
    c.nvls_channels = g.channels;
    c.nvls_bw_intra_GBps = g.bw_intra_GBps;
    c.nvls_bw_inter_GBps = g.bw_inter_GBps;
    c.collnet = spec.sharp;
    return c;
}

// Ring order as NCCL builds it across hosts: a host's members in turn, then on to the next host. An edge
// between hosts is spread over the rails of the sending host's members (NCCL's channels, one per NIC).
void CollectiveFlows::add_ring(NetworkFlow& f, std::span<const std::int64_t> members, double weight,
                               std::span<const std::int64_t> senders) const {
    const auto hosts = by_node(members);
    for (std::size_t h = 0; h < hosts.size(); ++h) {
        const auto& here = hosts[h];
        const auto& next = hosts[(h + 1) % hosts.size()];
        for (std::size_t i = 0; i + 1 < here.size(); ++i) {
            add_route(f, here[i], here[i + 1], weight, senders);
        }
        if (hosts.size() == 1) {
            add_route(f, here.back(), here.front(), weight, senders);
            continue;
        }
        const double share = weight / static_cast<double>(here.size());
        for (std::size_t k = 0; k < here.size(); ++k) {
            add_route(f, here[k], next[k % next.size()], share, senders);
        }
    }
}

// NCCL's double binary tree across hosts (each tree carries half the data, reduced up and broadcast
// down), with a chain through each host's members; the flow's progress is S.
void CollectiveFlows::add_tree(NetworkFlow& f, std::span<const std::int64_t> members,
                               std::span<const std::int64_t> senders) const {
    const auto hosts = by_node(members);
    const std::size_t h = hosts.size();
    for (const auto& here : hosts) {
        for (std::size_t i = 0; i + 1 < here.size(); ++i) {
            add_route(f, here[i], here[i + 1], 1.0, senders);
            add_route(f, here[i + 1], here[i], 1.0, senders);
        }
    }
    for (int tree = 0; tree < 2; ++tree) {
        for (std::size_t j = 1; j < h; ++j) {
            // Tree 0 is a binary heap over hosts; tree 1 mirrors it, so a host inner in one is a leaf in the
            // other.
            const std::size_t child = tree == 0 ? j : h - 1 - j;
            const std::size_t parent = tree == 0 ? (j - 1) / 2 : h - 1 - (j - 1) / 2;
            const auto& c = hosts[child];
            const auto& p = hosts[parent];
            const double share = 0.5 / static_cast<double>(c.size());
            for (std::size_t k = 0; k < c.size(); ++k) {
                add_route(f, c[k], p[k % p.size()], share, senders);
                add_route(f, p[k % p.size()], c[k], share, senders);
            }
        }
    }
}

NetworkFlow CollectiveFlows::collective(cost::CollectiveKind kind, Bytes bytes,
                                        std::span<const std::vector<std::int64_t>> copies,
                                        std::span<const std::int64_t> senders) const {
    if (copies.empty() || copies.front().size() < 2 || kind == cost::CollectiveKind::SendRecv) {
        throw std::invalid_argument("CollectiveFlows::collective: groups of >= 2 ranks, not send_recv");
    }
    if (kind == cost::CollectiveKind::AllToAll) {
        return all_to_all(bytes, copies, senders);
    }
    const std::vector<std::int64_t>& first = copies.front();
    const auto n = static_cast<std::int64_t>(first.size());
    NetworkFlow f;
    bool one_domain = true;
    for (const std::int64_t m : first) {
        one_domain = one_domain && topology_.nvlink_domain_of(m) == topology_.nvlink_domain_of(first.front());
    }
    const double factor = ring_factor(kind, n);
    if (one_domain) {
        // The measured NVLink curve, latency and all (cost_model.cc), spread over each member's ports.
        const Seconds alone =
            cost_.collective(kind, bytes, static_cast<int>(n), cost::Scope::IntraNode, 1, 0);
        const auto& l = cost_.profile().intra_node;
        const int steps =
            kind == cost::CollectiveKind::AllReduce ? 2 * static_cast<int>(n - 1) : static_cast<int>(n - 1);
        f.latency = Seconds{std::min(alone.value, l.ring_latency_us(steps) * 1e-6)};
        f.amount_bytes = factor * static_cast<double>(bytes.value);
        const double bandwidth_s = alone.value - f.latency.value;
        f.max_rate_GBps =
            bandwidth_s > 0.0 ? f.amount_bytes / bandwidth_s / 1e9 : topology_.spec().nvlink_GBps;
        for (const auto& copy : copies) {
            add_ring(f, copy, 1.0, senders);
        }
    } else {
        const AlgorithmChoice c = nccl_choose(kind, communicator(first), bytes);
        f.algorithm = c.algorithm;
        f.protocol = c.protocol;
        f.latency = Seconds{c.latency_us * 1e-6};
        if (c.algorithm == Algorithm::Ring) {
            f.amount_bytes = factor * static_cast<double>(bytes.value);
            f.max_rate_GBps = factor * c.algbw_GBps;  // nccl busbw
            for (const auto& copy : copies) {
                add_ring(f, copy, 1.0, senders);
            }
        } else {
            // Tree, NVLS tree and NVLS over SHARP: S at the algorithm bandwidth. Their links are taken as
            // the double binary tree's (NVLS reduces inside the switch, so this over-counts NVLink traffic,
            // which the NIC-bound inter-node part does not feel).
            f.amount_bytes = static_cast<double>(bytes.value);
            f.max_rate_GBps = c.algbw_GBps;
            for (const auto& copy : copies) {
                add_tree(f, copy, senders);
            }
        }
    }
    merge_uses(f);
    return f;
}

NetworkFlow
CollectiveFlows::point_to_point(Bytes bytes,
                                std::span<const std::pair<std::int64_t, std::int64_t>> pairs) const {
    bool one_domain = true;
    for (const auto& [a, b] : pairs) {
        one_domain = one_domain && topology_.nvlink_domain_of(a) == topology_.nvlink_domain_of(b);
    }
    NetworkFlow f;
    const auto& profile = cost_.profile();
    f.amount_bytes = static_cast<double>(bytes.value);
    // The profile's send/recv model (cost_model.cc): one pair's bandwidth and latency.
    f.max_rate_GBps = one_domain ? profile.intra_node.p2p_GBps : profile.inter_node.nic_GBps;
    f.latency =
        Seconds{(one_domain ? profile.intra_node.p2p_latency_us : profile.inter_node.p2p_latency_us) * 1e-6};
    for (const auto& [a, b] : pairs) {
        add_route(f, a, b, 1.0);
    }
    merge_uses(f);
    return f;
}

NetworkFlow CollectiveFlows::transfer(Bytes bytes,
                                      std::span<const std::pair<std::int64_t, std::int64_t>> copies) const {
    if (copies.empty()) {
        throw std::invalid_argument("CollectiveFlows::transfer: no pair");
    }
    // Folded copies lie on the nodes as the simulated pair does: the first pair decides the links' kind.
    NetworkFlow f = point_to_point(bytes, copies.first(1));
    f.uses.clear();
    for (const auto& [a, b] : copies) {
        add_route(f, a, b, 1.0);
    }
    merge_uses(f);
    return f;
}

NetworkFlow CollectiveFlows::ring_exchange(Bytes bytes, std::span<const std::vector<std::int64_t>> copies,
                                           bool reverse) const {
    if (copies.empty() || copies.front().size() < 2) {
        throw std::invalid_argument("CollectiveFlows::ring_exchange: groups of >= 2 ranks");
    }
    // Every hop of every copy moves at once and the step waits for the last: one flow over all hops, at
    // the rate of the slowest hop's kind (the analytical model's worst hop, Layout::context_ring_hop).
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
    for (const auto& copy : copies) {
        const std::size_t n = copy.size();
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t peer = reverse ? (i + n - 1) % n : (i + 1) % n;
            pairs.emplace_back(copy[i], copy[peer]);
        }
    }
    return point_to_point(bytes, pairs);
}

NetworkFlow CollectiveFlows::all_to_all(Bytes bytes, std::span<const std::vector<std::int64_t>> copies,
                                        std::span<const std::int64_t> senders) const {
    const auto n = static_cast<std::int64_t>(copies.front().size());
    // The copies run as one flow, so it is priced for the widest of them: expert groups of one folded
    // stage can span different numbers of nodes, and none may finish faster than its analytical price.
    int spanned = 1;
    for (const auto& copy : copies) {
        std::vector<std::int64_t> nodes;
        for (const std::int64_t m : copy) {
            nodes.push_back(topology_.node_of(m));
        }
        std::sort(nodes.begin(), nodes.end());
        spanned =
            std::max(spanned, static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin()));
    }
    // Alone, the flow takes the analytical all-to-all's time (cost_model.cc: one point-to-point latency
    // for the group of sends, and its NVLink or NIC bandwidth part); the links' sharing is the flow's.
    const Seconds alone =
        cost_.collective(cost::CollectiveKind::AllToAll, bytes, static_cast<int>(n),
                         spanned > 1 ? cost::Scope::InterNode : cost::Scope::IntraNode, spanned, 0);
    const auto& profile = cost_.profile();
    const double p2p_latency_us =
        spanned > 1 ? profile.inter_node.p2p_latency_us : profile.intra_node.p2p_latency_us;
    NetworkFlow f;
    f.latency = Seconds{std::min(alone.value, p2p_latency_us * 1e-6)};
    // Progress is what one rank sends, S·(n−1)/n; each of its n−1 peers gets S/n of it.
    f.amount_bytes = ring_factor(cost::CollectiveKind::AllToAll, n) * static_cast<double>(bytes.value);
    const double bandwidth_s = alone.value - f.latency.value;
    f.max_rate_GBps = bandwidth_s > 0.0 ? f.amount_bytes / bandwidth_s / 1e9 : topology_.spec().nvlink_GBps;
    const double weight = 1.0 / static_cast<double>(n - 1);
    for (const auto& copy : copies) {
        for (const std::int64_t a : copy) {
            for (const std::int64_t b : copy) {
                if (a != b) {
                    add_route(f, a, b, weight, senders);
                }
            }
        }
    }
    merge_uses(f);
    return f;
}

}  // namespace trainsim::network
