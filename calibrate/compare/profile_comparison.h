// `trainsim-calibrate compare`: the cost two profiles give each op of a scenario's transformer layer
// (forward and backward, with its recompute policy), priced exactly as the simulator prices them, so that a
// user sees what a new calibration changes before running whole iterations with it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "calibrate/measure/json_writer.h"
#include "sim/config/scenario.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::calibrate {

struct OpComparison {
    std::string phase;  // "forward" or "backward"
    std::string op;     // the workload's name, e.g. "qkv", "fc1.wgrad", "proj.allreduce"
    std::string what;   // shape, bytes or collective, e.g. "gemm 8192x2304x6144"
    double a_s = 0.0;
    double b_s = 0.0;
};

struct ProfileComparison {
    std::string scenario;
    std::string profile_a;
    std::string profile_b;
    std::vector<OpComparison> ops;
    std::vector<std::string> warnings_a;  // reads outside a curve's range, as the simulator reports them
    std::vector<std::string> warnings_b;
};

/// Prices the layer's ops with both profiles. Throws InputError when the scenario does not fit a profile
/// (more GPUs per node than it describes).
[[nodiscard]] ProfileComparison compare_profiles(const config::Scenario& scenario,
                                                 const cost::HardwareProfile& a,
                                                 const cost::HardwareProfile& b);

/// A table: one line per op with both times in microseconds and their ratio, then per-phase sums.
void write_comparison_text(std::ostream& out, const ProfileComparison& comparison);

[[nodiscard]] OrderedJson comparison_json(const ProfileComparison& comparison);

}  // namespace trainsim::calibrate
