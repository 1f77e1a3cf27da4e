// Megatron-Core's pipeline_model_parallel_layout: what each virtual pipeline stage builds, as Megatron-LM
// megatron/core/transformer/pipeline_parallel_layer_layout.py reads it. A string ("Et|(tt|)*30mL": E the
// embedding, t a transformer layer, m an MTP layer, L the loss, `|` between stages, `(...)*n` and `x*n`
// repeat, commas are cosmetic) or a list of lists of LayerType names ("embedding", "decoder", "mtp",
// "loss"). Stages are listed in virtual-stage order: stage i is chunk i / p of pipeline rank i mod p, so
// the layout's length is p·v and it fixes v.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/strict_json.h"

namespace trainsim::config {

enum class LayoutSymbol : char { Embedding = 'E', Decoder = 't', Mtp = 'm', Loss = 'L' };

struct PipelineLayout {
    /// The layout as the scenario wrote it (the string, or the list as JSON), for messages and reports.
    std::string text;
    /// Each virtual stage's layers, in virtual-stage order (chunk-major).
    std::vector<std::vector<LayoutSymbol>> stages;
};

/// Reads parallelism.pipeline_model_parallel_layout (a string or a list of lists of names) into stages.
/// Throws InputError naming the key for an unknown symbol or name, unbalanced parentheses, or a layout
/// that unrolls to more than 2^20 layers (a typo, not a model).
[[nodiscard]] PipelineLayout parse_pipeline_layout(const Json& value);

/// Megatron's virtual pipeline size for the layout: its stage count over `pipeline_size`. Throws
/// InputError when the count is not a multiple of it.
[[nodiscard]] std::int64_t layout_virtual_size(const PipelineLayout& layout, std::int64_t pipeline_size);

/// The transformer layers of every virtual stage (virtual-stage order), after Megatron's
/// validate_layer_layout rules: one E, first; one L, last; num_layers t; mtp_num_layers m after every t,
/// all in one stage, the last chunk of a rank other than 0. trainsim also needs the MTP layers in the
/// loss's stage (Megatron's mtp_standalone placement is not modelled). Throws InputError naming the key.
[[nodiscard]] std::vector<std::int64_t> layout_layers_per_virtual_stage(const PipelineLayout& layout,
                                                                        std::int64_t pipeline_size,
                                                                        std::int64_t num_layers,
                                                                        std::int64_t mtp_num_layers);

}  // namespace trainsim::config
