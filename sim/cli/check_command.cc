#include <algorithm>
#include <iostream>

#include "calibrate/import/kineto_trace_reader.h"
#include "sim/check/check_output.h"
#include "sim/check/comparison.h"
#include "sim/check/kernel_matching.h"
#include "sim/check/measured_ops.h"
#include "sim/check/simulated_ops.h"
#include "sim/cli/command_line.h"
#include "sim/cli/commands.h"
#include "sim/core/input_error.h"
#include "sim/experiment/simulate_scenario.h"

namespace trainsim::cli {

namespace po = boost::program_options;

int check_command(const std::vector<std::string>& args) {
    ScenarioArguments a;
    std::vector<std::string> measured;
    std::int64_t gpu = 0;
    po::options_description extra("check options");
    extra.add_options()("measured", po::value(&measured)->multitoken()->composing(),
                        "the measured iteration: PyTorch profiler traces (.json, .json.gz) of the job, or a "
                        "trace written by 'trainsim run --trace'")(
        "gpu", po::value(&gpu),
        "profiler traces: the simulated GPU (a trace pid of 'trainsim run --trace') they are compared with "
        "(default 0, pipeline stage 0)");
    if (!parse_scenario_arguments(
            args, "trainsim check SCENARIO --measured TRACE... [options]",
            "Compares a measured iteration with the simulated one, per op, per phase and in total.\n", 1,
            extra, a)) {
        return 0;
    }
    if (a.scenarios.empty()) {
        throw InputError("check: missing SCENARIO (a scenario JSON file)");
    }
    if (measured.empty()) {
        throw InputError("check: --measured is required (a PyTorch profiler trace of the job)");
    }
    const CommonOptions common{a.scenarios.front(), a.overrides, parse_format(a.format)};
    const config::Scenario scenario = load_scenario(common);
    const cost::CostModel cost(load_profile(scenario));

    std::vector<kineto::Trace> traces;
    bool labelled = true;
    for (const std::string& path : measured) {
        traces.push_back(kineto::read_trace(path));
        const kineto::Trace& t = traces.back();
        if (t.labelled.empty() && t.gpu.empty()) {
            throw InputError(path +
                             ": no GPU kernels and no trainsim op slices to compare (a CPU-only trace?)");
        }
        labelled = labelled && !t.labelled.empty();
    }

    const experiment::Simulation sim = experiment::simulate_scenario(scenario, cost);
    const program::IterationProgram& prog = sim.program;
    const engine::RunResult& run = sim.run;
    if (gpu < 0 || gpu >= static_cast<std::int64_t>(prog.gpus.size())) {
        throw InputError("--gpu=" + std::to_string(gpu) + " must be a simulated GPU, 0 to " +
                         std::to_string(prog.gpus.size() - 1));
    }
    const std::vector<check::OpSample> simulated = check::simulated_ops(prog, run);

    check::Comparison comparison;
    if (labelled) {
        std::vector<check::OpSample> ops;
        for (const kineto::Trace& t : traces) {
            std::vector<check::OpSample> more = check::labelled_ops(t);
            ops.insert(ops.end(), more.begin(), more.end());
        }
        std::int64_t measured_gpus = 0;
        for (const check::OpSample& o : ops) {
            measured_gpus = std::max(measured_gpus, o.gpu + 1);
        }
        comparison = check::compare_by_labels(simulated, ops);
        if (measured_gpus != static_cast<std::int64_t>(prog.gpus.size())) {
            comparison.notes.push_back("the measured trace has " + std::to_string(measured_gpus) +
                                       " simulated GPUs, this check " + std::to_string(prog.gpus.size()) +
                                       " (it folds tp,dp): make the measured trace with the default --fold");
        }
    } else {
        comparison = check::compare_by_kernels(simulated, traces, gpu);
    }
    for (const kineto::Trace& t : traces) {
        for (const std::string& s : t.skipped) {
            comparison.notes.push_back(t.path + ": skipped " + s);
        }
    }
    const check::CheckHeader header{common.scenario_path, measured};
    switch (common.format) {
    case Format::Json:
        std::cout << check::to_json(header, comparison).dump(2) << "\n";
        break;
    case Format::Csv:
        check::write_csv(std::cout, comparison);
        break;
    case Format::Text:
        check::write_text(std::cout, header, comparison);
        break;
    }
    return 0;
}

}  // namespace trainsim::cli
