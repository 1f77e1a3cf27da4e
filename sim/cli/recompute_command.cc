#include <iostream>

#include "sim/cli/command_line.h"
#include "sim/cli/commands.h"
#include "sim/core/input_error.h"
#include "sim/recompute_search/policy_comparison.h"

namespace trainsim::cli {

int recompute_command(const std::vector<std::string>& args) {
    ScenarioArguments a;
    bool partition = false;
    boost::program_options::options_description extra("recompute options");
    extra.add_options()("partition", boost::program_options::bool_switch(&partition),
                        "also choose the layers of each pipeline stage with the overlapped plan "
                        "(recomputation-aware partitioning; adds the row \"overlapped, partitioned\")");
    if (!parse_scenario_arguments(
            args, "trainsim recompute [SCENARIO...] [options]",
            "Compares none, selective, full and overlapped recomputation on time and memory.\n"
            "With no SCENARIO: the Korthikanti 22B, 175B and 530B scenarios.\n",
            -1, extra, a)) {
        return 0;
    }
    const Format f = parse_format(a.format);
    if (f == Format::Csv) {
        throw InputError("--format=csv is not available for recompute (use text or json)");
    }
    if (a.scenarios.empty()) {
        for (const char* model : {"korthikanti-22b", "korthikanti-175b", "korthikanti-530b"}) {
            a.scenarios.push_back(scenario_directory() + "/" + model + ".json");
        }
    }
    std::vector<recompute_search::PolicyComparison> rows;
    for (const std::string& path : a.scenarios) {
        const config::Scenario scenario = load_scenario(CommonOptions{path, a.overrides, f});
        const cost::CostModel cost(load_profile(scenario));
        rows.push_back(recompute_search::compare_policies(scenario, cost, partition));
    }
    if (f == Format::Json) {
        std::cout << recompute_search::to_json(rows).dump(2) << "\n";
    } else {
        recompute_search::write_text(std::cout, rows);
    }
    return 0;
}

}  // namespace trainsim::cli
