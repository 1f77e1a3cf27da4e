// Which of the model's transformer layers a pipeline rank holds, and which of them are MoE layers:
// stages of a model with moe_layer_freq hold different layer kinds (DeepSeek-V3's first three layers
// are dense), so their op lists, parameters and memory follow the layers they hold.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/config/scenario.h"

namespace trainsim::workload {

/// Whether model layer `layer` (0 first) has an MoE MLP (moe_layer_freq); false for dense models.
[[nodiscard]] bool is_moe_layer(const config::Scenario& scenario, std::int64_t layer);

/// Whether the model has dense layers beside its MoE layers (moe_layer_freq, DeepSeek-V3's first three):
/// then each kind of layer has its own op lists, parameters and prices.
[[nodiscard]] bool mixes_dense_and_moe_layers(const config::Scenario& scenario);

/// The model index of the first layer of chunk `chunk` on pipeline rank `pipeline_rank`: Megatron's
/// interleaving puts chunk c of rank r at virtual stage c·p + r; the V schedules (zb-v, dualpipev) put
/// chunk 1 at the mirrored stage 2p − 1 − r; DualPipe chunk 1 at stage p − 1 − r of the second copy.
[[nodiscard]] std::int64_t first_layer_of_chunk(const config::Scenario& scenario, std::int64_t pipeline_rank,
                                                std::int64_t chunk);

/// The model indices of every layer pipeline rank `pipeline_rank` holds, chunk by chunk.
[[nodiscard]] std::vector<std::int64_t> stage_layers(const config::Scenario& scenario,
                                                     std::int64_t pipeline_rank);

}  // namespace trainsim::workload
