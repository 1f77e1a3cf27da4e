// trainsim-calibrate: measure a machine, import measurements, fit a hardware profile, compare profiles.
// Errors are one line on stderr: exit 2 for input the user can fix, 1 for an internal error.
#include <boost/program_options/errors.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "calibrate/cli/commands.h"
#include "sim/core/input_error.h"

namespace {

constexpr const char* kUsage =
    "usage: trainsim-calibrate <command> [options]\n"
    "commands:\n"
    "  run      run the microbenchmarks (--backend cpu|cuda) and write Google Benchmark JSON\n"
    "  import   convert nccl-tests logs or benchmark JSON into a measurement file\n"
    "  fit      fit a hardware profile (--base PROFILE or --spec SPEC) from measurements\n"
    "  compare  the cost two profiles give each op of a scenario's layer\n"
    "run 'trainsim-calibrate <command> --help' for a command's options\n";

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::cout << kUsage;
        return args.empty() ? 2 : 0;
    }
    const std::string command = args[0];
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    namespace cli = trainsim::calibrate::cli;
    try {
        if (command == "run") {
            return cli::run_command(rest);
        }
        if (command == "import") {
            return cli::import_command(rest);
        }
        if (command == "fit") {
            return cli::fit_command(rest);
        }
        if (command == "compare") {
            return cli::compare_command(rest);
        }
        std::cerr << "trainsim-calibrate: unknown command '" << command
                  << "' (commands: run, import, fit, compare)\n";
        return 2;
    } catch (const trainsim::InputError& e) {
        std::cerr << "trainsim-calibrate " << command << ": " << e.what() << "\n";
        return 2;
    } catch (const boost::program_options::error& e) {
        std::cerr << "trainsim-calibrate " << command << ": " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "trainsim-calibrate " << command << ": internal error: " << e.what() << "\n";
        return 1;
    }
}
