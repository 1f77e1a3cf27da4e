// The mixture-of-experts model keys (Megatron-Core's MoE arguments), read on top of a preset's values.
#pragma once

#include <optional>

#include "sim/config/model_presets.h"
#include "sim/config/scenario.h"
#include "sim/config/section_reader.h"

namespace trainsim::config {

/// The model's MoE configuration, or nullopt for a dense model. `model` must already hold num_layers
/// and ffn_hidden_size (moe_ffn_hidden_size defaults to the latter). MoE keys without num_experts
/// (from the file or the preset) are an error naming the key.
[[nodiscard]] std::optional<MoeConfig> read_moe(const SectionReader& r, const ModelPreset* preset,
                                                const ModelConfig& model);

}  // namespace trainsim::config
