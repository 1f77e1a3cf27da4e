#include <boost/program_options.hpp>
#include <iostream>

#include "sim/cli/command_line.h"
#include "sim/cli/commands.h"
#include "sim/config/scenario.h"
#include "sim/core/input_error.h"
#include "sim/validate/validation_output.h"
#include "sim/validate/validation_run.h"

namespace trainsim::cli {

namespace po = boost::program_options;

int validate_command(const std::vector<std::string>& args) {
    std::string path;
    std::string format = "text";
    std::vector<std::string> sets;
    po::options_description options("trainsim validate FILE [options]");
    options.add_options()("help,h", "show this help")("format", po::value<std::string>(&format),
                                                      "text (default), json or csv")(
        "set", po::value<std::vector<std::string>>(&sets)->composing(),
        "override a key in every case's scenario, after the case's own: --set hardware.profile=my-h100.json "
        "runs the file on another profile");
    po::options_description hidden;
    hidden.add_options()("file", po::value<std::string>(&path));
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("file", 1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
        std::cout
            << options
            << "FILE lists published measurements (scenarios/validation/README.md). Exit status 1 when a\n"
               "simulated value is outside a case's tolerance, 2 for bad input.\n";
        return 0;
    }
    if (path.empty()) {
        throw InputError(
            "validate: missing FILE (a validation file, e.g. scenarios/validation/korthikanti-2022.json)");
    }
    const Format f = parse_format(format);
    // Everything is evaluated before anything is printed, so a bad case leaves no partial table.
    validate::ValidationFile file = validate::read_validation_file(path);
    const std::vector<config::Override> overrides = config::parse_overrides(sets);
    for (validate::ValidationCase& c : file.cases) {
        c.overrides.insert(c.overrides.end(), overrides.begin(), overrides.end());
    }
    const validate::ValidationReport report = validate::run_validation(file, profile_directory());
    switch (f) {
    case Format::Json:
        std::cout << validate::to_json(report).dump(2) << "\n";
        break;
    case Format::Csv:
        validate::write_csv(std::cout, report);
        break;
    case Format::Text:
        validate::write_text(std::cout, report);
        break;
    }
    return report.failures() == 0 ? 0 : 1;
}

}  // namespace trainsim::cli
