// The flows running now and their shares of the resources they cross. When a flow starts or ends, only
// the flows connected to it through shared resources are reshared (SimGrid's LMM keeps a "modified
// set" for the same reason): a data-parallel reduction on one rail does not reshare the NVLink
// collectives of another node. The sharing works on classes of resources no flow can tell apart
// (resource_classes.h), which a folded run's collectives cross by the thousand.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/engine/flow.h"
#include "sim/engine/max_min_sharing.h"
#include "sim/engine/program.h"
#include "sim/engine/resource_classes.h"

namespace trainsim::engine {

class ActiveFlows {
public:
    /// Each resource `r` with record[r] set has its load sampled whenever it changes (take_rates());
    /// an empty `record` records none and costs nothing.
    ActiveFlows(const Program& program, std::span<const char> record);

    /// A flow whose expected end changed: its slot, the version its end event must carry, and the time.
    struct Reschedule {
        std::int32_t slot;
        std::uint32_t version;
        SimTime finish;
    };

    /// Starts rendezvous `r`'s flow at `now`; appends to `out` every flow whose end moved (itself too).
    void start(RendezvousId r, SimTime now, std::vector<Reschedule>& out);
    /// Ends the flow in `slot` at `now` and reshares what it held; returns its rendezvous.
    RendezvousId finish(std::int32_t slot, SimTime now, std::vector<Reschedule>& out);
    /// Whether an end event of `slot` with `version` is still the current one.
    [[nodiscard]] bool current(std::int32_t slot, std::uint32_t version) const {
        const Flow& f = flows_[static_cast<std::size_t>(slot)];
        return f.rendezvous != kNoRendezvous && f.version == version;
    }
    /// Units carried by each resource so far (rate × weight integrated over time).
    [[nodiscard]] std::vector<double> carried() const { return classes_.per_resource(carried_); }
    /// Each resource's load over time so far (empty unless recording); taken once, at the end of a run.
    [[nodiscard]] std::vector<std::vector<RateSample>> take_rates();

private:
    struct Flow {
        RendezvousId rendezvous = kNoRendezvous;  // kNoRendezvous: a free slot
        FlowSpecId spec = kNoFlow;
        double remaining = 0.0;
        double rate = 0.0;
        SimTime since{};  // when `remaining` was last brought up to date
        std::uint32_t version = 0;
    };

    /// Brings the flows connected to `seeds` up to date at `now`, reshares them, and reschedules those
    /// whose rate changed.
    void reshare(const std::vector<std::int32_t>& seeds, SimTime now, std::vector<Reschedule>& out);
    void advance(Flow& f, SimTime now);
    /// Sets `f`'s rate, and the load of the recorded resources it crosses.
    void set_rate(Flow& f, double rate);
    /// Samples the recorded resources whose load changed since the last call (recording only).
    void sample_changed(SimTime now);

    const Program& program_;
    // Below, a "resource" is a class of them (a recorded resource is a class of its own).
    const ResourceClasses classes_;
    std::vector<Flow> flows_;
    std::vector<std::int32_t> free_slots_;
    std::vector<std::vector<std::int32_t>> on_resource_;  // active flow slots per resource
    std::vector<double> carried_;
    // Recording (all empty when not): which resources, their samples and load now (the sum over their
    // flows of rate × weight), and those whose load changed in the current start or finish.
    std::vector<char> record_;
    std::vector<char> record_resources_;  // record_ per resource of the program
    std::vector<std::vector<RateSample>> rates_;
    std::vector<double> load_;
    std::vector<char> dirty_;
    std::vector<ResourceClassId> changed_;
    // Scratch for reshare.
    std::vector<std::uint32_t> mark_;
    std::uint32_t epoch_ = 0;
    std::vector<char> resource_seen_;
    std::vector<std::int32_t> neighbours_, component_;
    std::vector<ResourceClassId> resources_;
    std::vector<SharedClassFlow> problem_;
    MaxMinSharing sharing_;
};

}  // namespace trainsim::engine
