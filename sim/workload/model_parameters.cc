#include "sim/workload/model_parameters.h"

namespace trainsim::workload {

namespace {

std::int64_t norm_weight_count(const config::ModelConfig& m, std::int64_t width) {
    return m.normalization == config::Normalization::RMSNorm ? width : 2 * width;
}

struct LayerParameters {
    std::int64_t total = 0;
    std::int64_t active = 0;
};

LayerParameters layer(const config::ModelConfig& m, bool moe_mlp) {
    const std::int64_t h = m.hidden_size;
    const std::int64_t common = attention_parameters(m) + 2 * norm_weight_count(m, h);
    if (!moe_mlp) {
        const std::int64_t dense = common + expert_parameters(m, m.ffn_hidden_size);
        return {dense, dense};
    }
    const config::MoeConfig& moe = *m.moe;
    // Megatron-Core's TopKRouter: one h × E weight, no bias; the shared expert is a dense MLP of its width.
    const std::int64_t shared = moe.shared_expert_intermediate_size > 0
                                    ? expert_parameters(m, moe.shared_expert_intermediate_size)
                                    : 0;
    const std::int64_t base = common + h * moe.num_experts + shared;
    const std::int64_t expert = expert_parameters(m, moe.ffn_hidden_size);
    return {base + moe.num_experts * expert, base + moe.router_topk * expert};
}

}  // namespace

std::int64_t expert_parameters(const config::ModelConfig& m, std::int64_t ffn) {
    const std::int64_t h = m.hidden_size;
    const std::int64_t bias = m.add_bias_linear ? 1 : 0;
    const std::int64_t fc1_out = m.swiglu ? 2 * ffn : ffn;
    return (h + bias) * fc1_out + ffn * h + bias * h;
}

std::int64_t attention_parameters(const config::ModelConfig& m) {
    const std::int64_t h = m.hidden_size;
    const std::int64_t a = m.num_attention_heads;
    const std::int64_t bias = m.add_bias_linear ? 1 : 0;
    if (m.mla) {
        // DeepSeek-V2 §2.1 / Megatron-Core MLASelfAttention: q down (h·r_q) + its norm + q up
        // (r_q·a·(d_qk + d_rope)), or one h·a·(d_qk + d_rope) GEMM without q_lora_rank; kv down to the
        // latent and the shared RoPE key (h·(r_kv + d_rope)) + the latent's norm + kv up
        // (r_kv·a·(d_qk + d_v)); output a·d_v·h. Megatron builds the four MLA projections with
        // bias=False; only the output projection has add_bias_linear's bias (h).
        const config::MlaConfig& x = *m.mla;
        const std::int64_t q_width = a * (x.qk_head_dim + x.qk_pos_emb_head_dim);
        const std::int64_t q = x.q_lora_rank
                                   ? h * *x.q_lora_rank + norm_weight_count(m, *x.q_lora_rank) + *x.q_lora_rank * q_width
                                   : h * q_width;
        const std::int64_t kv = h * (x.kv_lora_rank + x.qk_pos_emb_head_dim) + norm_weight_count(m, x.kv_lora_rank) +
                                x.kv_lora_rank * a * (x.qk_head_dim + x.v_head_dim);
        return q + kv + a * x.v_head_dim * h + bias * h;
    }
    const std::int64_t d = m.head_dim();
    const std::int64_t qkv = (h + bias) * (a + 2 * m.query_groups()) * d;
    const std::int64_t proj = a * d * h + bias * h;
    // qk_layernorm normalises each head's query and key with one shared weight of width d each.
    const std::int64_t qk_norm = m.qk_layernorm ? 2 * norm_weight_count(m, d) : 0;
    return qkv + proj + qk_norm;
}

ModelParameters model_parameters(const config::ModelConfig& m) {
    const std::int64_t h = m.hidden_size;
    ModelParameters out;
    const std::int64_t embedding =
        m.padded_vocab_size * h +
        (m.position_embedding_type == config::PositionEmbeddingType::LearnedAbsolute ? m.seq_length * h : 0);
    const std::int64_t output = m.untie_embeddings_and_output_weights ? m.padded_vocab_size * h : 0;
    out.total = out.active = embedding + output + norm_weight_count(m, h);
    bool last_is_moe = false;
    for (std::int64_t i = 0; i < m.num_layers; ++i) {
        last_is_moe = m.moe && m.moe->layer_is_moe[static_cast<std::size_t>(i)];
        const LayerParameters l = layer(m, last_is_moe);
        out.total += l.total;
        out.active += l.active;
    }
    // Megatron-Core's MTP layer: norms of the embedding and of the hidden state, the 2h → h projection,
    // one transformer layer of the last layer's kind, and its own final norm_weight_count (DeepSeek-V3 §2.2).
    const std::int64_t mtp_layer = 2 * norm_weight_count(m, h) + 2 * h * h + layer(m, last_is_moe).total + norm_weight_count(m, h);
    out.mtp = m.mtp_num_layers * mtp_layer;
    return out;
}

}  // namespace trainsim::workload
