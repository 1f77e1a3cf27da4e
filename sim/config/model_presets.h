// Named model shapes from the papers the simulator is validated against, so that a scenario can say
// `"model": {"preset": "gpt3-175b"}` instead of copying six numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/scenario.h"

namespace trainsim::config {

struct ModelPreset {
    std::string_view name;
    std::string_view source;  // where the numbers come from
    std::int64_t num_layers = 0;
    std::int64_t hidden_size = 0;
    std::int64_t num_attention_heads = 0;
    std::int64_t seq_length = 0;
    std::int64_t padded_vocab_size = 0;
    /// nullopt: 4 × hidden_size, recomputed from the final hidden size when a scenario overrides it.
    std::optional<std::int64_t> ffn_hidden_size;
    /// The layer's style, as the preset's source configures it (defaults: the GPT-3 layer).
    std::optional<std::int64_t> num_query_groups = std::nullopt;
    bool swiglu = false;
    bool rmsnorm = false;
    bool rope = false;
    bool untie_embeddings_and_output_weights = false;
    bool add_bias_linear = true;
};

/// All presets, in a fixed order.
[[nodiscard]] std::span<const ModelPreset> model_presets();

/// The preset called `name`, or nullptr.
[[nodiscard]] const ModelPreset* find_model_preset(std::string_view name);

/// The preset names, in the order of model_presets().
[[nodiscard]] std::vector<std::string> model_preset_names();

}  // namespace trainsim::config
