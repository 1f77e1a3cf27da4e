#include <algorithm>
#include <vector>

#include "sim/report/iteration_report.h"

namespace trainsim::report {

using program::TaskCategory;

namespace {

void charge_busy(Breakdown& b, TaskCategory c, Seconds d) {
    switch (c) {
    case TaskCategory::Recompute:
        b.recompute += d;
        break;
    case TaskCategory::Optimizer:
        b.optimizer += d;
        break;
    default:
        b.compute += d;
        break;
    }
}

void charge_exposed(Breakdown& b, TaskCategory c, Seconds d) {
    switch (c) {
    case TaskCategory::Recompute:  // waiting for overlapped recomputation that missed its window
        b.recompute += d;
        break;
    case TaskCategory::TensorComm:
        b.exposed_tp_comm += d;
        break;
    case TaskCategory::PipelineComm:
        b.exposed_pp_comm += d;
        break;
    default:
        b.exposed_dp_comm += d;
        break;
    }
}

}  // namespace

std::vector<Breakdown> breakdowns(const program::IterationProgram& prog, const engine::RunResult& run) {
    const engine::Program& program = prog.program;
    const std::size_t n = program.size();
    const std::size_t gpus = prog.gpus.size();
    const auto& streams = program.streams();
    // Per stream: its GPU's compute or background recompute stream, or neither.
    std::vector<char> compute_stream(streams.size(), 0), recompute_stream(streams.size(), 0);
    for (const program::SimulatedGpu& g : prog.gpus) {
        compute_stream[static_cast<std::size_t>(g.compute_stream)] = 1;
        if (g.recompute_stream >= 0) {
            recompute_stream[static_cast<std::size_t>(g.recompute_stream)] = 1;
        }
    }
    auto stream_of = [&](std::size_t t) {
        return static_cast<std::size_t>(program.stream(static_cast<engine::TaskId>(t)));
    };
    auto gpu_of = [&](std::size_t t) { return static_cast<std::size_t>(streams[stream_of(t)].gpu); };
    auto is_compute = [&](std::size_t t) { return compute_stream[stream_of(t)] != 0; };
    // The task before each task on its stream: a collective often waits behind an earlier one on the
    // same communicator (the gradient-norm all-reduce behind the data-parallel all-reduce).
    std::vector<engine::TaskId> previous_on_stream(n, -1);
    std::vector<engine::TaskId> last_on_stream(streams.size(), -1);
    for (std::size_t t = 0; t < n; ++t) {
        auto& last = last_on_stream[stream_of(t)];
        previous_on_stream[t] = last;
        last = static_cast<engine::TaskId>(t);
    }
    std::vector<Breakdown> out(gpus);
    std::vector<SimTime> background(gpus, 0);  // overlapped recomputation run on each GPU
    for (std::size_t t = 0; t < n; ++t) {
        if (recompute_stream[stream_of(t)]) {
            background[gpu_of(t)] += program.duration(static_cast<engine::TaskId>(t));
        }
    }
    // Charges an idle gap [from, to) of a compute stream: time while one of `waited` (communication tasks
    // it waited for, and those queued before them on their streams) was transferring is exposed
    // communication of that task's kind; time while none was, is waiting for a peer: bubble.
    auto charge_gap = [&](Breakdown& b, SimTime from, SimTime to, std::vector<engine::TaskId>& waited) {
        if (to <= from) {
            return;
        }
        for (std::size_t i = 0; i < waited.size(); ++i) {
            const engine::TaskId before = previous_on_stream[static_cast<std::size_t>(waited[i])];
            if (before >= 0 && run.timings[static_cast<std::size_t>(before)].end > from) {
                waited.push_back(before);
            }
        }
        std::sort(waited.begin(), waited.end(), [&](engine::TaskId x, engine::TaskId y) {
            return run.timings[static_cast<std::size_t>(x)].start <
                   run.timings[static_cast<std::size_t>(y)].start;
        });
        SimTime covered_until = from;
        SimTime exposed = 0;
        for (const engine::TaskId w : waited) {
            const engine::TaskTiming& timing = run.timings[static_cast<std::size_t>(w)];
            const SimTime start = std::clamp(std::max(timing.start, covered_until), from, to);
            const SimTime end = std::clamp(timing.end, from, to);
            if (end > start) {
                charge_exposed(b, prog.info.category(static_cast<std::size_t>(w)), to_seconds(end - start));
                exposed += end - start;
                covered_until = end;
            }
        }
        b.bubble += to_seconds((to - from) - exposed);
    };
    std::vector<SimTime> previous_end(gpus, 0);
    std::vector<SimTime> inline_recompute(gpus, 0);  // recomputation run on the compute stream itself
    std::vector<engine::TaskId> waited;
    for (std::size_t t = 0; t < n; ++t) {
        if (!is_compute(t)) {
            continue;
        }
        // Compute tasks were added in program order, which is their execution order.
        const auto g = gpu_of(t);
        const engine::TaskTiming& timing = run.timings[t];
        waited.clear();
        for (const engine::TaskId d : prog.program.dependencies(static_cast<engine::TaskId>(t))) {
            if (!is_compute(static_cast<std::size_t>(d))) {
                waited.push_back(d);
            }
        }
        charge_gap(out[g], previous_end[g], timing.start, waited);
        const TaskCategory category = prog.info.category(t);
        charge_busy(out[g], category, to_seconds(timing.end - timing.start));
        if (category == TaskCategory::Recompute) {
            inline_recompute[g] += timing.end - timing.start;
        }
        previous_end[g] = timing.end;
    }
    // After its last kernel a GPU waits for its trailing communication, then for the other GPUs.
    std::vector<std::vector<engine::TaskId>> trailing(gpus);
    for (std::size_t t = 0; t < n; ++t) {
        const auto g = gpu_of(t);
        if (!is_compute(t) && run.timings[t].end > previous_end[g]) {
            trailing[g].push_back(static_cast<engine::TaskId>(t));
        }
    }
    for (std::size_t g = 0; g < gpus; ++g) {
        charge_gap(out[g], previous_end[g], run.makespan, trailing[g]);
        // Overlapped recomputation the compute stream never waited for was hidden.
        const Seconds waited = out[g].recompute - to_seconds(inline_recompute[g]);
        // Clamped: the two sums are of doubles, and nothing can be hidden below zero.
        out[g].hidden_recompute = std::max(Seconds{0.0}, to_seconds(background[g]) - waited);
    }
    return out;
}

}  // namespace trainsim::report
