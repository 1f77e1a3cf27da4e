#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/program/op_span_visitor.h"
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
    case TaskCategory::Host:
        b.host += d;
        break;
    default:
        b.compute += d;
        break;
    }
}

// What a compute stream waited for during one stretch of idle time: a peer (bubble), or a task of
// another stream.
enum class Wait : std::uint8_t {
    Peer,
    TensorComm,
    PipelineComm,
    DataComm,
    ContextComm,
    ExpertComm,
    Recompute
};

Wait wait_of(TaskCategory c) {
    switch (c) {
    case TaskCategory::Recompute:  // overlapped recomputation that missed its window
        return Wait::Recompute;
    case TaskCategory::TensorComm:
        return Wait::TensorComm;
    case TaskCategory::PipelineComm:
        return Wait::PipelineComm;
    case TaskCategory::ContextComm:
        return Wait::ContextComm;
    case TaskCategory::ExpertComm:
        return Wait::ExpertComm;
    default:
        return Wait::DataComm;
    }
}

void charge_exposed(Breakdown& b, Wait w, Seconds d) {
    switch (w) {
    case Wait::Recompute:
        b.recompute += d;
        break;
    case Wait::TensorComm:
        b.exposed_tp_comm += d;
        break;
    case Wait::PipelineComm:
        b.exposed_pp_comm += d;
        break;
    case Wait::DataComm:
        b.exposed_dp_comm += d;
        break;
    case Wait::ContextComm:
        b.exposed_cp_comm += d;
        break;
    case Wait::ExpertComm:
        b.exposed_ep_comm += d;
        break;
    case Wait::Peer:  // no transfer: charge_gap counts the bubble as what the transfers leave of the gap
        break;
    }
}

struct IdleSpan {
    SimTime from{};
    SimTime to{};
    Wait waited_for = Wait::Peer;
};

// Where a GPU's schedule is: before its first backward (warm-up), after its last forward (cool-down).
struct PhaseBounds {
    SimTime first_backward_start = SimTime::max();
    SimTime last_forward_end{};
};

// Length of [a, b) ∩ [lo, hi).
SimTime overlap(SimTime a, SimTime b, SimTime lo, SimTime hi) {
    return std::max(SimTime{}, std::min(b, hi) - std::max(a, lo));
}

