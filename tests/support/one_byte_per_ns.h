#pragma once
// A cost model whose memory-bound kernels are priced by hand: 2 µs a launch plus 1 ns a byte.

#include "sim/cost/cost_model.h"
#include "sim/cost/hardware_profile.h"
#include "tests/test_support.h"

namespace trainsim::testing {

/// a100-80gb-selene with its memory-bound kernels at a 2 µs launch plus 1 ns a byte (1 GB/s, efficiency 1
/// at every size, every kind's factor 1).
inline cost::CostModel one_byte_per_ns() {
    cost::HardwareProfile p =
        cost::load_hardware_profile("a100-80gb-selene", source_path("scenarios/hardware"));
    p.hbm_GBps = 1.0;
    p.memory_bound_efficiency_vs_bytes.x = {1.0, 1e15};
    p.memory_bound_efficiency_vs_bytes.y = {1.0, 1.0};
    p.memory_bound_launch_us = 2.0;
    for (double& f : p.memory_bound_kind_factor) {
        f = 1.0;
    }
    return cost::CostModel(p);
}

}  // namespace trainsim::testing
