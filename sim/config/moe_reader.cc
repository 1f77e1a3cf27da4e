#include "sim/config/moe_reader.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "sim/config/scenario_enums.h"
#include "sim/core/input_error.h"

namespace trainsim::config {

namespace {

constexpr std::array<std::string_view, 10> kMoeKeys{"moe_router_topk",
                                                    "moe_ffn_hidden_size",
                                                    "moe_shared_expert_intermediate_size",
                                                    "moe_layer_freq",
                                                    "moe_token_dispatcher_type",
                                                    "moe_expert_capacity_factor",
                                                    "moe_pad_expert_input_to_capacity",
                                                    "moe_grouped_gemm",
                                                    "moe_shared_expert_overlap",
                                                    "moe_load_skew"};

// Megatron's moe_layer_freq: an int k puts an MoE MLP on every layer i with i % k == 0; a list of
// num_layers 0/1 entries gives the pattern (arguments.py, moe_freq_type).
std::vector<bool> read_layer_pattern(const SectionReader& r, std::int64_t num_layers,
                                     std::int64_t first_dense) {
    const std::string key = r.path("moe_layer_freq");
    const Json* value = r.value("moe_layer_freq");
    std::vector<bool> pattern(static_cast<std::size_t>(num_layers), true);
    if (value == nullptr) {
        for (std::int64_t i = 0; i < std::min(first_dense, num_layers); ++i) {
            pattern[static_cast<std::size_t>(i)] = false;
        }
        return pattern;
    }
    if (value->is_number_integer()) {
        const auto k = value->get<std::int64_t>();
        if (k < 1 || k > kMaxScenarioSize) {
            throw InputError(key + ": expected a positive integer or a list of 0/1 per layer, got " +
                             describe_json(*value));
        }
        for (std::int64_t i = 0; i < num_layers; ++i) {
            pattern[static_cast<std::size_t>(i)] = i % k == 0;
        }
        return pattern;
    }
    if (!value->is_array()) {
        throw InputError(key + ": expected a positive integer or a list of 0/1 per layer, got " +
                         describe_json(*value));
    }
    if (static_cast<std::int64_t>(value->size()) != num_layers) {
        throw InputError(key + ": the list has " + std::to_string(value->size()) +
                         " entries, one per layer needs model.num_layers=" + std::to_string(num_layers));
    }
    for (std::size_t i = 0; i < value->size(); ++i) {
        const Json& e = (*value)[i];
        if (!e.is_number_integer() || (e.get<std::int64_t>() != 0 && e.get<std::int64_t>() != 1)) {
            throw InputError(key + "[" + std::to_string(i) + "]: expected 0 (dense) or 1 (MoE), got " +
                             describe_json(e));
        }
        pattern[i] = e.get<std::int64_t>() == 1;
    }
    return pattern;
}

}  // namespace

std::optional<MoeConfig> read_moe(const SectionReader& r, const ModelPreset* preset,
                                  const ModelConfig& model) {
    const PresetMoe from_preset = preset != nullptr ? preset->moe : PresetMoe{};
    // null (Megatron's None) makes even an MoE preset dense; absent keeps the preset's experts.
    const std::int64_t num_experts = r.has("num_experts")
                                         ? r.nullable_positive_integer("num_experts").value_or(0)
                                         : from_preset.num_experts;
    if (num_experts == 0) {
        for (const std::string_view key : kMoeKeys) {
            if (r.has(key)) {
                throw InputError(r.path(key) + ": applies only to a mixture-of-experts model (set " +
                                 r.path("num_experts") + ")");
            }
        }
        return std::nullopt;
    }
    MoeConfig moe;
    moe.num_experts = num_experts;
    moe.router_topk = r.positive_integer("moe_router_topk")
                          .value_or(from_preset.router_topk > 0 ? from_preset.router_topk : moe.router_topk);
    moe.ffn_hidden_size =
        r.nullable_positive_integer("moe_ffn_hidden_size")
            .value_or(from_preset.ffn_hidden_size > 0 ? from_preset.ffn_hidden_size : model.ffn_hidden_size);
    moe.shared_expert_intermediate_size = r.nullable_positive_integer("moe_shared_expert_intermediate_size")
                                              .value_or(from_preset.shared_expert_intermediate_size);
    moe.layer_is_moe = read_layer_pattern(r, model.num_layers, from_preset.first_dense_layers);
    moe.token_dispatcher = r.enumeration("moe_token_dispatcher_type", kMoeTokenDispatcherNames, false)
                               .value_or(MoeTokenDispatcher::AllGather);
    if (const Json* cf = r.value("moe_expert_capacity_factor"); cf != nullptr && !cf->is_null()) {
        // Megatron: None is dropless; a factor must be positive (tokens beyond factor × fair share drop).
        if (!cf->is_number() || cf->get<double>() <= 0.0 || !std::isfinite(cf->get<double>())) {
            throw InputError(r.path("moe_expert_capacity_factor") +
                             ": expected a number > 0, or null for dropless, got " + describe_json(*cf));
        }
        moe.expert_capacity_factor = cf->get<double>();
    }
    moe.pad_expert_input_to_capacity = r.boolean("moe_pad_expert_input_to_capacity", false);
    if (moe.pad_expert_input_to_capacity && !moe.expert_capacity_factor) {
        // Megatron ignores the padding without a capacity; a scenario that sets it means something else.
        throw InputError(r.path("moe_pad_expert_input_to_capacity") + "=true requires " +
                         r.path("moe_expert_capacity_factor") + " (a capacity to pad to)");
    }
    moe.grouped_gemm = r.boolean("moe_grouped_gemm", false);
    moe.shared_expert_overlap = r.boolean("moe_shared_expert_overlap", false);
    if (const Json* skew = r.value("moe_load_skew"); skew != nullptr) {
        // An expert receives each token at most once, so at most E/k times the mean of T·k/E.
        const double most = static_cast<double>(moe.num_experts) / static_cast<double>(moe.router_topk);
        if (!skew->is_number() || !std::isfinite(skew->get<double>()) || skew->get<double>() < 1.0 ||
            skew->get<double>() > most) {
            throw InputError(
                r.path("moe_load_skew") + ": expected a number from 1 (balanced) to num_experts / " +
                "moe_router_topk = " + describe_json(Json(most)) + ", got " + describe_json(*skew));
        }
        moe.load_skew = skew->get<double>();
    }
    return moe;
}

}  // namespace trainsim::config
