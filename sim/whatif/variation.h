// The nudges `trainsim whatif` tries (issue 20): each profile parameter scaled by a factor, and each
// layout knob moved to its neighbouring valid value.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/cost/profile_scaling.h"

namespace trainsim::whatif {

/// One re-simulation: the scenario, possibly with its layout moved, priced with the profile possibly
/// scaled.
struct Variation {
    std::string knob;   // "nic_bandwidth", "t", "recompute", ... (a JSON/CSV key)
    std::string label;  // "+10 % NIC bandwidth", "v 3 → 1"
    config::Scenario scenario;
    std::optional<cost::ProfileParameter> parameter;  // scaled by `factor` when set
    double factor = 1.0;
};

/// Every profile parameter (cost::all_profile_parameters) scaled by `factor`, the scenario unchanged.
[[nodiscard]] std::vector<Variation> profile_variations(const config::Scenario& base, double factor);

/// The layout knobs t, p, v, d, micro-batch and recompute granularity, each moved down and up to the
/// nearest value validate_scenario accepts (within [1, 2x]; recompute one step along none → selective →
/// full, full with the uniform method over 1 layer). A knob with no valid neighbour in a direction is
/// left out. t and p keep the GPU count: d moves the other way (t 8 → 4 makes d 8 → 16), and values for
/// which d would not be whole are skipped. d alone changes the GPU count.
[[nodiscard]] std::vector<Variation> layout_variations(const config::Scenario& base);

}  // namespace trainsim::whatif
