// Why the best layout beats the runner-up, in the terms of the time breakdown: which parts of the
// iteration (compute, recompute, exposed communication, bubble, optimizer) differ, largest first, and
// which knobs differ between the two layouts.
#pragma once

#include <string>

#include "sim/plan/planner.h"

namespace trainsim::plan {

/// E.g. "t8 p35 d8 v3 b1 selective sp is 0.41 s (1.1%) faster than t8 p35 d8 v5 b1 selective sp
/// (v 3 vs 5): exposed PP comm -0.62 s, bubble +0.23 s".
[[nodiscard]] std::string explain_win(const RankedLayout& best, const RankedLayout& runner_up);

}  // namespace trainsim::plan
