#include <boost/program_options.hpp>
#include <iostream>

#include "sim/cli/command_line.h"
#include "sim/cli/commands.h"
#include "sim/core/input_error.h"
#include "sim/report/activation_table.h"

namespace trainsim::cli {

namespace po = boost::program_options;

int activations_command(const std::vector<std::string>& args) {
    std::vector<std::string> paths;
    std::vector<std::string> overrides;
    std::string format = "text";
    po::options_description options("trainsim activations [SCENARIO...] [options]");
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
        std::cout << options << "With no SCENARIO: the four Korthikanti models of the paper's Figure 7.\n";
        return 0;
    }
    const Format f = parse_format(format);
    if (f == Format::Csv) {
        throw InputError("--format=csv is not available for activations (use text or json)");
    }
    if (paths.empty()) {
        for (const char* model : {"korthikanti-22b", "korthikanti-175b", "korthikanti-530b", "korthikanti-1t"}) {
            paths.push_back(scenario_directory() + "/" + model + ".json");
        }
    }
    std::vector<report::ActivationTable> tables;
    for (const std::string& path : paths) {
        tables.push_back(report::activation_table(load_scenario(CommonOptions{path, overrides, f})));
    }
    if (f == Format::Json) {
        std::cout << report::to_json(tables).dump(2) << "\n";
    } else {
        report::write_text(std::cout, tables);
    }
    return 0;
}

}  // namespace trainsim::cli
