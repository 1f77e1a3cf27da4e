#include <boost/program_options.hpp>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "sim/cli/command_line.h"
#include "sim/cli/commands.h"
#include "sim/core/input_error.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/html/html_report.h"
#ifdef TRAINSIM_WITH_PROTOBUF
#include "sim/pftrace/pftrace_writer.h"
#endif
#include "sim/report/atomic_file.h"
#include "sim/report/critical_path.h"
#include "sim/report/gzip_stream.h"
#include "sim/report/link_rate_tracks.h"
#include "sim/report/perfetto_trace.h"
#include "sim/report/report_json.h"
#include "sim/report/report_text.h"
#include "sim/report/trace_selection.h"
#include "sim/sweep/worker_pool.h"

namespace trainsim::cli {

namespace po = boost::program_options;

namespace {

program::Fold parse_fold(const std::string& text) {
    program::Fold fold{false, false};
    if (text == "none") {
        return fold;
    }
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = text.find(',', start);
        const std::string part =
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (part == "tp") {
            fold.tensor = true;
        } else if (part == "dp") {
            fold.data = true;
        } else {
            throw InputError("--fold=" + text + " must be 'none' or a comma list of tp, dp");
        }
        if (comma == std::string::npos) {
            break;
        }
        start = comma + 1;
    }
    return fold;
}

// Parsed here rather than by program_options, whose unsigned conversion turns "-1" into 2^64 - 1.
std::uint64_t parse_max_events(const std::string& text) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n == 0) {
        throw InputError("--max-events=" + text + " must be a whole number of events ≥ 1");
    }
    return n;
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
    CommonOptions common;
    std::string format = "text";
    std::string trace;
    bool critical_path = false;
    std::string html_report;
    std::string trace_ranks;
    std::string trace_window;
    std::string fold = "tp,dp";
    std::string max_events = std::to_string(engine::RunOptions{}.max_events);
    po::options_description options("trainsim run SCENARIO [options]");
    options.add_options()("help,h", "show this help")(
        "set", po::value<std::vector<std::string>>(&common.overrides)->composing(),
        "override a scenario key: --set parallelism.data_parallel_size=16")(
        "format", po::value<std::string>(&format), "text (default), json or csv")(
        "trace", po::value<std::string>(&trace),
        "write a Chrome/Perfetto trace of the iteration to FILE, Perfetto protobuf when it ends in .pftrace, "
        "gzip'd when FILE ends in .gz (.json.gz, .pftrace.gz) (critical "
        "tasks carry args.critical; with --critical-path also a 'critical path' track)")(
        "trace-ranks", po::value<std::string>(&trace_ranks),
        "keep only these global ranks in the trace: 0-7,64 (folded runs simulate tp 0, dp 0 of each stage)")(
        "trace-window", po::value<std::string>(&trace_window),
        "keep only the slices that overlap START:END seconds of the iteration (either may be left out)")(
        "report", po::value<std::string>(&html_report),
        "write FILE.html: summary, breakdown and memory charts, critical path and what-if table (runs "
        "`trainsim whatif` too)")(
        "critical-path", po::bool_switch(&critical_path),
        "print the iteration's critical path: its split into compute, communication, recompute and waiting")(
        "fold", po::value<std::string>(&fold),
        "which identical GPUs to simulate once: tp,dp (default), tp, dp or none")(
        "max-events", po::value<std::string>(&max_events),
        "stop with status 3, naming what each GPU waits for, after N events (default 2000000000)");
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
        throw InputError("run: missing SCENARIO (a scenario JSON file)");
    }
    common.format = parse_format(format);
    if (trace.empty() && (!trace_ranks.empty() || !trace_window.empty())) {
        throw InputError(std::string(trace_ranks.empty() ? "--trace-window" : "--trace-ranks") +
                         " needs --trace FILE");
    }
    std::optional<std::pair<SimTime, SimTime>> window;
    if (!trace_window.empty()) {
        window = report::parse_trace_window(trace_window);
    }
    if (critical_path && common.format == Format::Csv) {
        throw InputError("--critical-path has no csv form: use --format text or json");
    }
    experiment::SimulationOptions simulation;
    simulation.fold = parse_fold(fold);
    simulation.engine.max_events = parse_max_events(max_events);
    if (!trace.empty()) {
        // The trace's link counters need those links' loads over time: only a traced run records them.
        simulation.record_rates_of = [&trace_ranks](const program::IterationProgram& prog) {
            if (!prog.topology) {
                return std::vector<char>{};
            }
            return report::traced_links(
                *prog.topology, trace_ranks.empty()
                                    ? std::vector<std::pair<std::int64_t, std::int64_t>>{}
                                    : report::parse_trace_ranks(trace_ranks, prog.topology->num_gpus()));
        };
    }

    const config::Scenario scenario = load_scenario(common);
    const cost::CostModel cost(load_profile(scenario));
    const experiment::Simulation sim = experiment::simulate_scenario(scenario, cost, simulation);
    const report::IterationReport& rep = sim.report;
    std::optional<report::CriticalPath> path;
    if (critical_path || !trace.empty()) {
        path = report::make_critical_path(sim.program, sim.run);
    }
    if (!trace.empty()) {
        report::TraceOptions selection;
        selection.critical = path->task_ids;
        selection.critical_track = critical_path;
        if (!trace_ranks.empty()) {
            selection.keep_gpu = report::select_trace_ranks(trace_ranks, scenario, sim.program);
        }
        if (window) {
            std::tie(selection.window_start, selection.window_end) = *window;
        }
        const bool gzip = trace.ends_with(".gz");
        // FILE.pftrace.gz is Perfetto's protobuf, gzip'd (Perfetto's UI and trace processor read both).
        const bool pftrace =
            std::string_view(trace).substr(0, trace.size() - (gzip ? 3 : 0)).ends_with(".pftrace");
#ifndef TRAINSIM_WITH_PROTOBUF
        if (pftrace) {
            throw InputError("--trace FILE.pftrace needs trainsim built with protobuf (libprotobuf-dev, "
                             "protobuf-compiler); use .json or .json.gz");
        }
#endif
        report::write_file_atomically(trace, "--trace", [&](std::ostream& out) {
            if (pftrace) {
#ifdef TRAINSIM_WITH_PROTOBUF
                if (gzip) {
                    report::GzipOStream zipped(out);
                    pftrace::write_pftrace(zipped, scenario, sim.program, sim.run, selection);
                    zipped.finish();
                } else {
                    pftrace::write_pftrace(out, scenario, sim.program, sim.run, selection);
                }
#endif
            } else if (gzip) {
                report::GzipOStream zipped(out);
                report::write_perfetto_trace(zipped, scenario, sim.program, sim.run, selection);
                zipped.finish();
            } else {
                report::write_perfetto_trace(out, scenario, sim.program, sim.run, selection);
            }
        });
    }
    if (!html_report.empty()) {
        whatif::WhatIfOptions options;
        options.jobs = sweep::default_jobs();
        options.fold = simulation.fold;
        const whatif::WhatIf result = whatif::run_whatif(scenario, cost.profile(), options);
        report::write_file_atomically(html_report, "--report",
                                      [&](std::ostream& out) { html::write_html_report(out, result); });
    }
    switch (common.format) {
    case Format::Json: {
        nlohmann::ordered_json j = report::to_json(rep);
        if (critical_path) {
            j["critical_path"] = report::to_json(*path);
        }
        std::cout << j.dump(2) << "\n";
        break;
    }
    case Format::Csv:
        report::write_csv(std::cout, rep);
        break;
    case Format::Text:
        report::write_text(std::cout, rep);
        if (critical_path) {
            std::cout << "\n";
            report::write_text(std::cout, *path);
        }
        break;
    }
    return 0;
}

}  // namespace trainsim::cli
