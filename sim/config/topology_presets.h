// Named fabric shapes for hardware.topology.preset (scenarios/README.md "Network"), each from the
// vendor's reference architecture.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/config/scenario.h"

namespace trainsim::config {

/// The preset `name`; an unknown name is an InputError naming `path` with the known names.
[[nodiscard]] TopologyConfig topology_preset(std::string_view name, std::string_view path);
[[nodiscard]] std::vector<std::string> topology_preset_names();

}  // namespace trainsim::config
