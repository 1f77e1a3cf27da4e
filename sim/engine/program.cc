#include "sim/engine/program.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

#include "sim/engine/simulator.h"

namespace trainsim::engine {

StreamId Program::add_stream(GpuId gpu, std::string name) {
    streams_.push_back(Stream{gpu, std::move(name)});
    return StreamId::from_index(streams_.size() - 1);
}

StreamId Program::add_background_stream(StreamId foreground, std::string name) {
    if (!foreground.valid() || foreground.index() >= streams_.size() ||
        streams_[foreground.index()].yields_to != kNoStream) {
        throw std::invalid_argument("background stream '" + name + "' needs an ordinary foreground stream");
    }
    for (const Stream& s : streams_) {
        if (s.yields_to == foreground) {
            throw std::invalid_argument("stream '" + streams_[foreground.index()].name +
                                        "' already has a background stream");
        }
    }
    streams_.push_back(Stream{streams_[foreground.index()].gpu, std::move(name), foreground});
    return StreamId::from_index(streams_.size() - 1);
}

RendezvousId Program::add_rendezvous(std::int32_t members, SimTime duration, std::string name) {
    if (members < 1) {
        throw std::invalid_argument("rendezvous '" + name + "' needs at least one member");
    }
    if (duration < SimTime{}) {
        throw std::invalid_argument("rendezvous '" + name + "' has a negative duration");
    }
    // Rendezvous ids are stored negated in a task's 32-bit payload: keep −(id + 1) representable.
    if (rendezvous_members_.size() >=
        static_cast<std::size_t>(std::numeric_limits<RendezvousId::rep_type>::max())) {
        throw SimulationError(
            "the program has more rendezvous than the engine can index (2^31 - 1); simulate fewer "
            "micro-batches or GPUs");
    }
    rendezvous_members_.push_back(members);
    rendezvous_duration_.push_back(intern(duration));
    if (!name.empty()) {
        rendezvous_names_.resize(rendezvous_members_.size());
        rendezvous_names_.back() = std::move(name);
    }
    return RendezvousId::from_index(rendezvous_members_.size() - 1);
}

void Program::set_compute_stream(StreamId stream) {
    if (!stream.valid() || stream.index() >= streams_.size()) {
        throw std::invalid_argument("compute stream " + std::to_string(stream.value()) + " is unknown");
    }
    streams_[stream.index()].compute = true;
}

void Program::set_compute_share(RendezvousId r, double rate) {
    if (!r.valid() || r.index() >= rendezvous_members_.size()) {
        throw std::invalid_argument("compute share of unknown rendezvous " + std::to_string(r.value()));
    }
    if (!(rate > 0.0 && rate <= 1.0)) {
        throw std::invalid_argument("rendezvous '" + rendezvous_name(r) + "' leaves compute a rate of " +
                                    std::to_string(rate) + "; it must be in (0, 1]");
    }
    if (compute_share_.size() <= r.index()) {
        compute_share_.resize(r.index() + 1, 1.0);
    }
    compute_share_[r.index()] = rate;
}

void Program::set_outside_compute(TaskId t) {
    if (!t.valid() || t.index() >= payload_.size() || payload_[t.index()] < 0) {
        throw std::invalid_argument("outside compute: task " + std::to_string(t.value()) +
                                    " is unknown or a rendezvous member");
    }
    // Tasks are marked as they are added, so the list stays sorted by appending.
    if (outside_compute_.empty() || outside_compute_.back() < t) {
        outside_compute_.push_back(t);
    } else if (!outside_compute(t)) {
        outside_compute_.insert(std::lower_bound(outside_compute_.begin(), outside_compute_.end(), t), t);
    }
}

ResourceId Program::add_resource(double capacity) {
    if (!(capacity > 0.0) || capacity == std::numeric_limits<double>::infinity()) {
        throw std::invalid_argument("resource " + std::to_string(resource_capacity_.size()) +
                                    " needs a finite capacity > 0");
    }
    resource_capacity_.push_back(capacity);
    return ResourceId::from_index(resource_capacity_.size() - 1);
}

FlowSpecId Program::add_flow_spec(FlowSpec spec) {
    if (!(spec.amount >= 0.0) || !(spec.max_rate > 0.0) || spec.latency < SimTime{}) {
        throw std::invalid_argument("flow spec needs amount >= 0, max_rate > 0 and latency >= 0");
    }
    for (const FlowUse& u : spec.uses) {
        if (!u.resource.valid() || u.resource.index() >= resource_capacity_.size() || !(u.weight > 0.0)) {
            throw std::invalid_argument("flow spec uses an unknown resource or a weight <= 0");
        }
    }
    // One use per resource: a flow crossing a link twice loads it with the summed weight.
    std::sort(spec.uses.begin(), spec.uses.end(),
              [](const FlowUse& a, const FlowUse& b) { return a.resource < b.resource; });
    std::vector<FlowUse> merged;
    for (const FlowUse& u : spec.uses) {
        if (!merged.empty() && merged.back().resource == u.resource) {
            merged.back().weight += u.weight;
        } else {
            merged.push_back(u);
        }
    }
    spec.uses = std::move(merged);
    std::size_t h = std::hash<double>{}(spec.amount) ^ (std::hash<double>{}(spec.max_rate) << 1) ^
                    (std::hash<SimTime>{}(spec.latency) << 2);
    for (const FlowUse& u : spec.uses) {
        h = (h ^ (u.resource.index() * 0x9E3779B97F4A7C15ULL)) * 1099511628211ULL ^
            std::hash<double>{}(u.weight);
    }
    std::vector<FlowSpecId>& same_hash = flow_spec_index_[h];
    for (const FlowSpecId id : same_hash) {
        if (flow_specs_[id.index()] == spec) {
            return id;
        }
    }
    flow_specs_.push_back(std::move(spec));
    same_hash.push_back(FlowSpecId::from_index(flow_specs_.size() - 1));
    return same_hash.back();
}

RendezvousId Program::add_flow_rendezvous(std::int32_t members, FlowSpecId spec, std::string name) {
    if (!spec.valid() || spec.index() >= flow_specs_.size()) {
        throw std::invalid_argument("rendezvous '" + name + "' runs an unknown flow spec");
    }
    const FlowSpec& f = flow_specs_[spec.index()];
    // Its duration alone on the network, for descriptions; the engine decides the real one.
    const SimTime alone = f.latency + to_sim_time(Seconds{f.amount / f.max_rate});
    const RendezvousId r = add_rendezvous(members, alone, std::move(name));
    rendezvous_flow_.resize(r.index() + 1, kNoFlow);
    rendezvous_flow_.back() = spec;
    return r;
}

TaskId Program::add_task(StreamId stream, SimTime duration, std::string name,
                         std::span<const TaskId> dependencies) {
    if (duration < SimTime{}) {
        throw std::invalid_argument("task '" + name + "' has a negative duration");
    }
    return add(stream, static_cast<std::int32_t>(intern(duration)), std::move(name), dependencies);
}

TaskId Program::add_rendezvous_task(StreamId stream, RendezvousId r, std::string name,
                                    std::span<const TaskId> dependencies) {
    if (!r.valid() || r.index() >= rendezvous_members_.size()) {
        throw std::invalid_argument("task '" + name + "' joins an unknown rendezvous");
    }
    if (stream.valid() && stream.index() < streams_.size() &&
        streams_[stream.index()].yields_to != kNoStream) {
        throw std::invalid_argument("task '" + name + "': a background stream cannot join a rendezvous");
    }
    return add(stream, -(r.value() + 1), std::move(name), dependencies);
}

std::uint32_t Program::intern(SimTime duration) {
    const auto [it, added] =
        duration_index_.try_emplace(duration, static_cast<std::uint32_t>(durations_.size()));
    if (added) {
        // A task's payload holds the index as a non-negative int32.
        if (durations_.size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
            duration_index_.erase(it);
            throw SimulationError(
                "the program has more distinct durations than the engine can index (2^31 - 1)");
        }
        durations_.push_back(duration);
    }
    return it->second;
}

TaskId Program::add(StreamId stream, std::int32_t payload, std::string name,
                    std::span<const TaskId> dependencies) {
    if (!stream.valid() || stream.index() >= streams_.size()) {
        throw std::invalid_argument("task '" + name + "' is on an unknown stream");
    }
    // TaskId is 32 bits: one more task would wrap to a negative id and corrupt every dependency after it.
    if (payload_.size() >= static_cast<std::size_t>(std::numeric_limits<TaskId::rep_type>::max())) {
        throw SimulationError(
            "the program has more tasks than the engine can index (2^31 - 1); simulate fewer "
            "micro-batches or GPUs");
    }
    // Dependency offsets are 32 bits too.
    if (dependencies.size() > std::numeric_limits<std::uint32_t>::max() - dependencies_.size()) {
        throw SimulationError(
            "the program has more dependencies than the engine can index (2^32 - 1); simulate fewer "
            "micro-batches or GPUs");
    }
    const TaskId id = TaskId::from_index(payload_.size());
    for (const TaskId d : dependencies) {
        // Only earlier tasks: the program is built in an order that makes it acyclic by construction.
        if (!d.valid() || d >= id) {
            throw std::invalid_argument("task '" + name + "' depends on a task not yet added");
        }
    }
    for (const TaskId d : dependencies) {  // one or two: a loop beats a range insert's memmove
        dependencies_.push_back(d);
    }
    dependency_end_.push_back(static_cast<std::uint32_t>(dependencies_.size()));
    stream_.push_back(stream);
    payload_.push_back(payload);
    if (!name.empty()) {
        names_.resize(payload_.size());
        names_.back() = std::move(name);
    }
    return id;
}

}  // namespace trainsim::engine
