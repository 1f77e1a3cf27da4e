#include <iostream>

#include "sim/cli/command_line.h"
#include "sim/cli/commands.h"
#include "sim/core/input_error.h"
#include "sim/report/activation_table.h"

namespace trainsim::cli {

int activations_command(const std::vector<std::string>& args) {
    ScenarioArguments a;
    boost::program_options::options_description none;
    if (!parse_scenario_arguments(args, "trainsim activations [SCENARIO...] [options]",
                                  "With no SCENARIO: the four Korthikanti models of the paper's Figure 7.\n",
                                  -1, none, a)) {
        return 0;
    }
    const Format f = parse_format(a.format);
    if (f == Format::Csv) {
        throw InputError("--format=csv is not available for activations (use text or json)");
    }
    if (a.scenarios.empty()) {
        for (const char* model :
             {"korthikanti-22b", "korthikanti-175b", "korthikanti-530b", "korthikanti-1t"}) {
            a.scenarios.push_back(scenario_directory() + "/" + model + ".json");
        }
    }
    std::vector<report::ActivationTable> tables;
    for (const std::string& path : a.scenarios) {
        tables.push_back(report::activation_table(load_scenario(CommonOptions{path, a.overrides, f})));
    }
    if (f == Format::Json) {
        std::cout << report::to_json(tables).dump(2) << "\n";
    } else {
        report::write_text(std::cout, tables);
    }
    return 0;
}

}  // namespace trainsim::cli
