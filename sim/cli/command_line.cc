#include "sim/cli/command_line.h"

#include <cstdlib>

#include "sim/core/input_error.h"

namespace trainsim::cli {

Format parse_format(const std::string& text) {
    if (text == "text") {
        return Format::Text;
    }
    if (text == "json") {
        return Format::Json;
    }
    if (text == "csv") {
        return Format::Csv;
    }
    throw InputError("--format=" + text + " must be one of text, json, csv");
}

config::Scenario load_scenario(const CommonOptions& options) {
    std::vector<config::Override> overrides;
    for (const std::string& text : options.overrides) {
        overrides.push_back(config::parse_override(text));
    }
    return config::load_scenario(options.scenario_path, overrides);
}

std::string scenario_directory() {
    if (const char* dir = std::getenv("TRAINSIM_DATA_DIR"); dir != nullptr && *dir != '\0') {
        return dir;
    }
    return std::string(TRAINSIM_SOURCE_DIR) + "/scenarios";
}

std::string profile_directory() { return scenario_directory() + "/hardware"; }

cost::HardwareProfile load_profile(const config::Scenario& scenario) {
    return cost::load_hardware_profile(scenario.hardware.profile, profile_directory());
}

}  // namespace trainsim::cli
