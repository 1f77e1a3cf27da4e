// A lower bound on a scenario's peak memory per GPU, computed without simulating: the planner drops a
// layout whose bound exceeds the GPU's memory, since its simulated peak could only be larger.
//
// Why it is a bound: on every pipeline stage, the forwards its schedule runs before its first backward
// all finish before anything is freed (activations are freed only at the end of a backward, and a
// stage's compute stream runs its steps in order). At the end of the last of those forwards the stage
// therefore holds its static bytes plus every byte those forwards saved. The simulated peak of that
// stage, and so the reported peak (the maximum over stages), is at least that.
#pragma once

#include "sim/config/scenario.h"
#include "sim/core/units.h"

namespace trainsim::plan {

/// Bytes the forward of micro-batch chunk `chunk` leaves allocated on pipeline rank `rank` until its
/// backward: its layers' saved activations under the recompute policy (the smallest a fully
/// recomputed layer may keep), the embedding's on the first virtual stage, the output layer's on the
/// last, and a sent output without Appendix B deallocation.
[[nodiscard]] Bytes forward_saved_bytes(const config::Scenario& scenario, std::int64_t rank,
                                        std::int64_t chunk);

/// Static bytes plus the activations held at the first backward, for pipeline ranks 0, 1 and p − 1
/// (the first and last carry the embeddings; middle ranks are alike and rank 1 holds the most of them):
/// the largest of these. Never more than the simulated peak_memory_bytes (tests/plan_test.cc checks this
/// on a grid).
[[nodiscard]] Bytes memory_lower_bound(const config::Scenario& scenario);

}  // namespace trainsim::plan
