#include "sim/workload/model_flops.h"

namespace trainsim::workload {
namespace {

struct Terms {
    double B, L, s, h, f, V;
    // Factors that are exactly 1 for the GPT-3 layer (so its numbers are bit-for-bit what they were):
    double projections;  // QKV and output projection: d·(a + g) / (2h) (grouped-query attention, kv_channels)
    double mlp;          // 3/2 for the gated MLP's third GEMM
    double attention;    // a·d / h
};

Terms terms_of(const config::Scenario& sc) {
    const config::ModelConfig& m = sc.model;
    const auto h = static_cast<double>(m.hidden_size);
    const auto a = static_cast<double>(m.num_attention_heads);
    const auto g = static_cast<double>(m.query_groups());
    const auto d = static_cast<double>(m.head_dim());
    return Terms{static_cast<double>(sc.training.global_batch_size),
                 static_cast<double>(m.num_layers),
                 static_cast<double>(m.seq_length),
                 h,
                 static_cast<double>(m.ffn_hidden_size),
                 static_cast<double>(m.padded_vocab_size),
                 d * (a + g) / (2.0 * h),
                 m.swiglu ? 1.5 : 1.0,
                 a * d / h};
}

// One layer's forward GEMMs for the whole batch (Korthikanti Appendix A with an MLP of size f): QKV 6Bsh²,
// projection 2Bsh², the two MLP GEMMs 4Bshf, QKᵀ and attention over V 4Bs²h. With f = 4h this is
// 24Bsh² + 4Bs²h, and the formulas below are Eq. 7, Eq. 8 and Narayanan's Eq. 3 exactly. For today's
// layers, QKV is 2Bsh·(a + 2g)·d and the projection 2Bs·a·d·h, SwiGLU's MLP 6Bshf and core attention
// 4Bs²·a·d: three times this plus the logits is Megatron-LM's num_floating_point_operations
// (training.py, the dense form with group_query_attention and swiglu: 12·B·s·L·h²·((1 + g/a + s/h)·a·d/h +
// 3f/(2h) + V/(2Lh))), the "Model TFLOP/s/GPU" NeMo publishes; the causal mask is not halved there.
double layer_forward_flops(const Terms& t) {
    return 8.0 * t.B * t.s * t.h * t.h * t.projections + 4.0 * t.B * t.s * t.h * t.f * t.mlp +
           4.0 * t.B * t.s * t.s * t.h * t.attention;
}
double attention_forward(const Terms& t) {
    return 4.0 * t.B * t.s * t.s * t.h * t.attention;
}
double logits_training(const Terms& t) {
    return 6.0 * t.B * t.s * t.h * t.V;
}  // forward + backward

// Models with MoE MLPs, multi-latent attention or MTP modules: Megatron-LM's MoE-aware
// num_floating_point_operations (megatron/training/training.py, transformer_flops, as of 2025), per
// token 3 × 2 × (MLP + attention projections + MTP norms/projection + logits) plus core attention:
//   MLP: h·F·(f·L_dense + (f_moe·k + f_shared)·L_moe), F = 3 gated, else 2; MTP layers count as the
//        last layer's kind;
//   MLA (per layer of L + mtp): q_term + r_kv·(h + a·(d_qk + d_v) + 1) + h·d_rope + a·d_v·h, q_term
//        r_q·(h + a·(d_qk + d_rope) + 1) (or h·a·(d_qk + d_rope)), core attention
//        s·a·(d_qk + d_rope)/2 + s·a·d_v/2 (Megatron halves it for the causal mask);
//   GQA/MHA: the dense layer's terms above (not halved), over L + mtp layers, so that a dense model's
//        attention is counted the same with or without experts;
//   MTP: 3h + 2h² per module; logits h·V·(1 + mtp).
struct MoeAwareFlops {
    double layers;     // everything but the logits, forward + backward (3 ×)
    double attention;  // of which one forward of the core attention (for the recompute conventions)
    double forward;    // one forward of all layers (for full recompute)
    double logits;
};

MoeAwareFlops moe_aware_flops(const config::Scenario& sc) {
    const config::ModelConfig& m = sc.model;
    const double tokens =
        static_cast<double>(sc.training.global_batch_size) * static_cast<double>(m.seq_length);
    const auto h = static_cast<double>(m.hidden_size);
    const auto a = static_cast<double>(m.num_attention_heads);
    const auto s = static_cast<double>(m.seq_length);
    const auto mtp = static_cast<double>(m.mtp_num_layers);
    const double gated = m.swiglu ? 3.0 : 2.0;
    double moe_layers = 0.0;
    double dense_layers = static_cast<double>(m.num_layers);
    double routed_width = 0.0;
    if (m.moe) {
        moe_layers = static_cast<double>(m.moe->num_moe_layers());
        dense_layers -= moe_layers;
        routed_width = static_cast<double>(m.moe->ffn_hidden_size * m.moe->router_topk +
                                           m.moe->shared_expert_intermediate_size);
        (m.moe->layer_is_moe.back() ? moe_layers : dense_layers) += mtp;
    } else {
        dense_layers += mtp;
    }
    const double layers = static_cast<double>(m.num_layers) + mtp;
    // Forward FLOPs per token (2 per multiply-add) of each part.
    const double mlp =
        2.0 * h * gated * (static_cast<double>(m.ffn_hidden_size) * dense_layers + routed_width * moe_layers);
    double projections = 0.0;
    double core = 0.0;
    if (m.mla) {
        const config::MlaConfig& x = *m.mla;
        const double qk = static_cast<double>(x.qk_head_dim + x.qk_pos_emb_head_dim);
        const double v = static_cast<double>(x.v_head_dim);
        const double q_term =
            x.q_lora_rank ? static_cast<double>(*x.q_lora_rank) * (h + a * qk + 1.0) : h * a * qk;
        projections =
            2.0 * layers *
            (q_term +
             static_cast<double>(x.kv_lora_rank) * (h + a * (static_cast<double>(x.qk_head_dim) + v) + 1.0) +
             h * static_cast<double>(x.qk_pos_emb_head_dim) + a * v * h);
        core = 2.0 * layers * (s * a * qk / 2.0 + s * a * v / 2.0);
    } else {
        const Terms t = terms_of(sc);
        projections = 8.0 * h * h * t.projections * layers;
        core = 4.0 * s * h * t.attention * layers;
    }
    const double mtp_extra = 2.0 * mtp * (3.0 * h + 2.0 * h * h);
    const double forward = tokens * (mlp + projections + core + mtp_extra);
    return {3.0 * forward, tokens * core, forward,
            3.0 * tokens * 2.0 * h * static_cast<double>(m.padded_vocab_size) * (1.0 + mtp)};
}

bool uses_moe_aware_formula(const config::Scenario& sc) {
    return sc.model.moe || sc.model.mla || sc.model.mtp_num_layers > 0;
}

}  // namespace

Flops model_flops_per_iteration(const config::Scenario& sc) {
    if (uses_moe_aware_formula(sc)) {
        const MoeAwareFlops f = moe_aware_flops(sc);
        return Flops{f.layers + f.logits};
    }
    // Eq. 7: 72·B·L·s·h²·(1 + s/(6h) + V/(12hL)) = 3 × L layer forwards + the logits' forward and backward.
    const Terms t = terms_of(sc);
    return Flops{3.0 * t.L * layer_forward_flops(t) + logits_training(t)};
}

Flops hardware_flops_per_iteration(const config::Scenario& sc) {
    if (uses_moe_aware_formula(sc)) {
        // The same conventions as below on the MoE-aware terms: selective recompute repeats the core
        // attention's forward, full recompute every layer's forward.
        const MoeAwareFlops f = moe_aware_flops(sc);
        switch (sc.training.recompute_granularity) {
        case config::RecomputeGranularity::Selective:
            return Flops{f.layers + f.logits + f.attention};
        case config::RecomputeGranularity::Full:
            return Flops{f.layers + f.logits + f.forward};
        default:
            return Flops{f.layers + f.logits};
        }
    }
    const Terms t = terms_of(sc);
    switch (sc.training.recompute_granularity) {
    case config::RecomputeGranularity::Selective:
        // Eq. 8 as printed: s/(3h) in place of s/(6h), i.e. three more attention forwards per layer.
        return Flops{model_flops_per_iteration(sc).value + 3.0 * t.L * attention_forward(t)};
    case config::RecomputeGranularity::Full:
        // Narayanan Eq. 3: 96·B·s·l·h²·(1 + s/(6h) + V/(16lh)), the layers' forward counted twice.
        return Flops{4.0 * t.L * layer_forward_flops(t) + logits_training(t)};
    default:
        return model_flops_per_iteration(sc);
    }
}

bool hardware_flops_formula_applies(const config::Scenario& sc) {
    const config::TrainingConfig& t = sc.training;
    if (t.recompute_granularity == config::RecomputeGranularity::Overlapped) {
        return false;  // the scheduler's plan decides, layer by layer
    }
    if (t.recompute_granularity == config::RecomputeGranularity::Selective &&
        !(t.selective_modules() == config::RecomputeModules{})) {
        return false;  // Eq. 8 counts the core attention alone; recompute_modules re-run other forwards
    }
    if (t.recompute_granularity != config::RecomputeGranularity::Full) {
        return true;
    }
    return t.recompute_method != config::RecomputeMethod::Block &&
           !t.num_microbatches_with_partial_activation_checkpoints;
}

const char* model_flops_convention(const config::Scenario& sc) {
    if (uses_moe_aware_formula(sc)) {
        return "Megatron-LM num_floating_point_operations, MoE-aware (routed top-k and shared experts, "
               "MLA with its core attention halved, MTP modules; GQA core attention not halved)";
    }
    const config::ModelConfig& m = sc.model;
    const bool gpt3_layer = m.query_groups() == m.num_attention_heads &&
                            m.head_dim() * m.num_attention_heads == m.hidden_size && !m.swiglu;
    return gpt3_layer ? "Korthikanti Eq. 7"
                      : "Megatron-LM num_floating_point_operations (GQA, gated MLP; causal mask not halved)";
}

const char* hardware_flops_convention(const config::Scenario& sc) {
    if (!hardware_flops_formula_applies(sc)) {
        return sc.training.recompute_granularity == config::RecomputeGranularity::Selective
                   ? "model FLOPs plus the GEMM FLOPs of the recomputed modules the simulation executed"
                   : "GEMM FLOPs the simulation executed, recompute included";
    }
    if (uses_moe_aware_formula(sc)) {
        return "MoE-aware model FLOPs plus the recomputed forwards (core attention for selective, every "
               "layer "
               "for full)";
    }
    switch (sc.training.recompute_granularity) {
    case config::RecomputeGranularity::Selective:
        return "Korthikanti Eq. 8 as printed (selective recompute)";
    case config::RecomputeGranularity::Full:
        return "Narayanan Eq. 3 (full recompute: forward counted twice)";
    default:
        return "Korthikanti Eq. 7 (no recompute: hardware FLOPs = model FLOPs)";
    }
}

}  // namespace trainsim::workload
