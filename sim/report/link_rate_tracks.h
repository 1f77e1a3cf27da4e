// The network's counter tracks in a trace of a flow-model run (hardware.network_model=flow): one per NIC
// direction ("node 3 NIC 2 tx") and one per switch-to-switch link ("leaf 4 -> spine 0") that carried
// traffic, each the link's load in bytes/s over time as the engine's max-min sharing set it (a step at
// every flow start, end and reshare). Links inside a host (NVLink ports, GPU to NIC) are left out: a
// NIC's tracks already show what leaves and enters the node.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"
#include "sim/report/perfetto_trace.h"

namespace trainsim::report {

/// One point of a link's counter: its load from `time` on.
struct LinkRateSample {
    SimTime time{};
    std::int64_t bytes_per_second = 0;
    friend bool operator==(const LinkRateSample&, const LinkRateSample&) = default;
};

struct LinkRateTrack {
    std::string name;
    std::vector<LinkRateSample> samples;
};

/// Which links (engine resources) a trace records, for engine::RunOptions::record_rates_of: every NIC
/// direction and switch-to-switch link, or with `ranks` (--trace-ranks' inclusive ranges of global ranks)
/// only the NICs of the nodes that hold those ranks, and still every switch-to-switch link. Recording
/// only these keeps the NVLink ports' many collectives out of a traced run's memory.
[[nodiscard]] std::vector<char> traced_links(const network::Topology& topology,
                                             const std::vector<std::pair<std::int64_t, std::int64_t>>& ranks);

/// The tracks a trace shows, NICs first (by node, NIC, tx before rx), then the fabric links: each the
/// value the window opens with (at its start), then every change inside it. A link whose load is 0
/// throughout the window has none. Empty for a run without a topology or without recorded rates
/// (engine::RunOptions::record_rates_of). Every trace format writes these same samples.
[[nodiscard]] std::vector<LinkRateTrack> link_rate_tracks(const program::IterationProgram& program,
                                                          const engine::RunResult& run,
                                                          const TraceOptions& options);

}  // namespace trainsim::report
