// A GPU's compute (its SMs) as an engine resource (issue 18; DESIGN.md §8 "Network": contention is
// simulated, not estimated). Tasks on the GPU's compute streams hold it; a running communication task
// (a collective member or a send/receive) holds a share of it, as NCCL's kernels hold SMs beside the
// compute. How fast the compute tasks then progress is the sharing policy's to say; they are repriced
// only when a share is taken or given back (no time stepping). The engine learns streams and shares,
// never what a kernel or a collective is.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/engine/program.h"

namespace trainsim::engine {

/// How fast a GPU's compute tasks progress, relative to alone, given the shares that the
/// communication running on that GPU holds (each the compute rate it would leave on its own).
class ComputeSharing {
public:
    virtual ~ComputeSharing() = default;
    /// In (0, 1]; 1 when `held` is empty.
    [[nodiscard]] virtual double rate(std::span<const double> held) const = 0;
};

/// The cost model's fixed shares: compute runs at the rate the most demanding running collective
/// leaves it (the lowest), never compounded — NCCL's collectives beside each other share their CTAs'
/// SMs with each other before they take more from compute; alone it runs at rate 1.
class FixedShare final : public ComputeSharing {
public:
    [[nodiscard]] double rate(std::span<const double> held) const override;
};

/// Each GPU's compute resource: its compute streams, the shares held on it now, and the resulting rate.
class GpuCompute {
public:
    GpuCompute(const Program& program, const ComputeSharing& policy);

    [[nodiscard]] double rate(GpuId gpu) const { return rate_[gpu.index()]; }
    [[nodiscard]] std::span<const StreamId> streams(GpuId gpu) const { return streams_[gpu.index()]; }
    /// A communication task on `gpu` that leaves compute `share` starts (hold) or ends (release);
    /// returns whether the GPU's rate changed.
    bool hold(GpuId gpu, double share);
    bool release(GpuId gpu, double share);

private:
    bool update(GpuId gpu);

    const ComputeSharing& policy_;
    std::vector<std::vector<double>> held_;       // per GPU: the shares of its running communication
    std::vector<double> rate_;                    // per GPU
    std::vector<std::vector<StreamId>> streams_;  // per GPU: its compute streams
};

}  // namespace trainsim::engine
