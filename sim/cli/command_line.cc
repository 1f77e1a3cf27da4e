#include "sim/cli/command_line.h"

#include <cstdlib>
#include <iostream>

#include "sim/core/input_error.h"

namespace trainsim::cli {

bool parse_scenario_arguments(const std::vector<std::string>& args, const std::string& usage,
                              const std::string& help_tail, int max_scenarios,
                              boost::program_options::options_description& options, ScenarioArguments& out) {
    namespace po = boost::program_options;
    po::options_description shown(usage);
    shown.add_options()("help,h", "show this help")(
        "set", po::value<std::vector<std::string>>(&out.overrides)->composing(),
        "override a scenario key: --set parallelism.data_parallel_size=16")(
        "format", po::value<std::string>(&out.format), "output format: text (default), json or csv");
    shown.add(options);
    po::options_description hidden;
    hidden.add_options()("scenario", po::value<std::vector<std::string>>(&out.scenarios));
    po::options_description all;
    all.add(shown).add(hidden);
    po::positional_options_description positional;
    positional.add("scenario", max_scenarios);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
        std::cout << shown << help_tail;
        return false;
    }
    return true;
}

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
    return config::load_scenario(options.scenario_path, config::parse_overrides(options.overrides));
}

std::string scenario_directory() {
    if (const char* dir = std::getenv("TRAINSIM_DATA_DIR"); dir != nullptr && *dir != '\0') {
        return dir;
    }
    return std::string(TRAINSIM_SOURCE_DIR) + "/scenarios";
}

std::string profile_directory() {
    return scenario_directory() + "/hardware";
}

cost::HardwareProfile load_profile(const config::Scenario& scenario) {
    return cost::load_hardware_profile(scenario.hardware.profile, profile_directory());
}

}  // namespace trainsim::cli
