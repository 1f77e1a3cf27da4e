// The simulated iteration as op samples: every op of every task with its simulated interval, labelled the
// way `trainsim run --trace` labels its slices (report/perfetto_trace.cc).
#pragma once

#include <vector>

#include "sim/check/op_sample.h"
#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"

namespace trainsim::check {

[[nodiscard]] std::vector<OpSample> simulated_ops(const program::IterationProgram& program,
                                                  const engine::RunResult& run);

}  // namespace trainsim::check
