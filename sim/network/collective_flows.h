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
    /// With `senders` (sorted global ranks; empty: every member), only the traffic those members send:
    /// their share of the collective, for groups whose members each run their own flow (the expert
    /// groups, simulated rank by rank), so that the shares of all members add up to the collective.
    [[nodiscard]] NetworkFlow collective(cost::CollectiveKind kind, Bytes bytes,
                                         std::span<const std::vector<std::int64_t>> copies,
                                         std::span<const std::int64_t> senders = {}) const;
    /// A send of `bytes` for each (from, to) pair in `copies`.
    [[nodiscard]] NetworkFlow transfer(Bytes bytes,
                                       std::span<const std::pair<std::int64_t, std::int64_t>> copies) const;
    /// One step of a ring exchange (context parallelism's ring attention): every member of each copy
    /// sends `bytes` to the next member in its list and receives from the previous one, all at once;
    /// `reverse` sends to the previous member instead. The step ends when its slowest hop does.
    [[nodiscard]] NetworkFlow ring_exchange(Bytes bytes, std::span<const std::vector<std::int64_t>> copies,
                                            bool reverse) const;

    /// What NCCL would know of a group spanning NVLink domains (for reports and tests).
    [[nodiscard]] Communicator communicator(std::span<const std::int64_t> members) const;

private:
    /// The route's links, unless `senders` is given and does not hold `from`.
    void add_route(NetworkFlow& f, std::int64_t from, std::int64_t to, double weight,
                   std::span<const std::int64_t> senders = {}) const;
    /// Sends of `bytes` between pairs as one flow at the profile's point-to-point rate and latency, of
    /// NVLink or, when any pair leaves its NVLink domain, of the NIC.
    [[nodiscard]] NetworkFlow
    point_to_point(Bytes bytes, std::span<const std::pair<std::int64_t, std::int64_t>> pairs) const;
    /// An all-to-all: each member sends S/n to every other member (nccl-tests' alltoall).
    [[nodiscard]] NetworkFlow all_to_all(Bytes bytes, std::span<const std::vector<std::int64_t>> copies,
                                         std::span<const std::int64_t> senders) const;
    void add_ring(NetworkFlow& f, std::span<const std::int64_t> members, double weight,
                  std::span<const std::int64_t> senders) const;
    void add_tree(NetworkFlow& f, std::span<const std::int64_t> members,
                  std::span<const std::int64_t> senders) const;
    /// The members grouped by host, hosts in order, each host's members in rank order.
    [[nodiscard]] std::vector<std::vector<std::int64_t>> by_node(std::span<const std::int64_t> members) const;

    const Topology& topology_;
    const cost::CostModel& cost_;
    GpuGeneration generation_;
};

}  // namespace trainsim::network
