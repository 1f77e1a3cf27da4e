// A lower bound on a layout's simulated iteration time from compute alone, without building its
// program: the planner simulates layouts in order of this bound and stops once the next bound exceeds
// the N-th best simulated time, so the top N are exact without simulating every layout.
//
// Why it is a bound, for every pipeline rank r (the maximum over r is returned):
// - r's first step is the forward of micro-batch 0, chunk 0; it needs that forward's output from rank
//   r − 1, which needs rank r − 2's, ...: it starts after Σ_{k<r} F_k, F_k the compute of that forward
//   on rank k;
// - r's compute stream then runs all its steps one after another: m · S_r, S_r the compute of one
//   micro-batch's forwards and backwards over r's chunks;
// - r's last step is the backward of the last micro-batch, chunk 0; ranks r − 1, ..., 0 run that
//   backward after it, one after the other (Σ_{k<r} B_k), then rank 0 its end of iteration (E_0); r runs
//   its own end of iteration (E_r) meanwhile.
// So the iteration takes at least Σ_{k<r} F_k + m · S_r + max(E_r, Σ_{k<r} B_k + E_0). Compute times
// are each op's priced duration without the slowdown of a collective running beside it (which only
// lengthens it), rounded to nanoseconds per op as the program builder rounds them, plus the blocking
// tensor-parallel collectives and expert dispatch/combine all-to-alls (priced at the least any
// expert-parallel group's node span costs) the compute stream waits for inside a layer, each layer by its
// kind (dense or MoE, moe_layer_freq); other communication and waiting only add. The schedule's first and
// last steps are checked, and the chain terms dropped for a schedule that would not start and end as assumed.
#pragma once

#include "sim/config/scenario.h"
#include "sim/core/units.h"
#include "sim/cost/cost_model.h"

namespace trainsim::plan {

/// Never more than the simulated iteration time (tests/plan_test.cc checks this on a grid).
[[nodiscard]] Seconds iteration_time_lower_bound(const config::Scenario& scenario,
                                                 const cost::CostModel& cost);

}  // namespace trainsim::plan
