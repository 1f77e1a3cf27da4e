#include "sim/memory/activation_timeline.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "sim/core/input_error.h"

namespace trainsim::memory {
namespace {

using Key = std::tuple<std::int32_t, std::int32_t, std::int32_t>;  // micro-batch, chunk, layer

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

}  // namespace

std::vector<ActivationTimeline> activation_timelines(const program::IterationProgram& prog,
                                                     const engine::RunResult& run) {
    const std::size_t gpus = prog.gpus.size();
    std::vector<std::map<Key, std::int64_t>> held(gpus);  // bytes allocated per key
    std::vector<std::map<Key, SimTime>> freed_at(gpus);   // end of the key's backward
    std::vector<std::vector<Change>> changes(gpus);
    for (std::size_t t = 0; t < prog.info.size(); ++t) {
        const program::TaskInfo& info = prog.info[t];
        const auto g = static_cast<std::size_t>(info.gpu);
        const Key key{info.microbatch, info.chunk, info.layer};
        const SimTime end = run.timings[t].end;
        if (info.saved.value > 0) {
            // Each op's tensors are allocated when that op finishes.
            for (const program::OpSpan& span :
                 program::op_spans(prog, static_cast<engine::TaskId>(t), run.timings[t])) {
                // A pipeline send keeps its tensor when outputs are not deallocated (Appendix B).
                const std::int64_t bytes = span.op != nullptr ? span.op->saved_bytes.value : info.saved.value;
                if (bytes > 0) {
                    changes[g].push_back({span.end, bytes, key});
                    held[g][key] = add_bytes(held[g][key], bytes, g);
                }
            }
        }
        // Freed when the key's backward compute ends (not its recomputation, not a pipeline transfer).
        if (info.phase == program::Phase::Backward && info.category != program::TaskCategory::Recompute &&
            info.category != program::TaskCategory::PipelineComm) {
            SimTime& f = freed_at[g][key];
            f = std::max(f, end);
        }
    }
    std::vector<ActivationTimeline> out(gpus);
    for (std::size_t g = 0; g < gpus; ++g) {
        for (const auto& [key, bytes] : held[g]) {
            const auto it = freed_at[g].find(key);
            if (it != freed_at[g].end()) {
                changes[g].push_back({it->second, -bytes, key});
            }
        }
        // Frees before allocations at the same instant: memory handed back can be reused at once.
        std::stable_sort(changes[g].begin(), changes[g].end(), [](const Change& a, const Change& b) {
            return a.time != b.time ? a.time < b.time : a.bytes < b.bytes;
        });
        std::int64_t current = 0;
        std::map<std::pair<std::int32_t, std::int32_t>, std::int64_t> per_microbatch;
        ActivationPeak& peak = out[g].peak;
        std::vector<MemorySample>& samples = out[g].samples;
        samples.reserve(changes[g].size());
        for (const Change& c : changes[g]) {
            current = add_bytes(current, c.bytes, g);
            if (!samples.empty() && samples.back().time == c.time) {
                samples.back().held = Bytes{current};
            } else {
                samples.push_back({c.time, Bytes{current}});
            }
            per_microbatch[{std::get<0>(c.key), std::get<1>(c.key)}] += c.bytes;
            if (current > peak.peak.value) {
                peak.peak = Bytes{current};
                peak.at = c.time;
                peak.microbatches_in_flight =
                    static_cast<std::int64_t>(std::count_if(per_microbatch.begin(), per_microbatch.end(),
                                                            [](const auto& kv) { return kv.second > 0; }));
            }
        }
    }
    return out;
}

}  // namespace trainsim::memory
