// Shared resources and the flows that hold them (DESIGN.md §8 "Network"): a resource is anything with a
// rate capacity that running transfers share (a NIC, an NVLink port, a fabric uplink); a flow moves an
// amount of data over a set of resources, each used with a weight (how many times the flow's traffic
// crosses it per unit of progress). The engine learns only capacities and weights, never what a link is.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/strong_id.h"
#include "sim/core/units.h"

namespace trainsim::engine {

/// A shared resource (Program::add_resource's index): its own kind of id, so that a class of resources, a
/// flow spec or a plain integer cannot be passed for it.
using ResourceId = StrongId<struct ResourceTag>;
/// A flow's description (Program::add_flow_spec's index): its own kind of id, so that it cannot be passed
/// where a resource, a task or a rendezvous is meant.
using FlowSpecId = StrongId<struct FlowSpecTag>;
inline constexpr FlowSpecId kNoFlow = FlowSpecId::none();

/// One resource a flow crosses, and how much of the flow's progress rate it carries.
struct FlowUse {
    ResourceId resource;
    double weight = 1.0;
    friend bool operator==(const FlowUse&, const FlowUse&) = default;
};

/// A class of resources no flow can tell apart (resource_classes.h): indexes the classes, never the
/// program's resources.
using ResourceClassId = StrongId<struct ResourceClassTag>;

/// One class of resources a flow crosses, with the weight it puts on each resource of the class.
struct ResourceClassUse {
    ResourceClassId cls;
    double weight = 1.0;
    friend bool operator==(const ResourceClassUse&, const ResourceClassUse&) = default;
};

/// What a flow rendezvous moves once all its members have arrived: `amount` units at a rate the sharing
/// policy decides (at most `max_rate` units/s, the flow's own uncontended rate), then a fixed `latency`
/// that holds no resource (NCCL's per-step latencies, which do not consume bandwidth).
struct FlowSpec {
    double amount = 0.0;    // bytes, in the units the weights and capacities use
    double max_rate = 0.0;  // bytes per second, > 0
    SimTime latency{};
    std::vector<FlowUse> uses;
    friend bool operator==(const FlowSpec&, const FlowSpec&) = default;
};

/// A resource's load from `time` on, until its next sample: the sum over the flows crossing it of rate ×
/// weight, in the units/s of its capacity. A resource's samples are piecewise constant; before the first
/// one it carried nothing.
struct RateSample {
    SimTime time{};
    double rate = 0.0;
    friend bool operator==(const RateSample&, const RateSample&) = default;
};

}  // namespace trainsim::engine
