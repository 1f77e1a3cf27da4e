// The ops of a measured iteration from a trace written by `trainsim run --trace` (its slices carry the
// simulator's labels: phase, category, layer, micro-batch, chunk), e.g. the trace of a run with another
// profile, or of a reference build.
#pragma once

#include <vector>

#include "calibrate/import/kineto_trace.h"
#include "sim/check/op_sample.h"

namespace trainsim::check {

[[nodiscard]] std::vector<OpSample> labelled_ops(const kineto::Trace& trace);

}  // namespace trainsim::check
