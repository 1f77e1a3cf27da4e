// What the network did in a flow-model run (hardware.network_model=flow): how busy each link was over
// the iteration, the busiest ones, and how much longer communication took than it would have alone on
// the network (the time contention cost), by kind of traffic.
#pragma once

#include <string>
#include <vector>

#include "sim/core/units.h"
#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"

namespace trainsim::report {

struct LinkUse {
    std::string link;          // "nic 3 -> leaf 3"
    double utilization = 0.0;  // bytes carried / (capacity × iteration time)
    double carried_bytes = 0.0;
};

struct NetworkReport {
    std::string model;                   // "analytical" or "flow"
    std::vector<LinkUse> busiest_links;  // the most utilised, most first
    /// Communication time beyond each transfer's time alone on the network, summed per simulated GPU
    /// and averaged over them, by kind (it may be hidden behind compute; the breakdown says what was
    /// exposed).
    /// CP's exchanges and the expert all-to-alls have their own lines: long-context and MoE runs lose
    /// time there that TP's line would hide.
    Seconds contention_tp, contention_cp, contention_ep, contention_pp, contention_dp;
    [[nodiscard]] Seconds contention() const {
        return contention_tp + contention_cp + contention_ep + contention_pp + contention_dp;
    }
};

/// Null model "analytical" when the program has no topology.
[[nodiscard]] NetworkReport make_network_report(const program::IterationProgram& program,
                                                const engine::RunResult& run, std::size_t top_links = 10);

}  // namespace trainsim::report
