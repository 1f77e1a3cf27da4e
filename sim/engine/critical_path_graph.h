// The critical path as a DAG path problem on Boost.Graph: the task graph (rendezvous members merged
// into one vertex) as a compressed_sparse_row_graph, solved by dag_shortest_paths in the path algebra
// of "the input that arrived last" (a path into a task is as good as its last edge; the better is
// the later-ending, ties to the stream predecessor). It gives exactly engine::critical_path's steps
// and waits (tests/critical_path_test.cc checks both on shipped scenarios), but takes 1.5x the time of
// `trainsim run --critical-path` on mt-nlg-530b-2240gpu (0.44 s vs 0.29 s, 2.7x the memory), so the
// back-walk stays the one the CLI uses and this is its independent cross-check.
#pragma once

#include <vector>

#include "sim/engine/critical_path.h"
#include "sim/engine/program.h"
#include "sim/engine/simulator.h"

namespace trainsim::engine {

/// The same path as critical_path(program, run), found as a DAG longest path with Boost.Graph.
[[nodiscard]] std::vector<CriticalStep> critical_path_on_graph(const Program& program, const RunResult& run);

}  // namespace trainsim::engine
