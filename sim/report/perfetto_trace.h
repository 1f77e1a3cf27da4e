// Chrome/Perfetto trace-event JSON of a simulated run: one process per simulated GPU, one thread per
// stream, one complete ("X") slice per op with micro-batch, chunk, layer and phase in its args, and a
// counter ("C") track per GPU with the bytes allocated over time (weights, gradients, optimizer state
// and activations). With `critical` (engine::critical_path's tasks), those tasks' slices carry
// args.critical = true; with `critical_track` too, a last process, "critical path", repeats them on one
// track that follows the path from GPU to GPU.
#pragma once

#include <ostream>
#include <span>

#include "sim/config/scenario.h"
#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"

namespace trainsim::report {

void write_perfetto_trace(std::ostream& out, const config::Scenario& scenario,
                          const program::IterationProgram& program, const engine::RunResult& run,
                          std::span<const engine::TaskId> critical = {}, bool critical_track = false);

}  // namespace trainsim::report
