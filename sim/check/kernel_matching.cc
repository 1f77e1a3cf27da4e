#include "sim/check/kernel_matching.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "calibrate/import/kineto_gemm_call.h"
#include "calibrate/import/kineto_launch_join.h"

namespace trainsim::check {

namespace {

// Which pass launched a call: PyTorch runs the backward's ops on the autograd engine's own thread, the
// forward's (and the optimizer's) on the training loop's, whose ProfilerStep annotations name it.
enum Pass : int { kUnknownPass = -1, kForwardPass = 0, kBackwardPass = 1 };

// (pass, kind, dims): kind -1 for a GEMM (m, n, k, batch), else a collective (bytes).
using Signature = std::tuple<int, int, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;

constexpr int kGemm = -1;

Signature gemm_signature(int pass, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) {
    return {pass, kGemm, m, n, k, batch};
}

Signature collective_signature(int pass, cost::CollectiveKind kind, std::int64_t bytes) {
    return {pass, static_cast<int>(kind), bytes, 0, 0, 0};
}

struct Measured {
    std::int64_t count = 0;
    SimTime total{};
    bool used = false;
    [[nodiscard]] SimTime mean() const { return count > 0 ? total / count : SimTime{}; }
};

struct TraceTotals {
    std::map<Signature, Measured> calls;
    std::int64_t steps = 0;
    SimTime step_time{};
    SimTime gpu_span{};
};

void collect(const kineto::Trace& trace, TraceTotals& totals) {
    const std::vector<std::int32_t> launched_by = kineto::launching_ops(trace);
    auto pass_of = [&](std::int32_t op) {
        if (trace.steps.empty() || op < 0) {
            return static_cast<int>(kUnknownPass);
        }
        return static_cast<int>(trace.cpu_ops[op].tid == trace.steps.front().tid ? kForwardPass
                                                                                 : kBackwardPass);
    };
    std::map<std::int32_t, SimTime> gemm_calls;  // launching op → summed GEMM kernel time
    SimTime first{};
    SimTime last{};
    for (std::size_t g = 0; g < trace.gpu.size(); ++g) {
        const kineto::GpuEvent& e = trace.gpu[g];
        // The measured trace's integer ns, on the engine's time line from here.
        const SimTime ts{e.ts_ns};
        const SimTime dur{e.dur_ns};
        first = g == 0 ? ts : std::min(first, ts);
        last = std::max(last, ts + dur);
        if (e.activity != kineto::GpuActivity::Kernel) {
            continue;
        }
        const std::string& name = trace.name(e.name);
        if (kineto::is_gemm_kernel(name) && launched_by[g] >= 0) {
            gemm_calls[launched_by[g]] += dur;
        } else if (name.rfind("nccl", 0) == 0) {
            const std::int32_t op = launched_by[g];
            const std::int32_t meta =
                e.collective >= 0 ? e.collective : (op >= 0 ? trace.cpu_ops[op].collective : -1);
            if (meta < 0) {
                continue;
            }
            const kineto::CollectiveArgs& c = trace.collectives[meta];
            const auto kind = cost::collective_kind_from_name(c.name);
            const int bytes = kineto::element_bytes(c.dtype);
            std::int64_t size = 0;
            if (kind && bytes > 0 &&
                !__builtin_mul_overflow(std::max(c.in_nelems, c.out_nelems), bytes, &size)) {
                Measured& m = totals.calls[collective_signature(pass_of(op), *kind, size)];
                ++m.count;
                m.total += dur;
            }
        }
    }
    for (const auto& [op, ns] : gemm_calls) {
        if (const auto call = kineto::gemm_call(trace, trace.cpu_ops[op])) {
            Measured& m = totals.calls[gemm_signature(pass_of(op), call->m, call->n, call->k, call->batch)];
            ++m.count;
            m.total += ns;
        }
    }
    for (const kineto::Step& step : trace.steps) {
        ++totals.steps;
        totals.step_time += SimTime{step.dur_ns};
    }
    totals.gpu_span = std::max(totals.gpu_span, last - first);
}

Seconds seconds_of(SimTime ns) {
    return Seconds{static_cast<double>(ns.ns()) * 1e-9};
}

}  // namespace

Comparison compare_by_kernels(const std::vector<OpSample>& simulated,
                              const std::vector<kineto::Trace>& traces, std::int64_t gpu) {
    TraceTotals totals;
    for (const kineto::Trace& t : traces) {
        collect(t, totals);
    }
    Comparison c;
    c.method = "kernel shapes (GEMM m, n, k, batch or its transpose; collective kind and bytes) and pass "
               "(forward: launched on the ProfilerStep thread; backward: on another)";
    std::map<std::pair<std::string, std::string>, std::size_t> row_of;
    std::map<std::string, std::size_t> phase_of;
    std::vector<OpSample> mine;
    for (const OpSample& s : simulated) {
        if (s.gpu == gpu) {
            mine.push_back(s);
        }
    }
    std::stable_sort(mine.begin(), mine.end(),
                     [](const OpSample& a, const OpSample& b) { return a.start < b.start; });
    for (const OpSample& s : mine) {
        Measured* m = nullptr;
        const int pass = s.phase == "backward" ? kBackwardPass : kForwardPass;
        std::vector<Signature> candidates;  // this pass first, then calls whose pass the trace cannot tell
        for (const int p : {pass, static_cast<int>(kUnknownPass)}) {
            if (s.gemm) {
                const cost::GemmShape& g = *s.gemm;
                candidates.push_back(gemm_signature(p, g.m, g.n, g.k, g.batch));
                candidates.push_back(gemm_signature(p, g.n, g.m, g.k, g.batch));
            } else if (s.collective) {
                candidates.push_back(collective_signature(p, *s.collective, s.collective_bytes.value));
            }
        }
        for (const Signature& sig : candidates) {
            if (const auto it = totals.calls.find(sig); it != totals.calls.end() && m == nullptr) {
                m = &it->second;
            }
        }
        if (m == nullptr) {
            ++c.unmatched_simulated;
            c.unmatched_simulated_time += seconds_of(s.duration);
            continue;
        }
        m->used = true;
        const std::string phase = phase_label(s);
        if (row_of.emplace(std::make_pair(s.name, phase), c.ops.size()).second) {
            c.ops.push_back({s.name, phase, 0, Seconds{0.0}, Seconds{0.0}});
        }
        if (phase_of.emplace(phase, c.phases.size()).second) {
            c.phases.push_back({"", phase, 0, Seconds{0.0}, Seconds{0.0}});
        }
        for (Row* row : {&c.ops[row_of.at({s.name, phase})], &c.phases[phase_of.at(phase)]}) {
            ++row->count;
            row->measured += seconds_of(m->mean());
            row->simulated += seconds_of(s.duration);
        }
    }
    for (const auto& [sig, m] : totals.calls) {
        if (!m.used) {
            c.unmatched_measured += m.count;
            c.unmatched_measured_time += seconds_of(m.total);
        }
    }
    const Seconds measured_iteration =
        totals.steps > 0 ? seconds_of(totals.step_time / totals.steps) : seconds_of(totals.gpu_span);
    c.iteration = {"", "iteration", 1, measured_iteration, span_of(mine)};
    c.notes.push_back(
        "each simulated op is compared with the mean of the measured calls of its shape; memory-bound "
        "kernels are not paired (the trace gives their names, not their sizes)");
    c.notes.push_back(totals.steps > 0 ? "measured iteration: the mean of " + std::to_string(totals.steps) +
                                             " ProfilerStep spans"
                                       : "measured iteration: first to last GPU activity (no ProfilerStep "
                                         "annotations; one iteration assumed)");
    return c;
}

}  // namespace trainsim::check
