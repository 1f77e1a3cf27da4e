// The critical path of a simulated run: the chain of tasks that decided when the last one ended.
// Walked back from the last-finishing task through whichever of its predecessors (the task before it
// on its stream, its dependencies, and for a rendezvous member those of every member, since all start
// when the last arrives) ended last. Time between a predecessor's end and the next task's start is
// waiting (a pipeline bubble, or a background task's preemption).
#pragma once

#include <vector>

#include "sim/core/units.h"
#include "sim/engine/program.h"
#include "sim/engine/simulator.h"

namespace trainsim::engine {

/// One task on the critical path and how long the path waited before it started.
struct CriticalStep {
    TaskId task = kNoTask;
    SimTime wait_before{};  // start − the predecessor's end (the first step: its start)
};

/// The critical path in time order: its steps' waits and [start, end] intervals tile [0, makespan]
/// exactly. For a rendezvous, the member listed is the one that arrived last. Empty for an empty run.
[[nodiscard]] std::vector<CriticalStep> critical_path(const Program& program, const RunResult& run);

}  // namespace trainsim::engine
