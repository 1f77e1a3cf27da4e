#include "sim/memory/activation_timeline.h"

#include <algorithm>
#include <span>
#include <string>
#include <utility>

#include "sim/core/input_error.h"
#include "sim/program/op_span_visitor.h"

namespace trainsim::memory {
namespace {

struct Key {
    std::int32_t microbatch, chunk, layer;
    friend auto operator<=>(const Key&, const Key&) = default;
};

struct Change {
    SimTime time;
    std::int64_t bytes;  // + allocation, − free
    Key key;
};

// Activation bytes are accounted up to 2^62, which leaves room for the static bytes (below 2^62 by the
// parameter caps of scenario validation) that the report adds to the peak.
constexpr std::int64_t kMaxAccountedBytes = std::int64_t{1} << 62;

// a + b, or an InputError: the caps of scenario validation bound one micro-batch's activations, but a
// schedule that keeps many micro-batches in flight (GPipe keeps all of them) multiplies that, and a
// wrapped sum would report a small peak for a scenario that fits nowhere.
std::int64_t add_bytes(std::int64_t a, std::int64_t b, std::size_t gpu) {
    std::int64_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum) || sum > kMaxAccountedBytes) {
        throw InputError("activation memory of simulated GPU " + std::to_string(gpu) +
                         " passes 2^62 bytes: the scenario's batch and model sizes are too large to account");
    }
    return sum;
}

// Scratch space reused from GPU to GPU: one GPU's changes at a time, so the memory is that of the
// largest GPU's tasks, not the program's (an unfolded 2240-GPU run has tens of millions of tasks).
struct Scratch {
    std::vector<Change> changes;
    std::vector<Change> held;                    // allocations, summed per key
    std::vector<std::pair<Key, SimTime>> freed;  // end of each key's backward
    std::vector<std::int64_t> per_microbatch;    // bytes held by each (micro-batch, chunk)
};

ActivationTimeline timeline_of(const program::IterationProgram& prog, const engine::RunResult& run,
                               std::span<const program::TaskInfoTable::GpuRun> runs, std::size_t g,
                               Scratch& x) {
    x.changes.clear();
    x.freed.clear();
    for (const program::TaskInfoTable::GpuRun& r : runs) {
        for (std::size_t t = r.first; t < r.end; ++t) {
            const program::TaskShape& shape = prog.info.shape(t);
            const Key key{prog.info.microbatch(t), shape.chunk, shape.layer};
            if (shape.saved.value > 0) {
                // Each op's tensors are allocated when that op finishes.
                program::for_each_op_span(prog, shape, run.timings[t], [&](const program::OpSpan& span) {
                    // A pipeline send keeps its tensor when outputs are not deallocated (Appendix B).
                    const std::int64_t bytes =
                        span.op != nullptr ? span.op->saved_bytes.value : shape.saved.value;
                    if (bytes > 0) {
                        x.changes.push_back({span.end, bytes, key});
                    }
                });
            }
            // Freed when the key's backward compute ends (not its recomputation, not a pipeline transfer).
            if (shape.phase == program::Phase::Backward &&
                shape.category != program::TaskCategory::Recompute &&
                shape.category != program::TaskCategory::PipelineComm) {
                x.freed.emplace_back(key, run.timings[t].end);
            }
        }
    }
    // What each key holds, and when its last backward task ends: sorted by key and merged.
    auto by_key = [](const Change& a, const Change& b) { return a.key < b.key; };
    x.held.assign(x.changes.begin(), x.changes.end());
    std::sort(x.held.begin(), x.held.end(), by_key);
    std::size_t keys = 0;
    for (std::size_t i = 0; i < x.held.size(); ++i) {
        if (keys > 0 && x.held[keys - 1].key == x.held[i].key) {
            x.held[keys - 1].bytes = add_bytes(x.held[keys - 1].bytes, x.held[i].bytes, g);
        } else {
            x.held[keys++] = x.held[i];
        }
    }
    x.held.resize(keys);
    std::sort(x.freed.begin(), x.freed.end());
    std::size_t f = 0;
    for (const Change& h : x.held) {
        while (f < x.freed.size() && x.freed[f].first < h.key) {
            ++f;
        }
        if (f == x.freed.size() || x.freed[f].first != h.key) {
            continue;
        }
        SimTime end = 0;
        for (; f < x.freed.size() && x.freed[f].first == h.key; ++f) {
            end = std::max(end, x.freed[f].second);
        }
        x.changes.push_back({end, -h.bytes, h.key});
    }
    // Frees before allocations at the same instant: memory handed back can be reused at once. (The
    // order of equal changes cannot matter: within an instant the total only falls, then only rises.)
    std::sort(x.changes.begin(), x.changes.end(), [](const Change& a, const Change& b) {
        return a.time != b.time ? a.time < b.time : a.bytes < b.bytes;
    });
    // Bytes held by each (micro-batch, chunk), densely indexed; −1 (outside any) included.
    std::int32_t max_microbatch = -1, max_chunk = -1;
    for (const Change& c : x.changes) {
        max_microbatch = std::max(max_microbatch, c.key.microbatch);
        max_chunk = std::max(max_chunk, c.key.chunk);
    }
    const std::size_t chunks = static_cast<std::size_t>(max_chunk) + 2;
    x.per_microbatch.assign((static_cast<std::size_t>(max_microbatch) + 2) * chunks, 0);
    std::int64_t in_flight = 0;  // entries of per_microbatch above zero
    ActivationTimeline out;
    std::int64_t current = 0;
    ActivationPeak& peak = out.peak;
    std::vector<MemorySample>& samples = out.samples;
    samples.reserve(x.changes.size());
    for (const Change& c : x.changes) {
        current = add_bytes(current, c.bytes, g);
        if (!samples.empty() && samples.back().time == c.time) {
            samples.back().held = Bytes{current};
        } else {
            samples.push_back({c.time, Bytes{current}});
        }
        std::int64_t& mb = x.per_microbatch[static_cast<std::size_t>(c.key.microbatch + 1) * chunks +
                                            static_cast<std::size_t>(c.key.chunk + 1)];
        in_flight -= mb > 0 ? 1 : 0;
        mb += c.bytes;
        in_flight += mb > 0 ? 1 : 0;
        if (current > peak.peak.value) {
            peak.peak = Bytes{current};
            peak.at = c.time;
            peak.microbatches_in_flight = in_flight;
        }
    }
    samples.shrink_to_fit();
    return out;
}

}  // namespace

std::vector<ActivationTimeline> activation_timelines(const program::IterationProgram& prog,
                                                     const engine::RunResult& run) {
    const std::size_t gpus = prog.gpus.size();
    // A GPU's tasks are one run of consecutive ids (the builder adds a GPU at a time), but any order works.
    std::vector<std::vector<program::TaskInfoTable::GpuRun>> runs(gpus);
    for (const program::TaskInfoTable::GpuRun& r : prog.info.runs()) {
        runs[static_cast<std::size_t>(r.gpu)].push_back(r);
    }
    std::vector<ActivationTimeline> out(gpus);
    Scratch scratch;
    for (std::size_t g = 0; g < gpus; ++g) {
        out[g] = timeline_of(prog, run, runs[g], g, scratch);
    }
    return out;
}

}  // namespace trainsim::memory
