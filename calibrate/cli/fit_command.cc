#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>

#include "calibrate/cli/cli_support.h"
#include "calibrate/cli/commands.h"
#include "calibrate/fit/base_merge.h"
#include "calibrate/fit/fit_spec.h"
#include "calibrate/fit/profile_fitter.h"
#include "calibrate/fit/source_renaming.h"
#include "calibrate/measure/source_id.h"
#include "calibrate/measure/strict_json.h"
#include "sim/core/input_error.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::calibrate::cli {

namespace po = boost::program_options;

namespace {
// The rms residual a fitted curve may have before --strict refuses it: a curve that misses its own data
// by more misprices the ops it covers by as much, which is the size of the effects users compare.
constexpr double kDefaultTolerancePercent = 10.0;
}  // namespace

int fit_command(const std::vector<std::string>& args) {
    std::string spec_path;
    std::string base;
    std::vector<std::string> inputs;
    std::string output;
    std::string report_path;
    std::string op;
    int ranks = 0;
    int nodes = 0;
    double peak_tflops = 0.0;
    double nic_gbits = 0.0;
    bool strict = false;
    double tolerance_percent = kDefaultTolerancePercent;
    po::options_description options(
        "trainsim-calibrate fit (--base PROFILE | --spec SPEC) [INPUT...] --output PROFILE.json [options]");
    options.add_options()("help,h", "show this help")(
        "base", po::value(&base),
        "start from this profile (a shipped name or a path); replace what was measured")(
        "spec", po::value(&spec_path), "a fit spec (trainsim-fit-spec/1): its inputs and the profile to fit")(
        "output,o", po::value(&output), "the profile to write; its name is the file name (required)")(
        "report", po::value(&report_path), "also write every target's residuals as JSON")(
        "peak-tflops", po::value(&peak_tflops),
        "the device's dense 16-bit peak, when no device fact gives it")(
        "nic-gbits", po::value(&nic_gbits),
        "the NICs' line rate in Gb/s (400 for NDR); a fitted NIC rate above it is flagged")(
        "strict", po::bool_switch(&strict),
        "fail (exit 2, nothing written) when a fitted target misses its data by more than --tolerance rms or "
        "is flagged")("tolerance", po::value(&tolerance_percent),
                      "the rms of the relative residuals a fit may have, in percent (default 10)")(
        "op", po::value(&op), "nccl-tests logs among the inputs: the collective, when the log does not say")(
        "ranks", po::value(&ranks), "nccl-tests logs: the group size, when the log does not say")(
        "nodes", po::value(&nodes), "nccl-tests logs: the nodes, when the log does not say");
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
    if (base.empty() == spec_path.empty()) {
        throw InputError(
            "give exactly one of --base PROFILE (values not measured come from it) and --spec SPEC");
    }
    if (output.empty()) {
        throw InputError("--output is required (the profile to write, NAME.json)");
    }
    if (!(tolerance_percent > 0.0)) {
        throw InputError("--tolerance must be greater than 0 (a percentage)");
    }
    const double tolerance = tolerance_percent / 100.0;
    FitOptions fit_options;
    if (vm.count("peak-tflops")) {
        if (!(peak_tflops > 0.0)) {
            throw InputError("--peak-tflops must be greater than 0");
        }
        fit_options.peak_tflops = peak_tflops;
    }
    if (vm.count("nic-gbits")) {
        if (!(nic_gbits > 0.0)) {
            throw InputError("--nic-gbits must be greater than 0 (the line rate in Gb/s)");
        }
        fit_options.nic_line_rate_GBps = nic_gbits / 8.0;  // 8 bits a byte
    }
    const NcclLogOptions log_options = nccl_options(op, ranks, nodes);
    std::vector<InputSpec> specs;
    for (const std::string& path : inputs) {
        InputSpec spec{path, {}};
        // A profiler trace is streamed by its importer, never read whole here.
        if (!looks_like_kineto_trace(path) &&
            detect_input_format(read_text_file(path), path) == InputFormat::NcclTestsLog) {
            spec.nccl = log_options;
        }
        specs.push_back(spec);
    }
    const std::string name = std::filesystem::path(output).stem().string();

    OrderedJson doc;
    std::string label;
    std::vector<std::string> fitted_paths;
    if (!spec_path.empty()) {
        FitSpec spec = read_fit_spec(spec_path);
        specs.insert(specs.begin(), spec.inputs.begin(), spec.inputs.end());
        doc = std::move(spec.profile);
        label = spec_path;
    } else {
        label = profile_path(base);
        try {
            (void)cost::load_hardware_profile(base,
                                              profile_directory());  // a broken base fails here, by name
        } catch (const InputError& e) {
            throw InputError("--base=" + base + ": " + e.what());
        }
        doc = StrictJson(label).parse(read_text_file(label));
    }
    if (specs.empty()) {
        throw InputError(
            "needs measurements: INPUT files (a run's JSON, nccl-tests logs, measurement files)");
    }
    MeasurementSet measurements = load_measurements(specs);
    for (const std::string& w : measurements.warnings) {
        std::cerr << "trainsim-calibrate fit: warning: " << w << "\n";
    }
    if (!base.empty() && doc.contains("sources")) {
        for (const std::string& r : rename_sources_taken_by(measurements, doc.at("sources"))) {
            std::cerr
                << "trainsim-calibrate fit: the base cites another file by an input's source id; renamed "
                << r << "\n";
        }
    }
    if (!base.empty()) {
        fitted_paths = add_base_directives(doc, measurements, fit_options);
        if (fitted_paths.empty()) {
            throw InputError("the inputs measure nothing this profile holds");
        }
        for (const std::string& path : kind_factors_kept_over_a_refit_curve(doc, fitted_paths)) {
            std::cerr
                << "trainsim-calibrate fit: warning: " << path << " is kept from the base, where it was "
                << "fitted against the memory_bound.efficiency_vs_bytes this fit replaces: its kernel's "
                << "speed moves with the new curve (give the kernel's timings to refit it)\n";
        }
    }
    const StrictJson json(label);
    FitResult result = fit_profile(std::move(doc), measurements, json, fit_options, name);
    if (!base.empty()) {
        describe_merge(result.profile, std::filesystem::path(label).stem().string(), fitted_paths,
                       measurements);
    }
    std::vector<std::string> lines;
    const TargetReport* failed = nullptr;
    for (const TargetReport& t : result.report.targets) {
        const std::string summary = t.residual_summary();
        lines.push_back("  " + t.path + (summary.empty() ? "" : ": " + summary) + " -- " +
                        t.verdict(tolerance));
        if (failed == nullptr && !t.within(tolerance)) {
            failed = &t;
        }
    }
    if (strict && failed != nullptr) {
        for (const std::string& line : lines) {
            std::cout << line << "\n";
        }
        throw InputError("--strict: " + failed->path + " " + failed->verdict(tolerance) +
                         "; nothing written (without --strict the profile is written with this verdict)");
    }
    write_profile_checked(result.profile, output);
    if (!report_path.empty()) {
        write_text_file(report_path, "--report", to_profile_style_json(result.report.to_json()));
    }
    std::cout << "trainsim-calibrate fit: " << output << "\n";
    for (const std::string& line : lines) {
        std::cout << line << "\n";
    }
    return 0;
}

}  // namespace trainsim::calibrate::cli
