#include <algorithm>
#include <boost/program_options.hpp>
#include <iostream>

#include "calibrate/cli/cli_support.h"
#include "calibrate/cli/commands.h"
#include "calibrate/compare/profile_comparison.h"
#include "sim/core/input_error.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::calibrate::cli {

namespace po = boost::program_options;

int compare_command(const std::vector<std::string>& args) {
    std::vector<std::string> positional_args;
    std::vector<std::string> overrides;
    std::string format = "text";
    po::options_description options("trainsim-calibrate compare PROFILE_A [PROFILE_B] SCENARIO [options]\n"
                                    "  with one profile: A is the scenario's own profile, B the one given");
    options.add_options()("help,h", "show this help")(
        "set", po::value(&overrides)->composing(),
        "override a scenario key: --set training.micro_batch_size=2")("format", po::value(&format),
                                                                      "text (default) or json");
    po::options_description hidden;
    hidden.add_options()("arg", po::value(&positional_args)->composing());
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("arg", -1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
        std::cout << options;
        return 0;
    }
    if (positional_args.size() < 2 || positional_args.size() > 3) {
        throw InputError("needs PROFILE SCENARIO or PROFILE_A PROFILE_B SCENARIO, got " +
                         std::to_string(positional_args.size()) + " arguments");
    }
    if (format != "text" && format != "json") {
        throw InputError("--format=" + format + " must be text or json");
    }
    config::Scenario scenario = load_scenario(positional_args.back(), overrides);
    const std::string a = positional_args.size() == 3 ? positional_args[0] : scenario.hardware.profile;
    const std::string b = positional_args.size() == 3 ? positional_args[1] : positional_args[0];
    const cost::HardwareProfile profile_a = cost::load_hardware_profile(a, profile_directory());
    const cost::HardwareProfile profile_b = cost::load_hardware_profile(b, profile_directory());
    // A profile fitted on a smaller machine (a CPU run's 2 ranks, a 4-GPU node) cannot price a node of the
    // scenario's size: price both on the smaller node, re-validated as if given with --set, and say so.
    const auto node = std::min(profile_a.gpus_per_node, profile_b.gpus_per_node);
    if (scenario.hardware.gpus_per_node > node) {
        const std::string set = "hardware.gpus_per_node=" + std::to_string(node);
        std::cerr << "trainsim-calibrate compare: pricing with --set " << set << ", the node of profile "
                  << (profile_a.gpus_per_node == node ? profile_a.name : profile_b.name)
                  << " (the scenario has " << scenario.hardware.gpus_per_node << ")\n";
        overrides.push_back(set);
        scenario = load_scenario(positional_args.back(), overrides);
    }
    const ProfileComparison comparison = compare_profiles(scenario, profile_a, profile_b);
    if (format == "json") {
        std::cout << comparison_json(comparison).dump(2) << "\n";
    } else {
        write_comparison_text(std::cout, comparison);
    }
    return 0;
}

}  // namespace trainsim::calibrate::cli
