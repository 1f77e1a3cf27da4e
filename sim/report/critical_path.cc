#include "sim/report/critical_path.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

namespace trainsim::report {

namespace {

Seconds& share_of(CriticalPathShares& s, program::TaskCategory c) {
    switch (c) {
    case program::TaskCategory::Compute:
        return s.compute;
    case program::TaskCategory::Recompute:
        return s.recompute;
    case program::TaskCategory::Optimizer:
        return s.optimizer;
    case program::TaskCategory::TensorComm:
        return s.tp_comm;
    case program::TaskCategory::PipelineComm:
        return s.pp_comm;
    case program::TaskCategory::DataComm:
        return s.dp_comm;
    case program::TaskCategory::Host:
        return s.host;
    case program::TaskCategory::ContextComm:
        return s.cp_comm;
    case program::TaskCategory::ExpertComm:
        return s.ep_comm;
    }
    return s.compute;
}

std::vector<std::pair<std::string, Seconds>> named_shares(const CriticalPathShares& s) {
    return {{"compute", s.compute}, {"recompute", s.recompute}, {"optimizer", s.optimizer},
            {"host", s.host},       {"tp_comm", s.tp_comm},     {"pp_comm", s.pp_comm},
            {"dp_comm", s.dp_comm}, {"cp_comm", s.cp_comm},     {"ep_comm", s.ep_comm},
            {"wait", s.wait}};
}

std::string format_value(const char* format, double v) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, v);
    return buffer;
}

}  // namespace

std::string CriticalPath::biggest_share() const {
    std::string best;
    Seconds most{-1.0};
    for (const auto& [name, time] : named_shares(shares)) {
        if (time > most) {
            best = name;
            most = time;
        }
    }
    return best;
}

CriticalPath make_critical_path(const program::IterationProgram& prog, const engine::RunResult& run) {
    CriticalPath path;
    const std::vector<engine::CriticalStep> steps = engine::critical_path(prog.program, run);
    std::map<engine::GpuId, Seconds> gpu_time;
    const auto& streams = prog.program.streams();
    for (const engine::CriticalStep& step : steps) {
        const auto t = step.task.index();
        const engine::TaskTiming& timing = run.timings[t];
        const program::TaskCategory category = prog.info.category(t);
        const engine::GpuId gpu = prog.info.gpu(t);
        const Seconds busy = to_seconds(timing.end - timing.start);
        const Seconds wait = to_seconds(step.wait_before);
        share_of(path.shares, category) += busy;
        path.shares.wait += wait;
        gpu_time[gpu] += busy + wait;
        path.task_ids.push_back(step.task);

        const engine::StreamId stream = prog.program.stream(step.task);
        const std::string stream_name = streams[stream.index()].name;
        const char* category_name = program::to_string(category);
        if (!path.segments.empty() && step.wait_before == SimTime{} && path.segments.back().gpu == gpu &&
            path.segments.back().stream == stream_name && path.segments.back().category == category_name) {
            CriticalSegment& s = path.segments.back();
            s.last_task = prog.describe(step.task);
            ++s.tasks;
            s.end = to_seconds(timing.end);
        } else {
            const std::string name = prog.describe(step.task);
            path.segments.push_back({gpu, static_cast<std::int32_t>(prog.gpus[gpu.index()].coordinates.pp),
                                     stream_name, category_name, name, name, 1, to_seconds(timing.start),
                                     to_seconds(timing.end), wait});
        }
    }
    path.tasks = static_cast<std::int64_t>(steps.size());
    path.length = to_seconds(run.makespan);
    for (const auto& [gpu, time] : gpu_time) {
        const parallel::Coordinates& c = prog.gpus[gpu.index()].coordinates;
        path.gpus.push_back({gpu, static_cast<std::int32_t>(c.pp), static_cast<std::int32_t>(c.tp),
                             static_cast<std::int32_t>(c.dp), time});
    }
    std::stable_sort(path.gpus.begin(), path.gpus.end(),
                     [](const CriticalGpu& a, const CriticalGpu& b) { return a.time > b.time; });
    return path;
}

nlohmann::ordered_json to_json(const CriticalPath& path) {
    nlohmann::ordered_json j;
    j["length_s"] = path.length.value;
    j["tasks"] = path.tasks;
    nlohmann::ordered_json shares;
    for (const auto& [name, time] : named_shares(path.shares)) {
        shares[name + "_s"] = time.value;
    }
    j["shares"] = shares;
    j["biggest_share"] = path.biggest_share();
    nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
    for (const CriticalGpu& g : path.gpus) {
        gpus.push_back({{"gpu", g.gpu.value()},
                        {"stage", g.stage},
                        {"tp", g.tp},
                        {"dp", g.dp},
                        {"time_s", g.time.value}});
    }
    j["gpus"] = gpus;
    nlohmann::ordered_json segments = nlohmann::ordered_json::array();
    for (const CriticalSegment& s : path.segments) {
        segments.push_back({{"gpu", s.gpu.value()},
                            {"stage", s.stage},
                            {"stream", s.stream},
                            {"category", s.category},
                            {"first_task", s.first_task},
                            {"last_task", s.last_task},
                            {"tasks", s.tasks},
                            {"wait_before_s", s.wait_before.value},
                            {"start_s", s.start.value},
                            {"end_s", s.end.value}});
    }
    j["segments"] = segments;
    return j;
}

void write_text(std::ostream& out, const CriticalPath& path, std::size_t max_segments) {
    const double total = path.length.value;
    out << "critical path: " << format_value("%.4f s", total) << " over " << path.tasks << " tasks, "
        << path.gpus.size() << " GPU(s); biggest share: " << path.biggest_share() << "\n";
    for (const auto& [name, time] : named_shares(path.shares)) {
        if ((name == "cp_comm" || name == "ep_comm") && time.value == 0.0) {
            continue;  // only runs with context or expert parallelism have them
        }
        out << "    " << name << std::string(12 - name.size(), ' ') << format_value("%12.3f ms", time.value * 1e3)
            << format_value("  %5.1f %%", total > 0 ? 100.0 * time.value / total : 0.0) << "\n";
    }
    out << "  GPUs on the path (time spent there):\n";
    for (const CriticalGpu& g : path.gpus) {
        out << "    stage " << g.stage << " tp " << g.tp << " dp " << g.dp
            << format_value("  %12.3f ms", g.time.value * 1e3) << "\n";
    }
    out << "  segments (" << path.segments.size() << "):\n";
    for (std::size_t i = 0; i < path.segments.size(); ++i) {
        if (i == max_segments) {
            out << "    ... " << path.segments.size() - max_segments << " more (--format json lists all)\n";
            break;
        }
        const CriticalSegment& s = path.segments[i];
        out << format_value("    %10.3f", s.start.value * 1e3) << format_value(" – %10.3f ms", s.end.value * 1e3) << "  stage "
            << s.stage << " " << s.stream << "  " << s.category << "  " << s.first_task;
        if (s.tasks > 1) {
            out << " .. " << s.last_task << " (" << s.tasks << " tasks)";
        }
        if (s.wait_before.value > 0) {
            out << format_value("  after waiting %.3f ms", s.wait_before.value * 1e3);
        }
        out << "\n";
    }
}

}  // namespace trainsim::report
