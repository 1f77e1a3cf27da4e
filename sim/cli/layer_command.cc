#include <boost/program_options.hpp>
#include <iostream>

#include "sim/cli/command_line.h"
#include "sim/cli/commands.h"
#include "sim/core/input_error.h"
#include "sim/program/layer_program.h"
#include "sim/report/report_json.h"
#include "sim/report/report_text.h"

namespace trainsim::cli {

namespace po = boost::program_options;

int layer_command(const std::vector<std::string>& args) {
    CommonOptions common;
    std::string format = "text";
    po::options_description options("trainsim layer SCENARIO [options]");
    options.add_options()("help,h", "show this help")(
        "set", po::value<std::vector<std::string>>(&common.overrides)->composing(),
        "override a scenario key: --set training.recompute_granularity=selective")(
        "format", po::value<std::string>(&format), "text (default), json or csv");
    po::options_description hidden;
    hidden.add_options()("scenario", po::value<std::string>(&common.scenario_path));
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("scenario", 1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
        std::cout << options;
        return 0;
    }
    if (common.scenario_path.empty()) {
        throw InputError("layer: missing SCENARIO (a scenario JSON file)");
    }
    common.format = parse_format(format);
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
