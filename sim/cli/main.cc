// trainsim: simulate large-transformer training. Errors are one line on stderr: exit 2 for input the
// user can fix, 3 for a run that cannot finish (deadlock, event budget), 1 for an internal error.
#include <boost/program_options/errors.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/core/input_error.h"
#include "sim/engine/simulator.h"

namespace {

constexpr const char* kUsage =
    "usage: trainsim <command> [options]\n"
    "commands:\n"
    "  run SCENARIO    simulate one training iteration (--format text|json|csv, --trace FILE, --set k=v, "
    "--fold, --critical-path, --report FILE.html)\n"
    "  layer SCENARIO  one transformer layer on one GPU for one micro-batch (Korthikanti Table 4)\n"
    "  activations [SCENARIO...]  activation memory per layer by technique (Korthikanti Table 2, Figure 7)\n"
    "  recompute [SCENARIO...]    none / selective / full / overlapped recomputation on time and memory\n"
    "  whatif SCENARIO rank what moves the iteration time: profile parameters +10 %, layout knobs to their "
    "neighbours (--plot FILE.svg, --jobs N)\n"
    "  sweep SWEEP     a grid of scenario overrides -> one CSV row each (-o FILE resumes, --jobs N)\n"
    "  plan            rank the parallel layouts that fit (--model PRESET --gpus N --global-batch B)\n"
    "  validate FILE   compare with published measurements (exit 1 when one is outside its tolerance)\n"
    "  check SCENARIO --measured TRACE...  a measured iteration (PyTorch profiler trace) vs the simulated "
    "one\n"
    "run 'trainsim <command> --help' for a command's options\n";

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::cout << kUsage;
        return args.empty() ? 2 : 0;
    }
    const std::string command = args[0];
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    try {
        if (command == "run") {
            return trainsim::cli::run_command(rest);
        }
        if (command == "layer") {
            return trainsim::cli::layer_command(rest);
        }
        if (command == "activations") {
            return trainsim::cli::activations_command(rest);
        }
        if (command == "recompute") {
            return trainsim::cli::recompute_command(rest);
        }
        if (command == "whatif") {
            return trainsim::cli::whatif_command(rest);
        }
        if (command == "sweep") {
            return trainsim::cli::sweep_command(rest);
        }
        if (command == "plan") {
            return trainsim::cli::plan_command(rest);
        }
        if (command == "validate") {
            return trainsim::cli::validate_command(rest);
        }
        if (command == "check") {
            return trainsim::cli::check_command(rest);
        }
        std::cerr << "trainsim: unknown command '" << command
                  << "' (commands: run, layer, activations, whatif, sweep, validate, plan, check)\n";
        return 2;
    } catch (const trainsim::InputError& e) {
        std::cerr << "trainsim: " << e.what() << "\n";
        return 2;
    } catch (const boost::program_options::error& e) {
        std::cerr << "trainsim " << command << ": " << e.what() << "\n";
        return 2;
    } catch (const trainsim::engine::SimulationError& e) {
        std::cerr << "trainsim: simulation cannot finish: " << e.what() << "\n";
        return 3;
    } catch (const std::exception& e) {
        std::cerr << "trainsim: internal error: " << e.what() << "\n";
        return 1;
    }
}
