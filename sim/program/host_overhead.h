// Host-side cost of a step (issue 19, "host-side costs"): after Megatron's torch.cuda.synchronize()
// behind a pipeline transfer the CPU no longer runs ahead of the GPU, so the GPU idles while the CPU
// dispatches and launches the next step's first kernels, and again wherever kernels are shorter than
// the CPU's time per op, until the next synchronize. Megatron-Core's MoE token dispatchers synchronise
// likewise inside a layer (Op::host_waits_for): the CPU waits for a device-to-host copy, and the GPU
// idles once it has run what was queued before.
#pragma once

#include <limits>
#include <span>

#include "sim/core/units.h"
#include "sim/cost/hardware_profile.h"
#include "sim/workload/op.h"

namespace trainsim::program {

/// The compute stream's idle time while the CPU issues one op list, and how far ahead of the GPU the
/// CPU is when it has issued the list's last op (0 after a synchronize).
struct HostBound {
    SimTime idle{};
    SimTime lead_after{};
};

/// The lead of a CPU that has not synchronised since the run began: it issues every op long before the
/// GPU reaches it.
inline constexpr SimTime kUnboundedLead{std::numeric_limits<std::int64_t>::max() / 4};

/// The CPU starts `lead` ahead of the compute stream (0: both start together, as after a synchronize).
/// Op i is launched once the CPU has spent its dispatch time on ops 0..i (host.op_dispatch_us per
/// compute op, host.collective_dispatch_us per collective), and starts host.kernel_launch_us later or
/// when the compute stream is free, whichever is later. A kernel then holds the compute stream for its
/// duration, and so does a blocking collective (the stream waits for it); an asynchronous collective
/// costs CPU time only, but an asynchronous expert exchange runs from its launch and the op that joins
/// it (Op::after) starts after it, without counting that wait as idle. Before it issues an op with
/// host_waits_for = j the CPU waits until op j has finished on the GPU; the ops it issued before keep the GPU
/// busy meanwhile.
[[nodiscard]] HostBound host_bound_idle(const workload::OpList& ops, std::span<const SimTime> durations,
                                        const cost::HostCosts& host, SimTime lead = SimTime{});

}  // namespace trainsim::program
