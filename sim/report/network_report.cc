#include "sim/report/network_report.h"

#include <algorithm>

namespace trainsim::report {

NetworkReport make_network_report(const program::IterationProgram& program, const engine::RunResult& run,
                                  std::size_t top_links) {
    NetworkReport r;
    r.model = program.topology ? "flow" : "analytical";
    if (!program.topology || program.gpus.empty()) {
        return r;
    }
    const network::Topology& topo = *program.topology;
    const double seconds = to_seconds(run.makespan).value;
    std::vector<LinkUse> links;
    for (std::size_t l = 0; l < run.resource_carried.size(); ++l) {
        const double carried = run.resource_carried[l];
        if (carried <= 0.0) {
            continue;
        }
        const auto id = static_cast<network::LinkId>(l);
        links.push_back({topo.link_name(id),
                         seconds > 0.0 ? carried / (topo.capacity_GBps(id) * 1e9 * seconds) : 0.0, carried});
    }
    // Most utilised first; ties (symmetric links) by name, so the list is the same run after run.
    std::sort(links.begin(), links.end(), [](const LinkUse& a, const LinkUse& b) {
        return a.utilization != b.utilization ? a.utilization > b.utilization : a.link < b.link;
    });
    links.resize(std::min(links.size(), top_links));
    r.busiest_links = std::move(links);

    const engine::Program& p = program.program;
    SimTime tp{}, cp{}, ep{}, pp{}, dp{};
    for (std::size_t t = 0; t < p.size(); ++t) {
        const auto task = engine::TaskId::from_index(t);
        const engine::RendezvousId rv = p.rendezvous_of(task);
        if (rv == engine::kNoRendezvous || p.rendezvous_flow(rv) == engine::kNoFlow) {
            continue;
        }
        const engine::TaskTiming& timing = run.timings[t];
        const SimTime extra = std::max(SimTime{}, timing.end - timing.start - p.rendezvous_duration(rv));
        switch (program.info.category(t)) {
        case program::TaskCategory::TensorComm:
            tp += extra;
            break;
        case program::TaskCategory::ContextComm:
            cp += extra;
            break;
        case program::TaskCategory::ExpertComm:
            ep += extra;
            break;
        case program::TaskCategory::PipelineComm:
            pp += extra;
            break;
        default:
            dp += extra;
            break;
        }
    }
    const double gpus = static_cast<double>(program.gpus.size());
    r.contention_tp = Seconds{to_seconds(tp).value / gpus};
    r.contention_cp = Seconds{to_seconds(cp).value / gpus};
    r.contention_ep = Seconds{to_seconds(ep).value / gpus};
    r.contention_pp = Seconds{to_seconds(pp).value / gpus};
    r.contention_dp = Seconds{to_seconds(dp).value / gpus};
    return r;
}

}  // namespace trainsim::report
