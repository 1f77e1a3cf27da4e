// The multi-latent attention keys (Megatron's multi_latent_attention and its ranks and head widths).
#pragma once

#include <optional>

#include "sim/config/model_presets.h"
#include "sim/config/scenario.h"
#include "sim/config/section_reader.h"

namespace trainsim::config {

/// The model's MLA configuration when multi_latent_attention is true (or the preset uses it), else
/// nullopt; MLA keys without it are an error naming the key.
[[nodiscard]] std::optional<MlaConfig> read_mla(const SectionReader& r, const ModelPreset* preset);

}  // namespace trainsim::config
