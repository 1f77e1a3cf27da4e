// What a running NCCL collective takes from the kernels beside it (issue 19): NCCL runs one CTA per
// channel, each holding an SM that compute then lacks, and its copies and reductions move bytes through
// the GPU's HBM that a memory-bound kernel needs too. The profile's optional section
// network.collective_contention gives the channel counts and the HBM traffic per bus byte of reducing
// and of copying ring steps (scenarios/hardware/README.md "Contention");
// hardware.collective_contention=nccl_channels uses it in place of the single compute_share_while_overlapped.
#pragma once

#include "sim/core/units.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::cost {

/// NCCL's channels for a ring or tree collective of nccl-tests' S = `bytes` on a communicator of
/// `channels` channels (src/enqueue.cc topoGetAlgoInfo, "Ring/Tree channel tuning": nc drops by one
/// while nBytes < nc · nt · threadThreshold, nBytes being S): with the Simple protocol's
/// nt = NCCL_SIMPLE_MAX_NTHREADS 512 (src/include/device.h) and threshold
/// NCCL_SIMPLE_THREAD_THRESHOLD 64 (src/include/comm.h), one channel per 32 KiB of S, at least one.
[[nodiscard]] int nccl_active_channels(int channels, Bytes bytes);

/// The shares of one GPU a running collective holds.
struct ContentionShares {
    int channels = 0;        // CTAs, one SM each
    double sm_share = 0.0;   // channels / num_sms
    double hbm_share = 0.0;  // its HBM traffic over gpu.hbm_GBps, at most 1/2
};

/// How many times longer a kernel runs beside the collective.
struct OverlapSlowdown {
    double compute_bound = 1.0;  // GEMMs and attention kernels
    double memory_bound = 1.0;   // memory-bound kernels
    friend bool operator==(const OverlapSlowdown&, const OverlapSlowdown&) = default;
};

/// The shares a collective of `kind` over `group_size` ranks holds while it runs for `duration` (its
/// priced time): its active channels' SMs, and its HBM traffic rate, k · S · busbw_factor / duration,
/// with k the profile's HBM bytes per bus byte of its steps: reducing ones for a reduce-scatter, copying
/// ones for an all-gather, all-to-all or send/recv, and half of each for an all-reduce (a reduce-scatter
/// then an all-gather, each half its bus traffic). Two streams that each could fill HBM get half of it each
/// under max-min fairness, so the collective's HBM share is capped at 1/2. Needs
/// profile.collective_contention.
[[nodiscard]] ContentionShares collective_contention(const HardwareProfile& profile, CollectiveKind kind,
                                                     Bytes bytes, int group_size, Scope scope,
                                                     Seconds duration);

/// A compute-bound kernel runs on the SMs the collective leaves it, 1 / (1 − sm_share); a memory-bound
/// kernel is held by HBM, not by its SMs, and gets what the collective leaves of it, 1 / (1 − hbm_share).
[[nodiscard]] OverlapSlowdown overlap_slowdown(const ContentionShares& shares);

}  // namespace trainsim::cost
