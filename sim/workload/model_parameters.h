// Whole-model parameter counts, total and active per token, as mixture-of-experts papers publish them.
#pragma once

#include <cstdint>

#include "sim/config/scenario.h"

namespace trainsim::workload {

struct ModelParameters {
    /// Every weight of the main model (embedding, layers, final norm, output layer when untied); the
    /// multi-token prediction modules are counted apart, as DeepSeek-V3's "671B" leaves them out.
    std::int64_t total = 0;
    /// The weights one token passes through: routed experts counted router_topk times out of num_experts.
    std::int64_t active = 0;
    /// The MTP modules' own weights (norms, projection, one transformer layer each); they share the
    /// embedding and output layer with the main model, as Megatron-Core's MultiTokenPrediction does.
    std::int64_t mtp = 0;
};

/// Unsharded counts (no tensor, pipeline or expert split) from the model keys alone. The router's
/// expert-bias buffer (DeepSeek-V3's aux-loss-free balancing, E per layer) is not a trained weight.
[[nodiscard]] ModelParameters model_parameters(const config::ModelConfig& model);

/// One routed expert's MLP: fc1 h → f (2f gated) and fc2 f → h, with biases when add_bias_linear.
[[nodiscard]] std::int64_t expert_parameters(const config::ModelConfig& model, std::int64_t ffn);

/// One layer's attention block (GQA/MHA or MLA), its norms on q/k/latents included; not the pre-norm.
[[nodiscard]] std::int64_t attention_parameters(const config::ModelConfig& model);

}  // namespace trainsim::workload
