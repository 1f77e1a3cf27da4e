// Chrome/Perfetto trace-event JSON of a simulated run: one process per simulated GPU, one thread per
// stream, one complete ("X") slice per task with micro-batch, chunk, layer and phase in its args.
#pragma once

#include <ostream>

#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"

namespace trainsim::report {

void write_perfetto_trace(std::ostream& out, const program::IterationProgram& program, const engine::RunResult& run);

}  // namespace trainsim::report
