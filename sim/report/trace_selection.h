// `--trace-ranks` and `--trace-window`: which GPUs and which stretch of the iteration a trace keeps
// (issue 20: the whole 530B/2240 timeline is too large for a browser).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/core/units.h"
#include "sim/program/iteration_program.h"

namespace trainsim::report {

/// "0-7,64,128-135" as inclusive (first, last) ranges of global ranks in [0, world). Throws InputError
/// naming --trace-ranks for a malformed list or a rank outside the world.
[[nodiscard]] std::vector<std::pair<std::int64_t, std::int64_t>> parse_trace_ranks(const std::string& text,
                                                                                   std::int64_t world);

/// "0-7,64,128-135": global ranks (Megatron's order, sim/parallel/layout.h) to keep, as a mask over
/// program.gpus. With folding only the simulated GPUs exist (tp 0 and dp 0 of each stage: ranks 0, t·d,
/// 2·t·d, ...). Throws InputError naming --trace-ranks for a malformed list, a rank outside the world,
/// or a list that selects none of the simulated GPUs (the message lists theirs).
[[nodiscard]] std::vector<bool> select_trace_ranks(const std::string& text, const config::Scenario& scenario,
                                                   const program::IterationProgram& program);

/// "START:END" in seconds of simulated time, either side optional ("12.5:", ":3"). Throws InputError
/// naming --trace-window for anything else, a negative time, or END < START.
[[nodiscard]] std::pair<SimTime, SimTime> parse_trace_window(const std::string& text);

}  // namespace trainsim::report
