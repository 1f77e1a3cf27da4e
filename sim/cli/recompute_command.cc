#include <boost/program_options.hpp>
#include <iostream>

#include "sim/cli/command_line.h"
#include "sim/cli/commands.h"
#include "sim/core/input_error.h"
#include "sim/recompute_search/policy_comparison.h"

namespace trainsim::cli {

namespace po = boost::program_options;

int recompute_command(const std::vector<std::string>& args) {
    std::vector<std::string> paths;
    std::vector<std::string> overrides;
    std::string format = "text";
    po::options_description options("trainsim recompute [SCENARIO...] [options]");
    options.add_options()("help,h", "show this help")(
        "set", po::value<std::vector<std::string>>(&overrides)->composing(), "override a key in every scenario")(
        "format", po::value<std::string>(&format), "text (default) or json");
    po::options_description hidden;
    hidden.add_options()("scenario", po::value<std::vector<std::string>>(&paths));
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("scenario", -1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
        std::cout << options
                  << "Compares none, selective, full and overlapped recomputation on time and memory.\n"
                     "With no SCENARIO: the Korthikanti 22B, 175B and 530B scenarios.\n";
        return 0;
    }
    const Format f = parse_format(format);
    if (f == Format::Csv) {
        throw InputError("--format=csv is not available for recompute (use text or json)");
    }
    if (paths.empty()) {
        for (const char* model : {"korthikanti-22b", "korthikanti-175b", "korthikanti-530b"}) {
            paths.push_back(scenario_directory() + "/" + model + ".json");
        }
    }
    std::vector<recompute_search::PolicyComparison> rows;
    for (const std::string& path : paths) {
        const config::Scenario scenario = load_scenario(CommonOptions{path, overrides, f});
        const cost::CostModel cost(load_profile(scenario));
        rows.push_back(recompute_search::compare_policies(scenario, cost));
    }
    if (f == Format::Json) {
        std::cout << recompute_search::to_json(rows).dump(2) << "\n";
    } else {
        recompute_search::write_text(std::cout, rows);
    }
    return 0;
}

}  // namespace trainsim::cli
