#include "sim/engine/critical_path.h"

#include <algorithm>

namespace trainsim::engine {

namespace {

// What held a task back: the predecessor that ended last, and whose predecessor it is (for a
// rendezvous, its last-arriving member). kNoTask when nothing came before.
struct Binding {
    TaskId predecessor = kNoTask;
    TaskId member = kNoTask;
};

}  // namespace

std::vector<CriticalStep> critical_path(const Program& program, const RunResult& run) {
    const std::size_t n = program.size();
    if (n == 0) {
        return {};
    }
    // The task before each on its stream (tasks are added in stream order).
    std::vector<TaskId> previous_on_stream(n, kNoTask);
    std::vector<TaskId> last_on_stream(program.streams().size(), kNoTask);
    // Members of each rendezvous, as a CSR over task ids.
    std::vector<std::uint32_t> member_end(program.rendezvous_count() + 1, 0);
    for (std::size_t t = 0; t < n; ++t) {
        const TaskId id = TaskId::from_index(t);
        TaskId& last = last_on_stream[program.stream(id).index()];
        previous_on_stream[t] = last;
        last = id;
        if (const RendezvousId r = program.rendezvous_of(id); r != kNoRendezvous) {
            ++member_end[r.index() + 1];
        }
    }
    for (std::size_t r = 1; r < member_end.size(); ++r) {
        member_end[r] += member_end[r - 1];
    }
    std::vector<TaskId> members(member_end.back());
    {
        std::vector<std::uint32_t> fill(member_end.begin(), member_end.end() - 1);
        for (std::size_t t = 0; t < n; ++t) {
            const TaskId id = TaskId::from_index(t);
            if (const RendezvousId r = program.rendezvous_of(id); r != kNoRendezvous) {
                members[fill[r.index()]++] = id;
            }
        }
    }

    auto end_of = [&](TaskId t) { return run.timings[t.index()].end; };
    // The latest-ending predecessor of `t` (the stream predecessor first on ties: it keeps the path on
    // one stream when a dependency ended at the same moment).
    auto consider = [&](TaskId t, Binding& best, SimTime start) {
        auto offer = [&](TaskId p) {
            if (p != kNoTask && end_of(p) <= start &&
                (best.predecessor == kNoTask || end_of(p) > end_of(best.predecessor))) {
                best = {p, t};
            }
        };
        offer(previous_on_stream[t.index()]);
        for (const TaskId d : program.dependencies(t)) {
            offer(d);
        }
    };

    TaskId current{0};
    for (std::size_t t = 1; t < n; ++t) {
        if (run.timings[t].end > run.timings[current.index()].end) {
            current = TaskId::from_index(t);
        }
    }
    std::vector<CriticalStep> path;
    while (true) {
        const SimTime start = run.timings[current.index()].start;
        Binding best;
        const RendezvousId r = program.rendezvous_of(current);
        if (r == kNoRendezvous) {
            consider(current, best, start);
        } else {
            const std::size_t i = r.index();
            for (std::uint32_t m = member_end[i]; m < member_end[i + 1]; ++m) {
                consider(members[m], best, start);
            }
        }
        // A rendezvous is listed by its last-arriving member, so the path stays on the GPU it came from.
        const TaskId listed = best.member != kNoTask ? best.member : current;
        const SimTime ready = best.predecessor == kNoTask ? SimTime{} : end_of(best.predecessor);
        path.push_back({listed, start - ready});
        if (best.predecessor == kNoTask) {
            break;
        }
        current = best.predecessor;
    }
    std::reverse(path.begin(), path.end());
    return path;
}

}  // namespace trainsim::engine
