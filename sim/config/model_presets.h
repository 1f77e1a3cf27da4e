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

/// A preset's mixture-of-experts MLPs (num_experts 0: dense). MoE layers follow the first
/// `first_dense_layers` dense ones (DeepSeek-V3's moe_layer_freq [0]*3 + [1]*58).
struct PresetMoe {
    std::int64_t num_experts = 0;
    std::int64_t router_topk = 0;
    std::int64_t ffn_hidden_size = 0;
    std::int64_t shared_expert_intermediate_size = 0;
    std::int64_t first_dense_layers = 0;
};

/// A preset's multi-latent attention (kv_lora_rank 0: none); q_lora_rank 0 means none.
struct PresetMla {
    std::int64_t q_lora_rank = 0;
    std::int64_t kv_lora_rank = 0;
    std::int64_t qk_head_dim = 0;
    std::int64_t qk_pos_emb_head_dim = 0;
    std::int64_t v_head_dim = 0;
};

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
    std::optional<std::int64_t> kv_channels = std::nullopt;
    bool qk_layernorm = false;
    PresetMoe moe{};
    PresetMla mla{};
    std::int64_t mtp_num_layers = 0;
};

/// All presets, in a fixed order.
[[nodiscard]] std::span<const ModelPreset> model_presets();

/// The preset called `name`, or nullptr.
[[nodiscard]] const ModelPreset* find_model_preset(std::string_view name);

/// The preset names, in the order of model_presets().
[[nodiscard]] std::vector<std::string> model_preset_names();

}  // namespace trainsim::config
