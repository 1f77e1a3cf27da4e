#include "sim/engine/gpu_compute.h"

#include <algorithm>
#include <stdexcept>

namespace trainsim::engine {

double FixedShare::rate(std::span<const double> held) const {
    return held.empty() ? 1.0 : *std::min_element(held.begin(), held.end());
}

GpuCompute::GpuCompute(const Program& program, const ComputeSharing& policy) : policy_(policy) {
    std::int32_t gpus = 0;
    for (const Stream& s : program.streams()) {
        gpus = std::max(gpus, s.gpu.value() + 1);
    }
    held_.resize(static_cast<std::size_t>(gpus));
    rate_.assign(static_cast<std::size_t>(gpus), 1.0);
    streams_.resize(static_cast<std::size_t>(gpus));
    const auto& streams = program.streams();
    for (std::size_t s = 0; s < streams.size(); ++s) {
        if (streams[s].compute) {
            streams_[streams[s].gpu.index()].push_back(StreamId::from_index(s));
        }
    }
}

bool GpuCompute::hold(GpuId gpu, double share) {
    held_[gpu.index()].push_back(share);
    return update(gpu);
}

bool GpuCompute::release(GpuId gpu, double share) {
    std::vector<double>& held = held_[gpu.index()];
    const auto it = std::find(held.begin(), held.end(), share);
    if (it == held.end()) {
        throw std::logic_error("GpuCompute: a share released that was not held");
    }
    *it = held.back();
    held.pop_back();
    return update(gpu);
}

bool GpuCompute::update(GpuId gpu) {
    const double r = policy_.rate(held_[gpu.index()]);
    if (!(r > 0.0 && r <= 1.0)) {
        throw std::logic_error("ComputeSharing: a rate outside (0, 1]");
    }
    double& current = rate_[gpu.index()];
    const bool changed = r != current;
    current = r;
    return changed;
}

}  // namespace trainsim::engine
