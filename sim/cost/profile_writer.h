// A hardware profile written back as the JSON document the loader reads (scenarios/hardware/README.md):
// every value with its kind and source, curves with their point provenance, notes and assumptions, in
// the loader's key order. profile_from_json(name, profile_to_json(p)) == p for every valid profile, so
// trainsim-calibrate writes profiles through the struct the simulator reads.
#pragma once

#include "sim/core/strict_json.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::cost {

[[nodiscard]] Json profile_to_json(const HardwareProfile& profile);

}  // namespace trainsim::cost
