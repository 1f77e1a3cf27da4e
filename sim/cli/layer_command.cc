#include <iostream>

#include "sim/cli/command_line.h"
#include "sim/cli/commands.h"
#include "sim/core/input_error.h"
#include "sim/program/layer_program.h"
#include "sim/report/report_json.h"
#include "sim/report/report_text.h"

namespace trainsim::cli {

int layer_command(const std::vector<std::string>& args) {
    ScenarioArguments a;
    boost::program_options::options_description none;
    if (!parse_scenario_arguments(args, "trainsim layer SCENARIO [options]", "", 1, none, a)) {
        return 0;
    }
    if (a.scenarios.empty()) {
        throw InputError("layer: missing SCENARIO (a scenario JSON file)");
    }
    const CommonOptions common{a.scenarios.front(), a.overrides, parse_format(a.format)};
    const config::Scenario scenario = load_scenario(common);
    const cost::CostModel cost(load_profile(scenario));
    const program::IterationProgram prog = program::build_single_layer(scenario, cost);
    const engine::RunResult run = program::simulate(prog);
    const report::LayerReport rep = report::make_layer_report(scenario, cost, prog, run);
    switch (common.format) {
    case Format::Json:
        std::cout << report::to_json(rep).dump(2) << "\n";
        break;
    case Format::Csv:
        report::write_csv(std::cout, rep);
        break;
    case Format::Text:
        report::write_text(std::cout, rep);
        break;
    }
    return 0;
}

}  // namespace trainsim::cli
