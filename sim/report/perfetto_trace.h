// Chrome/Perfetto trace-event JSON of a simulated run: one process per simulated GPU, one thread per
// stream, one complete ("X") slice per op with micro-batch, chunk, layer and phase in its args, and a
// counter ("C") track per GPU with the bytes allocated over time (weights, gradients, optimizer state
// and activations). With `critical` (engine::critical_path's tasks), those tasks' slices carry
// args.critical = true; with `critical_track` too, a last process, "critical path", repeats them on one
// track that follows the path from GPU to GPU.
#pragma once

#include <limits>
#include <ostream>
#include <span>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"

namespace trainsim::report {

/// What a trace keeps: a subset of the GPUs and a window of time (`--trace-ranks`, `--trace-window`).
struct TraceOptions {
    std::span<const engine::TaskId> critical;
    bool critical_track = false;
    /// Indexed like IterationProgram::gpus: which to keep (empty: all). A GPU left out has no process,
    /// no slices and no counter.
    std::vector<bool> keep_gpu;
    /// Slices that overlap [window_start, window_end] are kept whole; counter samples inside it, plus
    /// the last one before it (the value the window opens with).
    SimTime window_start = 0;
    SimTime window_end = std::numeric_limits<SimTime>::max();
};

void write_perfetto_trace(std::ostream& out, const config::Scenario& scenario,
                          const program::IterationProgram& program, const engine::RunResult& run,
                          const TraceOptions& options = {});

}  // namespace trainsim::report
