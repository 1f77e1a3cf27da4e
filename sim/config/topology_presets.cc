#include "sim/config/topology_presets.h"

#include <algorithm>

#include "sim/core/strict_json.h"
#include "sim/core/did_you_mean.h"
#include "sim/core/input_error.h"

namespace trainsim::config {

namespace {

struct Preset {
    const char* name;
    TopologyConfig config;
};

// NVIDIA DGX SuperPOD reference architectures: the compute fabric is a rail-optimised, non-blocking
// InfiniBand fat tree built from scalable units (SU) with one leaf switch per rail.
// - DGX A100 SuperPOD: SUs of 20 DGX A100, 140 nodes (7 SUs) under one spine group, a core tier above
//   for larger systems (Selene, 280 nodes, is two such groups).
// - DGX H100 SuperPOD: SUs of 32 DGX H100 and 4 SUs (128 node slots) under one spine group.
const std::vector<Preset>& presets() {
    static const std::vector<Preset> list{
        {"dgx-a100-superpod",
         TopologyConfig{std::nullopt, FabricKind::RailOptimized, 20, 1.0, 140, 1.0, true}},
        {"dgx-h100-superpod",
         TopologyConfig{std::nullopt, FabricKind::RailOptimized, 32, 1.0, 128, 1.0, true}},
    };
    return list;
}

}  // namespace

std::vector<std::string> topology_preset_names() {
    std::vector<std::string> names;
    for (const Preset& p : presets()) {
        names.emplace_back(p.name);
    }
    return names;
}

TopologyConfig topology_preset(std::string_view name, std::string_view path) {
    for (const Preset& p : presets()) {
        if (name == p.name) {
            TopologyConfig t = p.config;
            t.preset = std::string(name);
            return t;
        }
    }
    const std::vector<std::string> names = topology_preset_names();
    const std::string match = closest_match(name, names);
    throw InputError(std::string(path) + ": unknown preset \"" + std::string(name) + "\"" +
                     (match.empty() ? "" : " (did you mean " + match + "?)") +
                     "; known: " + comma_list(names));
}

}  // namespace trainsim::config
