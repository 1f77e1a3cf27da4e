#include <boost/program_options.hpp>
#include <iostream>

#include "calibrate/cli/cli_support.h"
#include "calibrate/cli/commands.h"
#include "calibrate/import/load_measurements.h"
#include "calibrate/measure/measurement_file.h"
#include "calibrate/measure/source_id.h"
#include "sim/core/input_error.h"

namespace trainsim::calibrate::cli {

namespace po = boost::program_options;

int import_command(const std::vector<std::string>& args) {
    std::vector<std::string> inputs;
    std::string output;
    std::string op;
    int ranks = 0;
    int nodes = 0;
    std::string description;
    int gpus_per_node = KinetoImportOptions{}.gpus_per_node;
    po::options_description options("trainsim-calibrate import INPUT... --output FILE [options]");
    options.add_options()("help,h", "show this help")("output,o", po::value(&output),
                                                      "the measurement file to write (required)")(
        "op", po::value(&op), "nccl-tests logs: the collective, when the log does not name it")(
        "ranks", po::value(&ranks), "nccl-tests logs: the group size, when the log does not give it")(
        "nodes", po::value(&nodes), "nccl-tests logs: the nodes, when the log does not give them")(
        "description", po::value(&description), "what the measurements are (default: the inputs)")(
        "gpus-per-node", po::value(&gpus_per_node),
        "PyTorch profiler traces: GPUs per node, to place a collective's ranks on nodes (default 8)");
    po::options_description hidden;
    hidden.add_options()("input", po::value(&inputs)->composing());
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("input", -1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
        std::cout << options;
        return 0;
    }
    if (inputs.empty()) {
        throw InputError("needs at least one INPUT (an nccl-tests log, a run's JSON, a GEMM benchmark table, "
                         "a PyTorch profiler "
                         "trace or a measurement file)");
    }
    if (output.empty()) {
        throw InputError("--output is required (the measurement file to write)");
    }
    const NcclLogOptions log_options = nccl_options(op, ranks, nodes);
    std::vector<InputSpec> specs;
    for (const std::string& path : inputs) {
        specs.push_back({path, {}});
    }
    // The log options apply to the logs only; JSON inputs must not get them.
    for (InputSpec& spec : specs) {
        spec.kineto.gpus_per_node = gpus_per_node;
        if (looks_like_kineto_trace(spec.path)) {
            continue;
        }
        const std::string text = read_text_file(spec.path);
        if (detect_input_format(text, spec.path) == InputFormat::NcclTestsLog) {
            spec.nccl = log_options;
        }
    }
    const MeasurementSet set = load_measurements(specs);
    for (const std::string& w : set.warnings) {
        std::cerr << "trainsim-calibrate import: warning: " << w << "\n";
    }
    if (description.empty()) {
        for (const std::string& path : inputs) {
            description += (description.empty() ? "imported by trainsim-calibrate from " : ", ") + path;
        }
    }
    write_text_file(output, "--output", to_profile_style_json(to_measurement_json(set, description)));
    std::cout << "trainsim-calibrate import: " << set.gemms.size() << " GEMM, " << set.kernels.size()
              << " kernel, " << set.collectives.size() << " collective records -> " << output << "\n";
    return 0;
}

}  // namespace trainsim::calibrate::cli
