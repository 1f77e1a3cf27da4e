// One op's execution in an iteration, simulated or measured, with the labels that pair the two: the GPU,
// the op's name, its phase and category, and the layer, micro-batch and chunk it belongs to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/core/units.h"
#include "sim/cost/cost_model.h"

namespace trainsim::check {

struct OpSample {
    std::int64_t gpu = 0;  // the simulated GPU (a trace's pid)
    std::string name;      // "qkv", "qkv.dgrad", "attn.allreduce", "send activation to stage 1", ...
    std::string phase;     // "forward", "backward", "iteration"
    std::string category;  // "compute", "recompute", "tensor_comm", ...
    std::int32_t layer = -1;
    std::int32_t microbatch = -1;
    std::int32_t chunk = -1;
    SimTime start{};
    SimTime duration{};
    // What a kernel in a profiler trace can be matched on (simulated ops only).
    std::optional<cost::GemmShape> gemm;
    std::optional<cost::CollectiveKind> collective;
    Bytes collective_bytes{0};
};

/// The phase column of a comparison: recomputed forward work is its own phase, whatever task runs it.
[[nodiscard]] inline std::string phase_label(const OpSample& s) {
    return s.category == "recompute" ? "recompute" : s.phase;
}

}  // namespace trainsim::check
