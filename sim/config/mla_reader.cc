#include "sim/config/mla_reader.h"

#include <array>
#include <string_view>

#include "sim/core/input_error.h"

namespace trainsim::config {

std::optional<MlaConfig> read_mla(const SectionReader& r, const ModelPreset* preset) {
    const PresetMla p = preset != nullptr ? preset->mla : PresetMla{};
    const bool from_preset = p.kv_lora_rank > 0;
    if (!r.boolean("multi_latent_attention", from_preset)) {
        for (const std::string_view key : std::array<std::string_view, 5>{
                 "q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim"}) {
            if (r.has(key)) {
                throw InputError(r.path(key) + ": applies only with " + r.path("multi_latent_attention") +
                                 "=true");
            }
        }
        return std::nullopt;
    }
    MlaConfig mla;  // Megatron's defaults unless the preset gives its own
    const auto pick = [&](std::string_view key, std::int64_t preset_value, std::int64_t fallback) {
        return r.positive_integer(key).value_or(from_preset ? preset_value : fallback);
    };
    // q_lora_rank: null (Megatron's default) is a full-rank query projection.
    if (r.has("q_lora_rank")) {
        mla.q_lora_rank = r.nullable_positive_integer("q_lora_rank");
    } else if (from_preset && p.q_lora_rank > 0) {
        mla.q_lora_rank = p.q_lora_rank;
    }
    mla.kv_lora_rank = pick("kv_lora_rank", p.kv_lora_rank, mla.kv_lora_rank);
    mla.qk_head_dim = pick("qk_head_dim", p.qk_head_dim, mla.qk_head_dim);
    mla.qk_pos_emb_head_dim = pick("qk_pos_emb_head_dim", p.qk_pos_emb_head_dim, mla.qk_pos_emb_head_dim);
    mla.v_head_dim = pick("v_head_dim", p.v_head_dim, mla.v_head_dim);
    return mla;
}

}  // namespace trainsim::config
