// `trainsim whatif SCENARIO [--set k=v]... [--format text|json|csv] [--plot FILE.svg] [--jobs N]`: which
// profile parameter or layout knob moves the iteration time most (issue 20).
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "sim/cli/command_line.h"
#include "sim/cli/commands.h"
#include "sim/core/input_error.h"
#include "sim/report/atomic_file.h"
#include "sim/report/critical_path.h"
#include "sim/sweep/csv.h"
#include "sim/sweep/worker_pool.h"
#include "sim/whatif/sensitivity.h"
#include "sim/whatif/sensitivity_chart.h"
#include "sim/whatif/whatif_json.h"

namespace trainsim::cli {

namespace po = boost::program_options;

namespace {

std::string fmt(const char* format, double v) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, v);
    return buffer;
}

std::string memory_verdict(const whatif::Sensitivity& s) {
    return s.fits_in_memory ? "fits" : "OOM by " + fmt("%.2f GiB", to_gib(s.overflow));
}

void write_whatif_text(std::ostream& out, const whatif::WhatIf& w) {
    const report::IterationReport& b = w.baseline;
    out << "trainsim whatif: " << b.name << "  baseline " << fmt("%.4f s", b.iteration_time.value) << ", "
        << b.num_gpus << " GPUs, peak " << fmt("%.2f GiB", to_gib(b.peak_memory_bytes))
        << (b.fits_in_memory ? " (fits)" : " (does not fit)") << "\n";
    out << "  critical path's biggest share: " << w.critical_path.biggest_share() << " ("
        << fmt(
               "%.1f %%",
               100.0 *
                   [&] {
                       const report::CriticalPathShares& s = w.critical_path.shares;
                       const double most =
                           std::max({s.compute.value, s.recompute.value, s.optimizer.value, s.host.value,
                                     s.tp_comm.value, s.pp_comm.value, s.dp_comm.value, s.cp_comm.value,
                                     s.ep_comm.value, s.wait.value});
                       return w.critical_path.length.value > 0 ? most / w.critical_path.length.value : 0.0;
                   }())
        << " of it; `trainsim run --critical-path` shows the rest)\n\n";
    out << "  ranked by GPU-seconds per iteration saved (= iteration time where the GPU count stays)\n";
    out << "  rank  variation                         iteration time         GPUs (GPU·s)      peak memory\n";
    int rank = 0;
    for (const whatif::Sensitivity& s : w.rows) {
        std::string label = s.label;
        // Pad by display width: the arrow is one column but three bytes.
        std::size_t columns = 0;
        for (const unsigned char c : label) {
            columns += (c & 0xC0) != 0x80 ? 1 : 0;
        }
        label += std::string(columns < 33 ? 33 - columns : 1, ' ');
        ++rank;
        out << std::string(rank < 10 ? 5 : 4, ' ') << rank << "  " << label;
        if (!s.error.empty()) {
            out << " not simulated: " << s.error << "\n";
            continue;
        }
        out << fmt(" %+7.2f %%", 100.0 * s.change) << fmt(" (%9.4f s)", s.iteration_time.value)
            << fmt(" %6.0f", static_cast<double>(s.num_gpus))
            << (s.num_gpus != w.baseline.num_gpus ? fmt(" (%+6.1f %%)", 100.0 * s.gpu_time_change)
                                                  : std::string(11, ' '))
            << fmt("   %+6.2f GiB", to_gib(s.peak_change)) << " on stage " << s.peak_stage << ", "
            << memory_verdict(s) << "\n";
    }
}

void write_whatif_csv(std::ostream& out, const whatif::WhatIf& w) {
    out << "rank,knob,variation,kind,iteration_time_s,change,num_gpus,gpu_time_change,peak_memory_bytes,"
           "peak_memory_change_bytes,peak_stage,fits_in_memory,error\n";
    int rank = 0;
    for (const whatif::Sensitivity& s : w.rows) {
        out << ++rank << "," << s.knob << "," << sweep::csv_cell(s.label) << ","
            << (s.profile ? "profile" : "layout") << ",";
        if (s.error.empty()) {
            out << fmt("%.9g", s.iteration_time.value) << "," << fmt("%.6g", s.change) << "," << s.num_gpus
                << "," << fmt("%.6g", s.gpu_time_change) << "," << s.peak_memory.value << ","
                << s.peak_change.value << "," << s.peak_stage << "," << (s.fits_in_memory ? "true" : "false")
                << ",\n";
        } else {
            out << ",,,,,,,," << sweep::csv_cell(s.error) << "\n";
        }
    }
}

bool ends_with(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int whatif_command(const std::vector<std::string>& args) {
    CommonOptions common;
    std::string format = "text";
    std::string plot;
    int jobs = 0;
    double percent = 10.0;
    bool profile_only = false;
    po::options_description options("trainsim whatif SCENARIO [options]");
    options.add_options()("help,h", "show this help")(
        "set", po::value<std::vector<std::string>>(&common.overrides)->composing(),
        "override a scenario key: --set parallelism.data_parallel_size=16")(
        "format", po::value<std::string>(&format), "text (default), json or csv")(
        "plot", po::value<std::string>(&plot), "write the ranked changes as a bar chart to FILE.svg")(
        "jobs,j", po::value<int>(&jobs), "worker threads (default 0: one per hardware thread)")(
        "percent", po::value<double>(&percent),
        "how far each profile parameter is scaled (default 10: +10 %)")(
        "profile-only", po::bool_switch(&profile_only), "nudge only the profile parameters, not the layout");
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
        throw InputError("whatif: missing SCENARIO (a scenario JSON file)");
    }
    common.format = parse_format(format);
    if (jobs < 0) {
        throw InputError("--jobs=" + std::to_string(jobs) + " must be ≥ 0 (0: one per hardware thread)");
    }
    if (!(percent > -100.0 && percent != 0.0 && percent <= 1000.0)) {
        throw InputError("--percent=" + fmt("%g", percent) + " must be in (−100, 1000] and not 0");
    }
    if (!plot.empty() && !ends_with(plot, ".svg")) {
        throw InputError("--plot=" + plot + " must name an .svg file (the chart is written as SVG only)");
    }
    whatif::WhatIfOptions run;
    run.profile_factor = 1.0 + percent / 100.0;
    run.layout = !profile_only;
    run.jobs = jobs == 0 ? sweep::default_jobs() : static_cast<unsigned>(jobs);

    const config::Scenario scenario = load_scenario(common);
    const whatif::WhatIf result = whatif::run_whatif(scenario, load_profile(scenario), run);
    if (!plot.empty()) {
        report::write_file_atomically(plot, "--plot",
                                      [&](std::ostream& out) { whatif::write_svg_chart(out, result); });
    }
    switch (common.format) {
    case Format::Json:
        std::cout << whatif::to_json(result).dump(2) << "\n";
        break;
    case Format::Csv:
        write_whatif_csv(std::cout, result);
        break;
    case Format::Text:
        write_whatif_text(std::cout, result);
        break;
    }
    return 0;
}

}  // namespace trainsim::cli
