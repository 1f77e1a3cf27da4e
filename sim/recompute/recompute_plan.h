// A recomputation plan: for every layer of every pipeline stage, what is recomputed and when.
//
// Megatron's policies are uniform plans (none: keep everything; selective: recompute core attention
// before its backward; full: recompute the layer before its backward). Overlapped recomputation (Lynx,
// arXiv 2406.08756, papers.md §3) adds a second "when": the recomputation runs on a low-priority stream
// that only uses the GPU while its compute stream waits (on a tensor-parallel collective, a pipeline
// receive, the data-parallel reduction), starting no earlier than `lookahead` schedule steps before the
// backward that needs it; whatever has not finished when the backward starts is finished on demand.
// `lookahead` 0 is the memory-minded variant: layer j's recomputation waits until the previous backward
// on the GPU has finished its layer j, so recomputed tensors take the place of ones just freed.
#pragma once

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
};

inline constexpr LayerRecompute kAllLayerRecomputes[] = {
    LayerRecompute::Keep, LayerRecompute::SelectiveOnDemand, LayerRecompute::SelectiveOverlapped,
    LayerRecompute::FullOnDemand, LayerRecompute::FullOverlapped};

[[nodiscard]] const char* to_string(LayerRecompute r);
[[nodiscard]] bool is_overlapped(LayerRecompute r);
[[nodiscard]] bool is_selective(LayerRecompute r);
[[nodiscard]] bool is_full(LayerRecompute r);

struct RecomputePlan {
    /// [pipeline rank][layer within the stage: chunk · layers_per_chunk + layer within the chunk].
    std::vector<std::vector<LayerRecompute>> layers;
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
    [[nodiscard]] bool has_overlap() const;
    /// "stages 0-3: full overlapped; stages 4-7: selective on demand (lookahead 1 step)".
    [[nodiscard]] std::string describe() const;
};

}  // namespace trainsim::recompute
