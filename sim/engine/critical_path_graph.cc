#include "sim/engine/critical_path_graph.h"

#include <algorithm>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/dag_shortest_paths.hpp>
#include <limits>
#include <utility>

namespace trainsim::engine {

namespace {

// What held a task back, as the label of an edge into its vertex: the predecessor task, when it ended,
// the task that waited for it (for a rendezvous, which member), and the order in which the walk offers
// predecessors (the stream predecessor first, then dependencies in order; members in task order), so
// ties on `end` go to the first offered.
struct EdgeBinding {
    SimTime end = SimTime::min();
    std::uint32_t rank = 0;
    TaskId predecessor = kNoTask;
    TaskId member = kNoTask;
};

// The path algebra of "the predecessor that ended last": a path into v is as good as its last edge
// (v's start is set by its last-arriving input, whatever came before it), so combining a path with an
// edge gives the edge, and the better of two is the later-ending, then the first offered.
struct LaterArrival {
    [[nodiscard]] bool operator()(const EdgeBinding& a, const EdgeBinding& b) const {
        return a.end > b.end || (a.end == b.end && a.rank < b.rank);
    }
};
struct LastEdge {
    [[nodiscard]] EdgeBinding operator()(const EdgeBinding& /*path*/, const EdgeBinding& edge) const {
        return edge;
    }
};

// One vertex per task, except that a rendezvous's members share one (they all start when the last
// arrives), plus a source with an edge to every vertex that has none, standing for "nothing came before".
using TaskGraph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, EdgeBinding,
                                                     boost::no_property, std::uint32_t, std::uint32_t>;

}  // namespace

std::vector<CriticalStep> critical_path_on_graph(const Program& program, const RunResult& run) {
    const std::size_t n = program.size();
    if (n == 0) {
        return {};
    }
    const std::size_t rendezvous = program.rendezvous_count();
    auto vertex_of = [&](TaskId t) {
        const RendezvousId r = program.rendezvous_of(t);
        return static_cast<std::uint32_t>(r == kNoRendezvous ? t.index() : n + r.index());
    };
    const auto source = static_cast<std::uint32_t>(n + rendezvous);
    auto end_of = [&](TaskId t) { return run.timings[t.index()].end; };
    auto start_of = [&](TaskId t) { return run.timings[t.index()].start; };

    // Edges from each task's stream predecessor and dependencies, if they ended by its start. Tasks are
    // added in stream order, so the stream predecessor is the last task seen on its stream; member tasks
    // are visited in task order, which is the order the offers' ranks follow.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
    std::vector<EdgeBinding> labels;
    edges.reserve(3 * n);
    labels.reserve(3 * n);
    std::vector<TaskId> last_on_stream(program.streams().size(), kNoTask);
    std::vector<std::uint32_t> offers(n + rendezvous, 0);
    auto offer = [&](TaskId p, TaskId t) {
        const std::uint32_t v = vertex_of(t);
        const std::uint32_t rank = offers[v]++;
        if (p != kNoTask && end_of(p) <= start_of(t)) {
            edges.emplace_back(vertex_of(p), v);
            labels.push_back({end_of(p), rank, p, t});
        }
    };
    for (std::size_t i = 0; i < n; ++i) {
        const TaskId t = TaskId::from_index(i);
        TaskId& last = last_on_stream[program.stream(t).index()];
        offer(last, t);
        last = t;
        for (const TaskId d : program.dependencies(t)) {
            offer(d, t);
        }
    }
    // Every vertex is reachable from one without an edge in (following edges back ends at one).
    std::vector<bool> has_input(source, false);
    for (const auto& e : edges) {
        has_input[e.second] = true;
    }
    for (std::uint32_t v = 0; v < source; ++v) {
        if (!has_input[v]) {
            edges.emplace_back(source, v);
            labels.push_back({});
        }
    }
    const TaskGraph graph(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), labels.begin(),
                          source + 1);
    edges = {};
    labels = {};

    // Nothing-came-before (the source's label) loses to every real edge; "unreached" loses to it.
    EdgeBinding unreached;
    unreached.rank = std::numeric_limits<std::uint32_t>::max();
    std::vector<EdgeBinding> binding(source + 1);
    std::vector<boost::default_color_type> color(source + 1);
    const auto index = boost::get(boost::vertex_index, graph);
    boost::dag_shortest_paths(graph, source, boost::make_iterator_property_map(binding.begin(), index),
                              boost::get(boost::edge_bundle, graph),
                              boost::make_iterator_property_map(color.begin(), index),
                              boost::dummy_property_map(), boost::default_dijkstra_visitor(), LaterArrival(),
                              LastEdge(), unreached, EdgeBinding{});

    // From the last-ending task (the first of equals) back along each vertex's binding edge.
    TaskId current{0};
    for (std::size_t t = 1; t < n; ++t) {
        if (run.timings[t].end > run.timings[current.index()].end) {
            current = TaskId::from_index(t);
        }
    }
    std::vector<CriticalStep> path;
    while (true) {
        const EdgeBinding& b = binding[vertex_of(current)];
        if (b.predecessor == kNoTask) {
            path.push_back({current, start_of(current)});
            break;
        }
        // A rendezvous is listed by its last-arriving member, so the path stays on the GPU it came from.
        path.push_back({b.member, start_of(current) - b.end});
        current = b.predecessor;
    }
    std::reverse(path.begin(), path.end());
    return path;
}

}  // namespace trainsim::engine
