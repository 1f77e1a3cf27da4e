// Collectives and transfers as flows on the topology (DESIGN.md §8 "Network"): each becomes one flow
// whose progress moves every link it crosses in proportion to that link's share of its traffic, so a
// ring runs at the pace of its most contended link, as a real ring does. Alone on the network a flow
// takes exactly the time of the model it lowers: the measured NVLink curve inside an NVLink domain, and
// NCCL's own algorithm, protocol, latency and bandwidth model (nccl_model.h) across nodes; sharing
// links with other flows only slows it from there.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/network/nccl_model.h"
#include "sim/network/topology.h"

namespace trainsim::network {

/// A flow in network terms: `amount` bytes at most `max_rate_GBps`, over links with weights, then a
/// fixed latency.
struct NetworkFlow {
    double amount_bytes = 0.0;
    double max_rate_GBps = 0.0;
    Seconds latency{0.0};
    std::vector<std::pair<LinkId, double>> uses;  // (link, bytes crossing it per byte of progress)
    Algorithm algorithm = Algorithm::Ring;
    Protocol protocol = Protocol::Simple;
};

class CollectiveFlows {
public:
    CollectiveFlows(const Topology& topology, const cost::CostModel& cost, GpuGeneration generation);

    /// A collective over every group in `copies` at once: identical groups (a folded run's group and the
    /// copies it stands for) run at the same rate, so one flow carries all their traffic. `bytes` is
    /// nccl-tests' S. Each copy lists its members' global ranks.
    [[nodiscard]] NetworkFlow collective(cost::CollectiveKind kind, Bytes bytes,
                                         std::span<const std::vector<std::int64_t>> copies) const;
    /// A send of `bytes` for each (from, to) pair in `copies`.
    [[nodiscard]] NetworkFlow transfer(Bytes bytes,
                                       std::span<const std::pair<std::int64_t, std::int64_t>> copies) const;

    /// What NCCL would know of a group spanning NVLink domains (for reports and tests).
    [[nodiscard]] Communicator communicator(std::span<const std::int64_t> members) const;

private:
    void add_route(NetworkFlow& f, std::int64_t from, std::int64_t to, double weight) const;
    void add_ring(NetworkFlow& f, std::span<const std::int64_t> members, double weight) const;
    void add_tree(NetworkFlow& f, std::span<const std::int64_t> members) const;
    /// The members grouped by host, hosts in order, each host's members in rank order.
    [[nodiscard]] std::vector<std::vector<std::int64_t>> by_node(std::span<const std::int64_t> members) const;

    const Topology& topology_;
    const cost::CostModel& cost_;
    GpuGeneration generation_;
};

}  // namespace trainsim::network
