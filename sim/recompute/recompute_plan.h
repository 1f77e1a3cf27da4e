// A recomputation plan: for every layer of every pipeline stage, what is recomputed and when.
//
// Megatron's policies are plans too (megatron_recompute_plan.h): none keeps everything; selective
// recomputes its modules before each backward; full recomputes checkpoint blocks before their backward
// (a block's first layer from its stored input, the others chained from it), and with Korthikanti's
// Appendix C some micro-batches of every cycle keep everything. Overlapped recomputation (Lynx,
// arXiv 2406.08756, papers.md §3) adds a second "when": the recomputation runs on a low-priority stream
// that only uses the GPU while its compute stream waits (on a tensor-parallel collective, a pipeline
// receive, the data-parallel reduction), starting no earlier than `lookahead` schedule steps before the
// backward that needs it; whatever has not finished when the backward starts is finished on demand.
// `lookahead` 0 is the memory-minded variant: layer j's recomputation waits until the previous backward
// on the GPU has finished its layer j, so recomputed tensors take the place of ones just freed.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::recompute {

enum class LayerRecompute : std::uint8_t {
    Keep,                 // store every activation (no recompute)
    SelectiveOnDemand,    // core attention recomputed just before its backward (Megatron selective)
    SelectiveOverlapped,  // core attention recomputed in idle windows
    FullOnDemand,         // whole layer recomputed before its backward (Megatron full, one layer)
    FullOverlapped,       // whole layer recomputed in idle windows
    // A later layer of a full-recompute checkpoint block: it keeps nothing, and is recomputed on demand
    // with the layers before it, from the previous layer's recomputed output (Megatron's uniform method
    // with recompute_num_layers > 1). The block starts at the FullOnDemand layer before it in its chunk.
    FullChained,
};

/// The choices of the recompute schedulers (a chained layer belongs to Megatron's blocks only).
inline constexpr LayerRecompute kAllLayerRecomputes[] = {
    LayerRecompute::Keep, LayerRecompute::SelectiveOnDemand, LayerRecompute::SelectiveOverlapped,
    LayerRecompute::FullOnDemand, LayerRecompute::FullOverlapped};

[[nodiscard]] const char* to_string(LayerRecompute r);
[[nodiscard]] bool is_overlapped(LayerRecompute r);
[[nodiscard]] bool is_selective(LayerRecompute r);
[[nodiscard]] bool is_full(LayerRecompute r);

/// Korthikanti et al. 2022, Appendix C: of every `period` consecutive micro-batches on a stage, the first
/// `stored` keep all their activations (every layer Keep), the others follow the stage's layers.
struct StoredMicrobatches {
    std::int64_t period = 1;
    std::int64_t stored = 0;

    [[nodiscard]] bool stores(std::int64_t microbatch) const { return microbatch % period < stored; }
    friend auto operator<=>(const StoredMicrobatches&, const StoredMicrobatches&) = default;
};

struct RecomputePlan {
    /// [pipeline rank][layer within the stage: chunk · layers_per_chunk + layer within the chunk].
    std::vector<std::vector<LayerRecompute>> layers;
    /// Per pipeline rank, the micro-batches that keep everything whatever `layers` says; empty: none.
    std::vector<StoredMicrobatches> stored_microbatches;
    /// How early overlapped recomputation may start: 0, once the previous backward has freed the same
    /// layer; k ≥ 1, k schedule steps before its own backward.
    std::int64_t lookahead = 1;

    [[nodiscard]] static RecomputePlan uniform(std::int64_t stages, std::int64_t layers_per_stage,
                                               LayerRecompute r, std::int64_t lookahead = 1);
    /// The same policy for every layer of stages with layers_per_stage[s] layers each.
    [[nodiscard]] static RecomputePlan uniform(const std::vector<std::int64_t>& layers_per_stage,
                                               LayerRecompute r, std::int64_t lookahead = 1);
    [[nodiscard]] LayerRecompute at(std::int64_t stage, std::int64_t layer_in_stage) const {
        return layers[static_cast<std::size_t>(stage)][static_cast<std::size_t>(layer_in_stage)];
    }
    /// The layer's recomputation in micro-batch `microbatch` (Appendix C's stored micro-batches Keep).
    [[nodiscard]] LayerRecompute at(std::int64_t stage, std::int64_t layer_in_stage,
                                    std::int64_t microbatch) const;
    [[nodiscard]] bool has_overlap() const;
    /// "stages 0-3: full overlapped; stages 4-7: selective on demand (lookahead 1 step)"; Appendix C's
    /// micro-batches as "stage 0: full on demand, micro-batches 0-1 of every 4 keep all".
    [[nodiscard]] std::string describe() const;
    /// Member by member: plans that compare equal simulate alike (the recompute searches' cache key).
    friend auto operator<=>(const RecomputePlan&, const RecomputePlan&) = default;
};

}  // namespace trainsim::recompute
