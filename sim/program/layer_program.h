// The program of `trainsim layer`: one transformer layer on one GPU for one micro-batch, forward then
// backward (with the recompute the policy implies), as Korthikanti Table 4 and Figure 8 measure it.
#pragma once

#include "sim/config/scenario.h"
#include "sim/cost/cost_model.h"
#include "sim/program/iteration_program.h"

namespace trainsim::program {

[[nodiscard]] IterationProgram build_single_layer(const config::Scenario& scenario,
                                                  const cost::CostModel& cost);

}  // namespace trainsim::program
