// `trainsim sweep SWEEP.json [-o FILE] [--jobs N] [--quiet]`: a grid of scenarios → one CSV row each.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <iostream>

#include "sim/cli/command_line.h"
#include "sim/cli/commands.h"
#include "sim/core/input_error.h"
#include "sim/sweep/mpi_sweep.h"
#include "sim/sweep/sweep_runner.h"
#include "sim/sweep/sweep_spec.h"
#include "sim/sweep/worker_pool.h"

namespace trainsim::cli {

namespace po = boost::program_options;

int sweep_command(const std::vector<std::string>& args) {
    std::string sweep_path;
    std::string output;
    int jobs = 0;
    po::options_description options("trainsim sweep SWEEP.json [options]");
    options.add_options()("help,h", "show this help")(
        "output,o", po::value<std::string>(&output),
        "write the CSV to FILE (default: stdout); an existing FILE is resumed: its rows are skipped")(
        "jobs,j", po::value<int>(&jobs),
        "worker threads (default 0: one per hardware thread)")("quiet,q", "no progress on stderr");
    po::options_description hidden;
    hidden.add_options()("sweep", po::value<std::string>(&sweep_path));
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("sweep", 1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
        std::cout << options;
        return 0;
    }
    if (sweep_path.empty()) {
        throw InputError("trainsim sweep: missing SWEEP (a sweep JSON file: a base scenario and axes)");
    }
    if (jobs < 0) {
        throw InputError("--jobs=" + std::to_string(jobs) + " must be ≥ 0 (0: one per hardware thread)");
    }
    const sweep::SweepSpec spec = sweep::load_sweep(sweep_path);
    sweep::SweepOptions run;
    run.output_path = output;
    run.output_option = "--output";
    run.jobs = jobs == 0 ? sweep::default_jobs() : static_cast<unsigned>(jobs);
    run.profile_directory = profile_directory();
    if (!vm.count("quiet")) {
        run.progress = &std::cerr;
        run.progress_terminal = ::isatty(STDERR_FILENO) == 1;
    }
    sweep::SweepSummary s;
    if (sweep::launched_with_several_ranks()) {
        // mpirun -n N: the ranks share the grid and rank 0 writes the CSV (sim/sweep/mpi_sweep.h).
        bool root = false;
        s = sweep::run_sweep_mpi(spec, run, std::cout, &root);
        if (!root) {
            return 0;
        }
    } else {
        s = sweep::run_sweep(spec, run, std::cout);
    }
    if (!vm.count("quiet")) {
        std::cerr << "sweep: " << s.points << " points: " << s.skipped << " already in the output, "
                  << s.simulated << " simulated (" << s.failed << " with an error in their row)"
                  << (output.empty() ? "" : " -> " + output) << "\n";
    }
    return 0;
}

}  // namespace trainsim::cli
