// Chrome/Perfetto trace-event JSON of a simulated run: one process per simulated GPU, one thread per
// stream, one complete ("X") slice per op with micro-batch, chunk, layer and phase in its args, and a
// counter ("C") track per GPU with the bytes allocated over time (weights, gradients, optimizer state
// and activations).
#pragma once

#include <ostream>

#include "sim/config/scenario.h"
#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"

namespace trainsim::report {

void write_perfetto_trace(std::ostream& out, const config::Scenario& scenario,
                          const program::IterationProgram& program, const engine::RunResult& run);

}  // namespace trainsim::report
