#include "sim/engine/active_flows.h"

#include <algorithm>
#include <cmath>

#include "sim/engine/max_min_sharing.h"

namespace trainsim::engine {

ActiveFlows::ActiveFlows(const Program& program)
    : program_(program), on_resource_(program.resource_capacities().size()),
      carried_(program.resource_capacities().size(), 0.0),
      resource_seen_(program.resource_capacities().size(), 0) {}

void ActiveFlows::advance(Flow& f, SimTime now) {
    const double progress = f.rate * static_cast<double>(now - f.since) / kNanosecondsPerSecond;
    f.remaining = std::max(0.0, f.remaining - progress);
    for (const FlowUse& u : program_.flow_spec(f.spec).uses) {
        carried_[static_cast<std::size_t>(u.resource)] += progress * u.weight;
    }
    f.since = now;
}

void ActiveFlows::start(RendezvousId r, SimTime now, std::vector<Reschedule>& out) {
    std::int32_t slot;
    if (free_slots_.empty()) {
        slot = static_cast<std::int32_t>(flows_.size());
        flows_.emplace_back();
        mark_.push_back(0);
    } else {
        slot = free_slots_.back();
        free_slots_.pop_back();
    }
    Flow& f = flows_[static_cast<std::size_t>(slot)];
    f.rendezvous = r;
    f.spec = program_.rendezvous_flow(r);
    const FlowSpec& spec = program_.flow_spec(f.spec);
    f.remaining = spec.amount;
    f.rate = 0.0;
    f.since = now;
    ++f.version;
    for (const FlowUse& u : spec.uses) {
        on_resource_[static_cast<std::size_t>(u.resource)].push_back(slot);
    }
    neighbours_.assign(1, slot);
    reshare(neighbours_, now, out);
}

RendezvousId ActiveFlows::finish(std::int32_t slot, SimTime now, std::vector<Reschedule>& out) {
    Flow& f = flows_[static_cast<std::size_t>(slot)];
    advance(f, now);
    const RendezvousId r = f.rendezvous;
    std::vector<std::int32_t>& neighbours = neighbours_;
    neighbours.clear();
    for (const FlowUse& u : program_.flow_spec(f.spec).uses) {
        auto& list = on_resource_[static_cast<std::size_t>(u.resource)];
        list.erase(std::find(list.begin(), list.end(), slot));
        if (!list.empty()) {
            neighbours.push_back(list.front());
        }
    }
    f.rendezvous = -1;
    ++f.version;
    free_slots_.push_back(slot);
    if (!neighbours.empty()) {
        reshare(neighbours, now, out);
    }
    return r;
}

void ActiveFlows::reshare(const std::vector<std::int32_t>& seeds, SimTime now, std::vector<Reschedule>& out) {
    // The connected component of the seeds: flows linked through shared resources.
    ++epoch_;
    std::vector<std::int32_t>& component = component_;
    std::vector<ResourceId>& resources = resources_;
    component.clear();
    resources.clear();
    for (const std::int32_t s : seeds) {
        if (mark_[static_cast<std::size_t>(s)] != epoch_) {
            mark_[static_cast<std::size_t>(s)] = epoch_;
            component.push_back(s);
        }
    }
    for (std::size_t i = 0; i < component.size(); ++i) {
        const Flow& f = flows_[static_cast<std::size_t>(component[i])];
        for (const FlowUse& u : program_.flow_spec(f.spec).uses) {
            const auto ri = static_cast<std::size_t>(u.resource);
            if (resource_seen_[ri]) {
                continue;
            }
            resource_seen_[ri] = 1;
            resources.push_back(u.resource);
            for (const std::int32_t other : on_resource_[ri]) {
                if (mark_[static_cast<std::size_t>(other)] != epoch_) {
                    mark_[static_cast<std::size_t>(other)] = epoch_;
                    component.push_back(other);
                }
            }
        }
    }
    for (const ResourceId r : resources) {
        resource_seen_[static_cast<std::size_t>(r)] = 0;
    }
    std::vector<SharedFlow>& problem = problem_;
    problem.clear();
    for (const std::int32_t s : component) {
        Flow& f = flows_[static_cast<std::size_t>(s)];
        advance(f, now);
        const FlowSpec& spec = program_.flow_spec(f.spec);
        problem.push_back(SharedFlow{spec.max_rate, spec.uses});
    }
    const std::vector<double> rates = max_min_rates(problem, program_.resource_capacities());
    for (std::size_t i = 0; i < component.size(); ++i) {
        Flow& f = flows_[static_cast<std::size_t>(component[i])];
        const bool is_new = f.rate == 0.0;
        if (!is_new && rates[i] == f.rate) {
            continue;  // its end event stands
        }
        f.rate = rates[i];
        ++f.version;
        const double seconds = f.remaining / f.rate;
        out.push_back({component[i], f.version, now + to_sim_time(Seconds{seconds})});
    }
}

}  // namespace trainsim::engine