// Charges the part [a, b) of an idle span during which overlapped recomputation ran.
void charge_hidden(HiddenRecompute& h, const IdleSpan& span, SimTime a, SimTime b, const PhaseBounds& phase) {
    switch (span.waited_for) {
    case Wait::Recompute:  // the compute stream waited for this recomputation: exposed, not hidden
        return;
    case Wait::TensorComm:
    case Wait::ContextComm:
    case Wait::ExpertComm:
        h.tensor_parallel += to_seconds(b - a);
        return;
    case Wait::DataComm:
        h.data_parallel += to_seconds(b - a);
        return;
    case Wait::Peer:
    case Wait::PipelineComm: {
        constexpr SimTime never = SimTime::max();
        const SimTime warmup = overlap(a, b, SimTime::min(), phase.first_backward_start);
        const SimTime cooldown =
            overlap(a, b, std::max(phase.first_backward_start, phase.last_forward_end), never);
        h.pipeline_warmup += to_seconds(warmup);
        h.pipeline_cooldown += to_seconds(cooldown);
        h.pipeline_steady += to_seconds((b - a) - warmup - cooldown);
        return;
    }
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
        compute_stream[g.compute_stream.index()] = 1;
        if (g.recompute_stream != engine::kNoStream) {
            recompute_stream[g.recompute_stream.index()] = 1;
        }
    }
    auto stream_of = [&](std::size_t t) { return program.stream(engine::TaskId::from_index(t)).index(); };
    auto gpu_of = [&](std::size_t t) { return streams[stream_of(t)].gpu.index(); };
    auto is_compute = [&](std::size_t t) { return compute_stream[stream_of(t)] != 0; };
    // The task before each task on its stream: a collective often waits behind an earlier one on the
    // same communicator (the gradient-norm all-reduce behind the data-parallel all-reduce).
    std::vector<engine::TaskId> previous_on_stream(n, engine::kNoTask);
    std::vector<engine::TaskId> last_on_stream(streams.size(), engine::kNoTask);
    for (std::size_t t = 0; t < n; ++t) {
        auto& last = last_on_stream[stream_of(t)];
        previous_on_stream[t] = last;
        last = engine::TaskId::from_index(t);
    }
    std::vector<Breakdown> out(gpus);
    std::vector<SimTime> background(gpus, SimTime{});  // overlapped recomputation run on each GPU
    std::vector<engine::TaskId> background_tasks;
    for (std::size_t t = 0; t < n; ++t) {
        if (recompute_stream[stream_of(t)]) {
            background[gpu_of(t)] += program.duration(engine::TaskId::from_index(t));
            background_tasks.push_back(engine::TaskId::from_index(t));
        }
    }
    // Idle spans are kept only for GPUs that ran overlapped recomputation, to place it in them.
    std::vector<std::vector<IdleSpan>> idle(gpus);
    std::vector<PhaseBounds> phase(gpus);
    // Charges an idle gap [from, to) of a compute stream: time while one of `waited` (communication tasks
    // it waited for, and those queued before them on their streams) was transferring is exposed
    // communication of that task's kind; time while none was, is waiting for a peer: bubble.
    auto charge_gap = [&](std::size_t g, SimTime from, SimTime to, std::vector<engine::TaskId>& waited) {
        Breakdown& b = out[g];
        std::vector<IdleSpan>* spans = background[g] > SimTime{} ? &idle[g] : nullptr;
        auto record = [&](SimTime a, SimTime z, Wait w) {
            if (spans != nullptr && z > a) {
                spans->push_back({a, z, w});
            }
        };
        if (to <= from) {
            return;
        }
        for (std::size_t i = 0; i < waited.size(); ++i) {
            const engine::TaskId before = previous_on_stream[waited[i].index()];
            if (before != engine::kNoTask && run.timings[before.index()].end > from) {
                waited.push_back(before);
            }
        }
        std::sort(waited.begin(), waited.end(), [&](engine::TaskId x, engine::TaskId y) {
            return run.timings[x.index()].start < run.timings[y.index()].start;
        });
        SimTime covered_until = from;
        SimTime exposed{};
        for (const engine::TaskId w : waited) {
            const engine::TaskTiming& timing = run.timings[w.index()];
            const SimTime start = std::clamp(std::max(timing.start, covered_until), from, to);
            const SimTime end = std::clamp(timing.end, from, to);
            if (end > start) {
                const Wait kind = wait_of(prog.info.category(w.index()));
                charge_exposed(b, kind, to_seconds(end - start));
                record(covered_until, start, Wait::Peer);
                record(start, end, kind);
                exposed += end - start;
                covered_until = end;
            }
        }
        record(covered_until, to, Wait::Peer);
        b.bubble += to_seconds((to - from) - exposed);
    };
    std::vector<SimTime> previous_end(gpus, SimTime{});
    std::vector<SimTime> inline_recompute(gpus, SimTime{});  // recomputation run on the compute stream itself
    // What running collectives took from each GPU's kernels in the engine (hardware.compute_contention=
    // engine): a compute-stream task runs alone for its duration, so the rest of its span is theirs.
    struct Stretch {
        SimTime compute{}, recompute{}, optimizer{};
    };
    std::vector<Stretch> stretch(gpus);
    std::vector<engine::TaskId> waited;
    for (std::size_t t = 0; t < n; ++t) {
        if (!is_compute(t)) {
            continue;
        }
        // Compute tasks were added in program order, which is their execution order.
        const auto g = gpu_of(t);
        const engine::TaskTiming& timing = run.timings[t];
        waited.clear();
        for (const engine::TaskId d : prog.program.dependencies(engine::TaskId::from_index(t))) {
            if (!is_compute(d.index())) {
                waited.push_back(d);
            }
        }
        charge_gap(g, previous_end[g], timing.start, waited);
        const TaskCategory category = prog.info.category(t);
        charge_busy(out[g], category, to_seconds(timing.end - timing.start));
        if (const SimTime s = (timing.end - timing.start) - program.duration(engine::TaskId::from_index(t));
            s != SimTime{} && category != TaskCategory::Host) {
            (category == TaskCategory::Recompute   ? stretch[g].recompute
             : category == TaskCategory::Optimizer ? stretch[g].optimizer
                                                   : stretch[g].compute) += s;
        }
        if (category == TaskCategory::Optimizer) {
            // The optimizer's extra memory passes (training.optimizer_param_copy, zero_grad_buffer) get
            // lines of their own.
            program::for_each_op_span(prog, prog.info.shape(t), timing, [&](const program::OpSpan& span) {
                if (span.op == nullptr) {
                    return;
                }
                const bool copy = span.op->name == "optimizer.param_copy";
                if (copy || span.op->name == "optimizer.zero_grad_buffer") {
                    const Seconds d = to_seconds(span.end - span.start);
                    out[g].optimizer = out[g].optimizer - d;
                    (copy ? out[g].param_copy : out[g].grad_zeroing) += d;
                }
            });
        }
        if (category == TaskCategory::Compute) {
            if (prog.info.shape(t).phase == program::Phase::Backward) {
                phase[g].first_backward_start = std::min(phase[g].first_backward_start, timing.start);
            } else if (prog.info.shape(t).phase == program::Phase::Forward) {
                phase[g].last_forward_end = std::max(phase[g].last_forward_end, timing.end);
            }
        }
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
            trailing[g].push_back(engine::TaskId::from_index(t));
        }
    }
    for (std::size_t g = 0; g < gpus; ++g) {
        charge_gap(g, previous_end[g], run.makespan, trailing[g]);
        // Overlapped recomputation the compute stream never waited for was hidden.
        const Seconds waited = out[g].recompute - to_seconds(inline_recompute[g]);
        // Clamped: the two sums are of doubles, and nothing can be hidden below zero, nor below one
        // engine tick (a rounding residue otherwise shows as hidden recompute where there is none).
        const Seconds hidden = to_seconds(background[g]) - waited;
        out[g].hidden_recompute = hidden.value < 1e-9 ? Seconds{0.0} : hidden;
        // Collectives beside kernels lengthened them by a known time, charged to each kind it came from:
        // priced into the kernels, or measured in the engine.
        const program::SimulatedGpu& gpu = prog.gpus[g];
        const Seconds contention_compute = to_seconds(gpu.contention_compute + stretch[g].compute);
        const Seconds contention_recompute = to_seconds(gpu.contention_recompute + stretch[g].recompute);
        const Seconds contention_optimizer = to_seconds(gpu.contention_optimizer + stretch[g].optimizer);
        out[g].compute = out[g].compute - contention_compute;
        out[g].recompute = out[g].recompute - contention_recompute;
        out[g].optimizer = out[g].optimizer - contention_optimizer;
        out[g].overlap_contention = contention_compute + contention_recompute + contention_optimizer;
        // Kernel jitter added a known net time to the kernels: taken out of each kind in proportion.
        if (const SimTime jitter = prog.gpus[g].kernel_jitter; jitter != SimTime{}) {
            Breakdown& b = out[g];
            const Seconds kernels = b.compute + b.recompute + b.optimizer + b.param_copy + b.grad_zeroing;
            if (kernels.value > 0.0) {
                const double share = to_seconds(jitter).value / kernels.value;
                b.kernel_jitter = kernels * share;
                b.compute = b.compute * (1.0 - share);
                b.recompute = b.recompute * (1.0 - share);
                b.optimizer = b.optimizer * (1.0 - share);
                b.param_copy = b.param_copy * (1.0 - share);
                b.grad_zeroing = b.grad_zeroing * (1.0 - share);
            }
        }
        // Kernels ran f times their price: 1 − 1/f of their time is the slowdown (negative for a GPU
        // faster than the median).
        const double f = prog.gpus[g].compute_slowdown;
        if (f != 1.0) {
            const double share = 1.0 - 1.0 / f;
            Breakdown& b = out[g];
            b.variability = (b.compute + b.recompute + b.optimizer + b.param_copy + b.grad_zeroing) * share;
            b.compute = b.compute * (1.0 - share);
            b.recompute = b.recompute * (1.0 - share);
            b.optimizer = b.optimizer * (1.0 - share);
            b.param_copy = b.param_copy * (1.0 - share);
            b.grad_zeroing = b.grad_zeroing * (1.0 - share);
        }
    }
    // A background task runs only while its GPU's compute stream is idle (the engine preempts it
    // otherwise), so the idle spans within its [start, end) are exactly where it ran.
    for (const engine::TaskId t : background_tasks) {
        const auto g = gpu_of(t.index());
        const engine::TaskTiming& timing = run.timings[t.index()];
        const std::vector<IdleSpan>& spans = idle[g];
        auto it = std::partition_point(spans.begin(), spans.end(),
                                       [&](const IdleSpan& s) { return s.to <= timing.start; });
        for (; it != spans.end() && it->from < timing.end; ++it) {
            const SimTime a = std::max(it->from, timing.start);
            const SimTime z = std::min(it->to, timing.end);
            if (z > a) {
                charge_hidden(out[g].hidden_in, *it, a, z, phase[g]);
            }
        }
    }
    return out;
}

}  // namespace trainsim::report
