// Host-side cost of a step (issue 19, "host-side costs"): after Megatron's torch.cuda.synchronize()
// behind a pipeline transfer the CPU no longer runs ahead of the GPU, so the GPU idles while the CPU
// dispatches and launches the next step's first kernels, and keeps idling while kernels are shorter
// than the CPU's time per op.
#pragma once

#include <span>

#include "sim/core/units.h"
#include "sim/cost/hardware_profile.h"
#include "sim/workload/op.h"

namespace trainsim::program {

/// GPU idle time while the CPU issues `ops` (with their GPU `durations`) onto an idle GPU, starting
/// together: op i is launched after the CPU has spent its dispatch time on ops 0..i, and its kernel
/// starts host.kernel_launch_us later, or when the kernel before it ends if that is later. A
/// collective runs on its own stream: it costs CPU time here, and no compute-stream time.
[[nodiscard]] SimTime host_bound_idle(const workload::OpList& ops, std::span<const SimTime> durations,
                                      const cost::HostCosts& host);

}  // namespace trainsim::program
