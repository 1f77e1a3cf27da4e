#include "sim/engine/active_flows.h"

#include <algorithm>
#include <cmath>

#include "sim/engine/max_min_sharing.h"

namespace trainsim::engine {

ActiveFlows::ActiveFlows(const Program& program, std::span<const char> record)
    : program_(program), classes_(program, record), on_resource_(classes_.size()),
      carried_(classes_.size(), 0.0), record_resources_(record.begin(), record.end()) {
    if (!record_resources_.empty()) {
        record_resources_.resize(program.resource_capacities().size(), 0);
        record_.assign(classes_.size(), 0);
        for (std::size_t r = 0; r < record_resources_.size(); ++r) {
            if (record_resources_[r]) {
                record_[classes_.class_of(ResourceId::from_index(r)).index()] = 1;
            }
        }
        rates_.resize(record_.size());
        load_.assign(record_.size(), 0.0);
        dirty_.assign(record_.size(), 0);
    }
    resource_seen_.assign(classes_.size(), 0);
}

std::vector<std::vector<RateSample>> ActiveFlows::take_rates() {
    // A recorded resource is its class's only one.
    std::vector<std::vector<RateSample>> out(record_resources_.size());
    for (std::size_t r = 0; r < out.size(); ++r) {
        if (record_resources_[r]) {
            out[r] = std::move(rates_[classes_.class_of(ResourceId::from_index(r)).index()]);
        }
    }
    return out;
}

void ActiveFlows::set_rate(Flow& f, double rate) {
    if (!record_.empty()) {
        for (const ResourceClassUse& u : classes_.uses(f.spec)) {
            const std::size_t ri = u.cls.index();
            if (record_[ri]) {
                load_[ri] += (rate - f.rate) * u.weight;
                if (!dirty_[ri]) {
                    dirty_[ri] = 1;
                    changed_.push_back(u.cls);
                }
            }
        }
    }
    f.rate = rate;
}

void ActiveFlows::sample_changed(SimTime now) {
    for (const ResourceClassId r : changed_) {
        const std::size_t ri = r.index();
        dirty_[ri] = 0;
        if (on_resource_[ri].empty()) {
            load_[ri] = 0.0;  // exactly: a running total keeps a rounding residue of its last flows
        }
        std::vector<RateSample>& samples = rates_[ri];
        if (!samples.empty() && samples.back().time == now) {
            samples.pop_back();  // several changes at one instant: only the last one holds for any time
        }
        if (samples.empty() ? load_[ri] != 0.0 : samples.back().rate != load_[ri]) {
            samples.push_back({now, load_[ri]});
        }
    }
    changed_.clear();
}

void ActiveFlows::advance(Flow& f, SimTime now) {
    const double progress = f.rate * static_cast<double>((now - f.since).ns()) / kNanosecondsPerSecond;
    f.remaining = std::max(0.0, f.remaining - progress);
    for (const ResourceClassUse& u : classes_.uses(f.spec)) {
        carried_[u.cls.index()] += progress * u.weight;
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
    for (const ResourceClassUse& u : classes_.uses(f.spec)) {
        on_resource_[u.cls.index()].push_back(slot);
    }
    neighbours_.assign(1, slot);
    reshare(neighbours_, now, out);
    if (!record_.empty()) {
        sample_changed(now);
    }
}

RendezvousId ActiveFlows::finish(std::int32_t slot, SimTime now, std::vector<Reschedule>& out) {
    Flow& f = flows_[static_cast<std::size_t>(slot)];
    advance(f, now);
    set_rate(f, 0.0);
    const RendezvousId r = f.rendezvous;
    std::vector<std::int32_t>& neighbours = neighbours_;
    neighbours.clear();
    for (const ResourceClassUse& u : classes_.uses(f.spec)) {
        auto& list = on_resource_[u.cls.index()];
        list.erase(std::find(list.begin(), list.end(), slot));
        if (!list.empty()) {
            neighbours.push_back(list.front());
        }
    }
    f.rendezvous = kNoRendezvous;
    ++f.version;
    free_slots_.push_back(slot);
    if (!neighbours.empty()) {
        reshare(neighbours, now, out);
    }
    if (!record_.empty()) {
        sample_changed(now);
    }
    return r;
}

void ActiveFlows::reshare(const std::vector<std::int32_t>& seeds, SimTime now, std::vector<Reschedule>& out) {
    // The connected component of the seeds: flows linked through shared resources.
    ++epoch_;
    std::vector<std::int32_t>& component = component_;
    std::vector<ResourceClassId>& resources = resources_;
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
        for (const ResourceClassUse& u : classes_.uses(f.spec)) {
            const std::size_t ri = u.cls.index();
            if (resource_seen_[ri]) {
                continue;
            }
            resource_seen_[ri] = 1;
            resources.push_back(u.cls);
            for (const std::int32_t other : on_resource_[ri]) {
                if (mark_[static_cast<std::size_t>(other)] != epoch_) {
                    mark_[static_cast<std::size_t>(other)] = epoch_;
                    component.push_back(other);
                }
            }
        }
    }
    for (const ResourceClassId r : resources) {
        resource_seen_[r.index()] = 0;
    }
    std::vector<SharedClassFlow>& problem = problem_;
    problem.clear();
    for (const std::int32_t s : component) {
        Flow& f = flows_[static_cast<std::size_t>(s)];
        advance(f, now);
        problem.push_back(SharedClassFlow{program_.flow_spec(f.spec).max_rate, classes_.uses(f.spec)});
    }
    const std::vector<double>& rates = sharing_.rates(problem, classes_.capacities());
    for (std::size_t i = 0; i < component.size(); ++i) {
        Flow& f = flows_[static_cast<std::size_t>(component[i])];
        const bool is_new = f.rate == 0.0;
        if (!is_new && rates[i] == f.rate) {
            continue;  // its end event stands
        }
        set_rate(f, rates[i]);
        ++f.version;
        const double seconds = f.remaining / f.rate;
        out.push_back({component[i], f.version, now + to_sim_time(Seconds{seconds})});
    }
}

}  // namespace trainsim::engine
