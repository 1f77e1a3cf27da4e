// Memory-bound targets: memory_bound.launch_us (the empty kernel), memory_bound.efficiency_vs_bytes (the
// streaming kernels after the launch time), memory_bound.kind_factors.* (each kernel against that curve).
// The cost model's form: t = launch_us + bytes / (hbm_GBps · eff(bytes) · kind_factor).
#pragma once

#include <string>

#include "calibrate/fit/fit_state.h"
#include "sim/cost/cost_model.h"

namespace trainsim::calibrate {

/// Fits memory_bound.launch_us when it holds a directive (the mean time of the empty kernel).
void fit_launch_target(FitState& state);

/// Fits the curve and the kind factors that hold directives. Options: "subtract_launch" (default true:
/// a record's time less launch_us is its streaming time), for the curve "kernels" (default ["copy"]).
void fit_memory_bound_targets(FitState& state);

/// The profile path of a kind's factor: memory_bound.kind_factors.<kind>.
[[nodiscard]] std::string kind_factor_path(cost::MemoryBoundKind kind);

/// The streaming bandwidth of a kernel record in GB/s: bytes / (t − launch), or bytes / t.
[[nodiscard]] double streaming_GBps(const KernelMeasurement& k, double launch_us, bool subtract_launch);

}  // namespace trainsim::calibrate
