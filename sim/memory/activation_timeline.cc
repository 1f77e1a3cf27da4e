#include "sim/memory/activation_timeline.h"

#include <algorithm>
#include <span>
#include <string>
#include <utility>

#include "sim/core/input_error.h"
#include "sim/program/backward_split.h"
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

// What one (micro-batch, chunk, layer) holds, and when its backward ends.
struct KeyState {
    Key key;
    std::int64_t held = 0;
    std::int64_t held_recomputed = 0;  // by recomputed forward ops: the input gradient's alone
    SimTime freed{};
    SimTime input_gradient_done{};  // the end of its last backward task that is not W alone
    bool allocated = false;
    bool has_free = false;
};

// Scratch space reused from GPU to GPU: one GPU's changes at a time, so the memory is that of the
// largest GPU's tasks, not the program's (an unfolded 2240-GPU run has tens of millions of tasks).
struct Scratch {
    std::vector<Change> allocations;
    std::vector<Change> frees;
    std::vector<KeyState> keys;
    std::vector<std::uint32_t> index;          // open addressing into keys (kEmpty: empty), ≤ half full
    std::vector<std::int64_t> per_microbatch;  // bytes held by each (micro-batch, chunk)

    static constexpr std::uint32_t kEmpty = 0xffffffffU;

    static std::size_t hash(const Key& k) {
        const std::uint64_t h =
            (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.microbatch)) << 32 |
             static_cast<std::uint32_t>(k.chunk)) *
                0x9E3779B97F4A7C15ULL ^
            static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.layer)) * 0xC2B2AE3D27D4EB4FULL;
        return static_cast<std::size_t>(h ^ (h >> 31));
    }

    void clear() {
        allocations.clear();
        frees.clear();
        keys.clear();
        std::fill(index.begin(), index.end(), kEmpty);
    }

    KeyState& state(const Key& key) {
        if (2 * (keys.size() + 1) > index.size()) {
            index.assign(index.empty() ? 1024 : index.size() * 2, kEmpty);
            for (std::uint32_t id = 0; id < keys.size(); ++id) {
                index[slot(keys[id].key)] = id;
            }
        }
        const std::size_t i = slot(key);
        if (index[i] == kEmpty) {
            index[i] = static_cast<std::uint32_t>(keys.size());
            keys.push_back(KeyState{key});
        }
        return keys[index[i]];
    }

    [[nodiscard]] std::size_t slot(const Key& key) const {
        const std::size_t mask = index.size() - 1;
        std::size_t i = hash(key) & mask;
        while (index[i] != kEmpty && keys[index[i]].key != key) {
            i = (i + 1) & mask;
        }
        return i;
    }
};

// Frees before allocations at the same instant: memory handed back can be reused at once. (The
// order of changes of one kind at one instant cannot matter: within an instant the total only falls,
// then only rises, and the peak and the sample are taken after the last.)
bool earlier(const Change& a, const Change& b) {
    return a.time != b.time ? a.time < b.time : a.bytes < b.bytes;
}

