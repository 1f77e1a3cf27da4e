#include "sim/report/perfetto_trace.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "sim/memory/activation_timeline.h"
#include "sim/memory/static_memory.h"
#include "sim/report/link_rate_tracks.h"

namespace trainsim::report {

std::string gpu_process_name(const parallel::Coordinates& c) {
    return "GPU stage " + std::to_string(c.pp) + " tp " + std::to_string(c.tp) + " dp " +
           std::to_string(c.dp);
}

std::vector<AllocatedBytesSample> allocated_bytes_in_window(const config::Scenario& scenario,
                                                            const program::IterationProgram& prog,
                                                            std::size_t gpu,
                                                            const memory::ActivationTimeline& timeline,
                                                            const TraceOptions& options) {
    const std::int64_t resident = memory::static_bytes(scenario, prog.gpus[gpu].coordinates.pp).value;
    std::int64_t held = 0;
    std::size_t i = 0;
    const auto& samples = timeline.samples;
    for (; i < samples.size() && samples[i].time < options.window_start; ++i) {
        held = samples[i].held.value;
    }
    std::vector<AllocatedBytesSample> out{{options.window_start, resident + held}};
    for (; i < samples.size() && samples[i].time <= options.window_end; ++i) {
        out.push_back({samples[i].time, resident + samples[i].held.value});
    }
    return out;
}

void write_perfetto_trace(std::ostream& out, const config::Scenario& scenario,
                          const program::IterationProgram& prog, const engine::RunResult& run,
                          const TraceOptions& options) {
    const std::span<const engine::TaskId> critical = options.critical;
    auto kept = [&](std::size_t gpu) { return options.keeps(gpu); };
    auto in_window = [&](const engine::TaskTiming& t) { return options.overlaps(t); };
    std::vector<bool> on_path(critical.empty() ? 0 : prog.program.size(), false);
    for (const engine::TaskId t : critical) {
        on_path[t.index()] = true;
    }
    // Streamed event by event: a 2240-GPU unfolded trace does not fit comfortably in one json object.
    out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
    bool first = true;
    auto emit = [&](const nlohmann::json& e) {
        out << (first ? "" : ",\n") << e.dump();
        first = false;
    };
    for (std::size_t g = 0; g < prog.gpus.size(); ++g) {
        if (!kept(g)) {
            continue;
        }
        emit({{"ph", "M"},
              {"name", "process_name"},
              {"pid", g},
              {"args", {{"name", gpu_process_name(prog.gpus[g].coordinates)}}}});
        emit({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", g}, {"args", {{"sort_index", g}}}});
    }
    const auto& streams = prog.program.streams();
    for (std::size_t s = 0; s < streams.size(); ++s) {
        if (!kept(streams[s].gpu.index())) {
            continue;
        }
        emit({{"ph", "M"},
              {"name", "thread_name"},
              {"pid", streams[s].gpu.value()},
              {"tid", s},
              {"args", {{"name", streams[s].name}}}});
    }
    for (std::size_t t = 0; t < prog.program.size(); ++t) {
        if (!in_window(run.timings[t]) || !kept(prog.info.gpu(t).index())) {
            continue;
        }
        const program::TaskInfo& info = prog.info[t];
        const auto id = engine::TaskId::from_index(t);
        // One slice per op: a compute segment is expanded back into its kernels.
        for (const program::OpSpan& span : program::op_spans(prog, id, run.timings[t])) {
            nlohmann::json args = {{"phase", program::to_string(info.phase)},
                                   {"category", program::to_string(info.category)}};
            if (info.microbatch >= 0) {
                args["microbatch"] = info.microbatch;
                args["chunk"] = info.chunk;
            }
            if (info.layer >= 0) {
                args["layer"] = info.layer;
            }
            if (!on_path.empty() && on_path[t]) {
                args["critical"] = true;
            }
            if (span.op != nullptr && span.op->flops().value > 0) {
                args["flops"] = span.op->flops().value;
            }
            const std::string name = span.op != nullptr ? span.op->name : prog.describe(id);
            emit({{"ph", "X"},
                  {"name", name},
                  {"cat", program::to_string(info.category)},
                  {"pid", info.gpu.value()},
                  {"tid", prog.program.stream(id).value()},
                  {"ts", static_cast<double>(span.start.ns()) / 1e3},  // microseconds
                  {"dur", static_cast<double>((span.end - span.start).ns()) / 1e3},
                  {"args", args}});
        }
    }
    if (options.critical_track) {
        // One track that follows the path from GPU to GPU: each critical task as one slice.
        const std::size_t pid = prog.gpus.size();
        emit({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", "critical path"}}}});
        emit({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"args", {{"sort_index", -1}}}});
        for (const engine::TaskId id : critical) {
            const auto t = id.index();
            const program::TaskInfo& info = prog.info[t];
            const engine::TaskTiming& timing = run.timings[t];
            if (!in_window(timing)) {
                continue;
            }
            emit({{"ph", "X"},
                  {"name", prog.describe(id)},
                  {"cat", program::to_string(info.category)},
                  {"pid", pid},
                  {"tid", 0},
                  {"ts", static_cast<double>(timing.start.ns()) / 1e3},
                  {"dur", static_cast<double>((timing.end - timing.start).ns()) / 1e3},
                  {"args",
                   {{"phase", program::to_string(info.phase)},
                    {"stage", prog.gpus[info.gpu.index()].coordinates.pp},
                    {"gpu", info.gpu.value()},
                    {"stream", prog.program.streams()[prog.program.stream(id).index()].name}}}});
        }
    }
    const std::vector<memory::ActivationTimeline> memory = memory::activation_timelines(prog, run);
    for (std::size_t g = 0; g < prog.gpus.size(); ++g) {
        if (!kept(g)) {
            continue;
        }
        for (const AllocatedBytesSample& sample :
             allocated_bytes_in_window(scenario, prog, g, memory[g], options)) {
            emit({{"ph", "C"},
                  {"name", "allocated bytes"},
                  {"pid", g},
                  {"ts", static_cast<double>(sample.time.ns()) / 1e3},
                  {"args", {{"bytes", sample.bytes}}}});
        }
    }
    // The network's links, as one more process after the critical path's (flow model only).
    const std::vector<LinkRateTrack> links = link_rate_tracks(prog, run, options);
    if (!links.empty()) {
        const std::size_t pid = prog.gpus.size() + 1;
        emit({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", "network"}}}});
        emit({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"args", {{"sort_index", pid}}}});
        // Millions of samples on a big run: written as text, without a json object each (the same events).
        const std::string pid_text = std::to_string(pid);
        char number[32];
        for (const LinkRateTrack& track : links) {
            const std::string head = "{\"ph\":\"C\",\"name\":" + nlohmann::json(track.name).dump() +
                                     ",\"pid\":" + pid_text + ",\"ts\":";
            for (const LinkRateSample& sample : track.samples) {
                out << (first ? "" : ",\n") << head;
                first = false;
                // Microseconds, in the shortest form that reads back to the same double.
                const double ts = static_cast<double>(sample.time.ns()) / 1e3;
                out.write(number, std::to_chars(number, number + sizeof number, ts).ptr - number);
                out << ",\"args\":{\"bytes/s\":" << sample.bytes_per_second << "}}";
            }
        }
    }
    out << "\n]}\n";
}

}  // namespace trainsim::report
