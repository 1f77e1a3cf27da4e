#include "sim/report/link_rate_tracks.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace trainsim::report {
namespace {

const char* switch_name(network::VertexKind k) {
    switch (k) {
    case network::VertexKind::Leaf:
        return "leaf";
    case network::VertexKind::Spine:
        return "spine";
    case network::VertexKind::Core:
        return "core";
    default:
        return nullptr;
    }
}

// The trace's name of the link from `from` to `to`, or "" for a link inside a host.
std::string track_name(const network::VertexProps& from, const network::VertexProps& to,
                       std::int64_t nics_per_node) {
    auto nic = [nics_per_node](std::int64_t index, const char* direction) {
        return "node " + std::to_string(index / nics_per_node) + " NIC " +
               std::to_string(index % nics_per_node) + " " + direction;
    };
    const char* from_switch = switch_name(from.kind);
    const char* to_switch = switch_name(to.kind);
    if (from.kind == network::VertexKind::Nic && to_switch != nullptr) {
        return nic(from.index, "tx");
    }
    if (to.kind == network::VertexKind::Nic && from_switch != nullptr) {
        return nic(to.index, "rx");
    }
    if (from_switch != nullptr && to_switch != nullptr) {
        return std::string(from_switch) + " " + std::to_string(from.index) + " -> " + to_switch + " " +
               std::to_string(to.index);
    }
    return "";
}

}  // namespace

std::vector<char> traced_links(const network::Topology& topology,
                               const std::vector<std::pair<std::int64_t, std::int64_t>>& ranks) {
    const std::int64_t nics = topology.spec().nics_per_node;
    std::vector<char> keep_nic;  // by NIC index; empty: all
    if (!ranks.empty()) {
        keep_nic.assign(static_cast<std::size_t>(topology.node_of(topology.num_gpus() - 1) + 1) *
                            static_cast<std::size_t>(nics),
                        0);
        for (const auto& [first, last] : ranks) {
            for (std::int64_t node = topology.node_of(first); node <= topology.node_of(last); ++node) {
                std::fill_n(keep_nic.begin() + node * nics, nics, 1);
            }
        }
    }
    const network::Graph& g = topology.graph();
    std::vector<char> record(static_cast<std::size_t>(topology.num_links()), 0);
    for (const auto e : boost::make_iterator_range(boost::edges(g))) {
        const network::VertexProps& from = g[boost::source(e, g)];
        const network::VertexProps& to = g[boost::target(e, g)];
        if (track_name(from, to, nics).empty()) {
            continue;
        }
        const bool nic = from.kind == network::VertexKind::Nic || to.kind == network::VertexKind::Nic;
        const std::int64_t index = from.kind == network::VertexKind::Nic ? from.index : to.index;
        record[static_cast<std::size_t>(g[e].id)] =
            !nic || keep_nic.empty() || keep_nic[static_cast<std::size_t>(index)] ? 1 : 0;
    }
    return record;
}

std::vector<LinkRateTrack> link_rate_tracks(const program::IterationProgram& program,
                                            const engine::RunResult& run, const TraceOptions& options) {
    if (!program.topology) {
        return {};
    }
    const network::Topology& topology = *program.topology;
    const network::Graph& g = topology.graph();
    // (not a NIC's, NIC index, rx, link, name): NICs by node and NIC, tx before rx, then the fabric by
    // link id.
    std::vector<std::tuple<bool, std::int64_t, bool, network::LinkId, std::string>> order;
    for (const auto e : boost::make_iterator_range(boost::edges(g))) {
        const network::LinkId l = g[e].id;
        if (static_cast<std::size_t>(l) >= run.resource_rates.size() ||
            run.resource_rates[static_cast<std::size_t>(l)].empty()) {
            continue;
        }
        const network::VertexProps& from = g[boost::source(e, g)];
        const network::VertexProps& to = g[boost::target(e, g)];
        std::string name = track_name(from, to, topology.spec().nics_per_node);
        if (name.empty()) {
            continue;  // inside a host
        }
        if (from.kind == network::VertexKind::Nic) {
            order.emplace_back(false, from.index, false, l, std::move(name));
        } else if (to.kind == network::VertexKind::Nic) {
            order.emplace_back(false, to.index, true, l, std::move(name));
        } else {
            order.emplace_back(true, 0, false, l, std::move(name));
        }
    }
    std::sort(order.begin(), order.end());
    std::vector<LinkRateTrack> tracks;
    for (auto& [fabric, nic, rx, l, name] : order) {
        const std::vector<engine::RateSample>& rates = run.resource_rates[static_cast<std::size_t>(l)];
        auto bytes = [](double rate) { return static_cast<std::int64_t>(std::llround(rate)); };
        std::size_t i = 0;
        std::int64_t opening = 0;
        for (; i < rates.size() && rates[i].time <= options.window_start; ++i) {
            opening = bytes(rates[i].rate);
        }
        LinkRateTrack track{std::move(name), {{options.window_start, opening}}};
        bool busy = opening != 0;
        for (; i < rates.size() && rates[i].time <= options.window_end; ++i) {
            // The engine's running totals can differ from the last value by a rounding residue.
            const std::int64_t value = bytes(rates[i].rate);
            if (value != track.samples.back().bytes_per_second) {
                track.samples.push_back({rates[i].time, value});
                busy = busy || value != 0;
            }
        }
        if (busy) {
            tracks.push_back(std::move(track));
        }
    }
    return tracks;
}

}  // namespace trainsim::report