ActivationTimeline timeline_of(const program::IterationProgram& prog, const engine::RunResult& run,
                               std::span<const program::TaskInfoTable::GpuRun> runs, std::size_t g,
                               Scratch& x) {
    x.clear();
    for (const program::TaskInfoTable::GpuRun& r : runs) {
        for (std::size_t t = r.first; t < r.end; ++t) {
            const program::TaskShape& shape = prog.info.shape(t);
            const Key key{prog.info.microbatch(t), shape.chunk, shape.layer};
            if (shape.saved.value > 0) {
                KeyState& k = x.state(key);
                // Each op's tensors are allocated when that op finishes.
                program::for_each_op_span(prog, shape, run.timings[t], [&](const program::OpSpan& span) {
                    // A pipeline send keeps its tensor when outputs are not deallocated (Appendix B).
                    const std::int64_t bytes =
                        span.op != nullptr ? span.op->saved_bytes.value : shape.saved.value;
                    if (bytes > 0) {
                        x.allocations.push_back({span.end, bytes, key});
                        if (prog.weight_passes && span.op != nullptr && span.op->is_recompute &&
                            !program::saved_for_weight_gradient(*span.op)) {
                            k.held_recomputed = add_bytes(k.held_recomputed, bytes, g);
                        } else {
                            k.held = add_bytes(k.held, bytes, g);
                        }
                        k.allocated = true;
                    }
                });
            }
            // Freed when the key's backward compute ends (not its recomputation, not a pipeline transfer).
            if (shape.phase == program::Phase::Backward &&
                shape.category != program::TaskCategory::Recompute &&
                shape.category != program::TaskCategory::PipelineComm &&
                shape.category != program::TaskCategory::Host) {
                KeyState& k = x.state(key);
                k.freed = std::max(k.freed, run.timings[t].end);
                k.has_free = true;
                if (prog.weight_passes) {
                    // With zero-bubble W passes, what was recomputed serves the input gradient (B) alone,
                    // but for the weight GEMMs' inputs, which W reads (held above with the stored ones):
                    // it goes when the key's last task with more than wgrad GEMMs ends.
                    bool weight_only = true;
                    program::for_each_op_span(prog, shape, run.timings[t], [&](const program::OpSpan& span) {
                        weight_only =
                            weight_only && span.op != nullptr && program::is_weight_gradient(*span.op);
                    });
                    if (!weight_only) {
                        k.input_gradient_done = std::max(k.input_gradient_done, run.timings[t].end);
                    }
                }
            }
        }
    }
    for (const KeyState& k : x.keys) {
        if (k.allocated && k.has_free) {
            x.frees.push_back({k.freed, -k.held, k.key});
            if (k.held_recomputed > 0) {
                x.frees.push_back({k.input_gradient_done > SimTime{} ? k.input_gradient_done : k.freed,
                                   -k.held_recomputed, k.key});
            }
        }
    }
    // Allocations come in task order, which is time order on the compute stream; others (a kept
    // pipeline send, overlapped recomputation) can break it.
    if (!std::is_sorted(x.allocations.begin(), x.allocations.end(), earlier)) {
        std::sort(x.allocations.begin(), x.allocations.end(), earlier);
    }
    std::sort(x.frees.begin(), x.frees.end(), earlier);
    // Bytes held by each (micro-batch, chunk), densely indexed; −1 (outside any) included.
    std::int32_t max_microbatch = -1, max_chunk = -1;
    for (const KeyState& k : x.keys) {
        max_microbatch = std::max(max_microbatch, k.key.microbatch);
        max_chunk = std::max(max_chunk, k.key.chunk);
    }
    const std::size_t chunks = static_cast<std::size_t>(max_chunk) + 2;
    x.per_microbatch.assign((static_cast<std::size_t>(max_microbatch) + 2) * chunks, 0);
    std::int64_t in_flight = 0;  // entries of per_microbatch above zero
    ActivationTimeline out;
    std::int64_t current = 0;
    ActivationPeak& peak = out.peak;
    std::vector<MemorySample>& samples = out.samples;
    samples.reserve(x.allocations.size() + x.frees.size());
    auto apply = [&](const Change& c) {
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
    };
    // The two sorted lists merged, frees first at equal times.
    std::size_t a = 0, f = 0;
    while (a < x.allocations.size() || f < x.frees.size()) {
        if (f < x.frees.size() && (a == x.allocations.size() || !earlier(x.allocations[a], x.frees[f]))) {
            apply(x.frees[f++]);
        } else {
            apply(x.allocations[a++]);
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
        runs[r.gpu.index()].push_back(r);
    }
    std::vector<ActivationTimeline> out(gpus);
    Scratch scratch;
    for (std::size_t g = 0; g < gpus; ++g) {
        out[g] = timeline_of(prog, run, runs[g], g, scratch);
    }
    return out;
}

}  // namespace trainsim::memory
