// Options shared by the subcommands, and the pieces every subcommand runs: load the scenario and its
// profile, print in the requested format.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::cli {

enum class Format { Text, Json, Csv };

struct CommonOptions {
    std::string scenario_path;
    std::vector<std::string> overrides;  // "key=value"
    Format format = Format::Text;
};

/// The options every scenario subcommand shares (`--set`, `--format`) and its positional scenarios.
struct ScenarioArguments {
    std::vector<std::string> scenarios;
    std::vector<std::string> overrides;
    std::string format = "text";
};

/// Parses `args` with `options` (the command's own) plus `--help`, `--set`, `--format` and up to
/// `max_scenarios` positional scenario paths (-1: any number) into `out`. Prints the help and returns
/// false when `--help` was given.
[[nodiscard]] bool parse_scenario_arguments(const std::vector<std::string>& args, const std::string& usage,
                                            const std::string& help_tail, int max_scenarios,
                                            boost::program_options::options_description& options,
                                            ScenarioArguments& out);

/// Parses `--format` values; throws InputError naming the option.
[[nodiscard]] Format parse_format(const std::string& text);

/// Loads the scenario with its overrides applied.
[[nodiscard]] config::Scenario load_scenario(const CommonOptions& options);

/// Loads the scenario's hardware profile: a name from the shipped profile folder (TRAINSIM_DATA_DIR or
/// the source tree's scenarios/hardware), or a path.
[[nodiscard]] cost::HardwareProfile load_profile(const config::Scenario& scenario);

/// Where the shipped profiles and scenarios live.
[[nodiscard]] std::string profile_directory();
[[nodiscard]] std::string scenario_directory();

}  // namespace trainsim::cli
