// Mixture-of-experts and multi-latent attention models (issue 16, step 1): every MoE preset's total and
// active parameter count against the published count, model FLOPs against Megatron-LM's MoE-aware
// num_floating_point_operations written out independently, the MoE keys' defaults and patterns, and the
// expert-parallel rules (one line naming the key and the rule).
#include <gtest/gtest.h>

#include <string>

#include "sim/config/model_presets.h"
#include "sim/core/input_error.h"
#include "sim/workload/model_flops.h"
#include "sim/workload/model_parameters.h"
#include "sim/workload/parameter_count.h"

namespace trainsim::workload {
namespace {

config::Scenario scenario(const std::string& model, const std::string& parallel = "",
                          const std::string& hardware = "a100-80gb-selene") {
    // `parallel` adds keys after the pipeline size; it may give its own tensor_model_parallel_size.
    const std::string tp = parallel.find("\"tensor_model_parallel_size\"") == std::string::npos
                               ? R"("tensor_model_parallel_size": 1, )"
                               : "";
    const std::string text = R"({"model": {)" + model + R"(},
        "parallelism": {)" + tp +
                             R"("pipeline_model_parallel_size": 1)" + parallel + R"(},
        "training": {"micro_batch_size": 1, "global_batch_size": 8},
        "hardware": {"profile": ")" +
                             hardware + R"("}})";
    return config::parse_scenario(text, "test");
}

config::Scenario preset(const std::string& name, const std::string& parallel = "") {
    return scenario(R"("preset": ")" + name + "\"", parallel);
}

// A small MoE model whose counts are checked by hand: L 4, h 64, 4 heads (d 16), ffn 128, 8 experts
// of 32 (top-2), a shared expert of 48, SwiGLU, RMSNorm, RoPE, untied, no biases, V 256.
const std::string kSmall = R"("num_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
    "seq_length": 32, "padded_vocab_size": 256, "ffn_hidden_size": 128, "swiglu": true,
    "normalization": "RMSNorm", "position_embedding_type": "rope",
    "untie_embeddings_and_output_weights": true, "add_bias_linear": false,
    "num_experts": 8, "moe_router_topk": 2, "moe_ffn_hidden_size": 32,
    "moe_shared_expert_intermediate_size": 48)";

TEST(MoeParameters, SmallModelByHand) {
    const config::Scenario sc = scenario(kSmall + R"(, "moe_layer_freq": [0, 1, 1, 1])");
    const std::int64_t h = 64;
    const std::int64_t attention = 4 * h * h;    // Q, K, V (4·16 = 64 wide) and the projection
    const std::int64_t norms = 2 * h;            // two RMSNorm weights a layer
    const std::int64_t dense_mlp = 3 * h * 128;  // gated fc1 (2·128) and fc2
    const std::int64_t expert = 3 * h * 32;
    const std::int64_t shared = 3 * h * 48;
    const std::int64_t router = h * 8;
    const std::int64_t outside = 2 * 256 * h + h;  // untied embedding and output, final norm
    const std::int64_t dense_layer = attention + norms + dense_mlp;
    const std::int64_t moe_base = attention + norms + router + shared;
    const ModelParameters p = model_parameters(sc.model);
    EXPECT_EQ(p.total, outside + dense_layer + 3 * (moe_base + 8 * expert));
    EXPECT_EQ(p.active, outside + dense_layer + 3 * (moe_base + 2 * expert));
    EXPECT_EQ(p.mtp, 0);
}

TEST(MoeParameters, PresetsMatchThePublishedCounts) {
    struct Case {
        const char* preset;
        double total, active;  // published, in parameters
        double tolerance;      // relative: half the last printed digit
    };
    // Mixtral 8x7B 46.7B/12.9B (arXiv 2401.04088 Table 1 text: "47B", "13B active"; the model card
    // 46.7B and 12.9B); Mixtral 8x22B 141B/39B (release note); DeepSeek-V3 671B/37B (arXiv 2412.19437
    // §1, the main model without its 14B MTP module); Qwen3-30B-A3B 30.5B/3.3B and Qwen3-235B-A22B
    // 235B/22B (arXiv 2505.09388 Table 2 and the model cards).
    const Case cases[] = {
        {"mixtral-8x7b", 46.7e9, 12.9e9, 0.05 / 12.9}, {"mixtral-8x22b", 141e9, 39e9, 0.5 / 39},
        {"deepseek-v3", 671e9, 37e9, 1.0 / 37},        {"qwen3-30b-a3b", 30.5e9, 3.3e9, 0.06 / 3.3},
        {"qwen3-235b-a22b", 235e9, 22e9, 0.5 / 22},
    };
    for (const Case& c : cases) {
        const ModelParameters p = model_parameters(preset(c.preset).model);
        EXPECT_NEAR(static_cast<double>(p.total) / c.total, 1.0, c.tolerance)
            << c.preset << " total " << p.total;
        EXPECT_NEAR(static_cast<double>(p.active) / c.active, 1.0, c.tolerance)
            << c.preset << " active " << p.active;
    }
}

TEST(MoeParameters, DeepSeekV3ExactlyAndItsMtpModule) {
    const config::Scenario sc = preset("deepseek-v3");
    ASSERT_TRUE(sc.model.moe && sc.model.mla);
    EXPECT_EQ(sc.model.moe->num_moe_layers(), 58);
    EXPECT_FALSE(sc.model.moe->layer_is_moe[2]);
    EXPECT_TRUE(sc.model.moe->layer_is_moe[3]);
    // By hand from the report's shapes: MLA 7168·1536 + 1536 + 1536·128·192 + 7168·576 + 512 + 512·128·256
    // + 128·128·7168 = 187,107,328; dense MLP 3·7168·18432; MoE MLP router 7168·256 and 257 experts of
    // 3·7168·2048 (9 active); norms 2·7168; embedding, output 129280·7168 each; final norm 7168.
    const std::int64_t mla = 187'107'328;
    const std::int64_t expert = 3LL * 7168 * 2048;
    const std::int64_t dense = mla + 2 * 7168 + 3LL * 7168 * 18432;
    const std::int64_t moe_base = mla + 2 * 7168 + 7168 * 256;
    const std::int64_t outside = 2LL * 129280 * 7168 + 7168;
    const ModelParameters p = model_parameters(sc.model);
    EXPECT_EQ(attention_parameters(sc.model), mla);
    EXPECT_EQ(p.total, outside + 3 * dense + 58 * (moe_base + 257 * expert));
    EXPECT_EQ(p.active, outside + 3 * dense + 58 * (moe_base + 9 * expert));
    // The MTP module: two norms, the 2h → h projection, one MoE layer and its final norm, 11.6 B. The
    // released checkpoint (685 B "including 14B of the MTP module", the HF model card) also stores its
    // own copies of the embedding and output head (0.93 B each), which Megatron-Core shares.
    EXPECT_EQ(p.mtp, 3 * 7168 + 2LL * 7168 * 7168 + moe_base + 257 * expert);
    EXPECT_NEAR(static_cast<double>(p.total + p.mtp + 2LL * 129280 * 7168) / 685e9, 1.0,
                1.0 / 685);  // 684.5 B here
}

// Megatron-LM's num_floating_point_operations for an MoE model (megatron/training/training.py,
// transformer_flops, 2025), transcribed term by term, for GQA and for MLA.
double megatron_moe_flops(const config::Scenario& sc) {
    const auto& m = sc.model;
    const double B = static_cast<double>(sc.training.global_batch_size);
    const double s = static_cast<double>(m.seq_length), h = static_cast<double>(m.hidden_size);
    const double a = static_cast<double>(m.num_attention_heads), V = static_cast<double>(m.padded_vocab_size);
    const double mtp = static_cast<double>(m.mtp_num_layers);
    const double L = static_cast<double>(m.num_layers) + mtp;
    double moe_layers = static_cast<double>(m.moe->num_moe_layers());
    double dense_layers = static_cast<double>(m.num_layers) - moe_layers;
    (m.moe->layer_is_moe.back() ? moe_layers : dense_layers) += mtp;
    const double ffn_factor = m.swiglu ? 3.0 : 2.0;
    double attention = 0.0;
    if (m.mla) {
        const auto& x = *m.mla;
        const double qk = static_cast<double>(x.qk_head_dim),
                     rope = static_cast<double>(x.qk_pos_emb_head_dim);
        const double v = static_cast<double>(x.v_head_dim), kv = static_cast<double>(x.kv_lora_rank);
        const double q_term = x.q_lora_rank ? static_cast<double>(*x.q_lora_rank) * (h + a * (qk + rope) + 1)
                                            : h * a * (qk + rope);
        attention = 3 * 2 * L *
                    (q_term + kv * (h + a * (qk + v) + 1) + h * rope + a * v * h + s * (a * (qk + rope)) / 2 +
                     s * a * v / 2);
    } else {
        // trainsim's dense convention (tests/dense_model_test.cc): causal mask not halved.
        const double g = static_cast<double>(m.query_groups()), d = static_cast<double>(m.head_dim());
        attention = 12.0 * L * h * h * (1.0 + g / a + s / h) * (a * d / h);
    }
    const double f_moe = static_cast<double>(m.moe->ffn_hidden_size);
    const double f_shared = static_cast<double>(m.moe->shared_expert_intermediate_size);
    const double k = static_cast<double>(m.moe->router_topk);
    return B * s *
           (3 * 2 * h *
                (static_cast<double>(m.ffn_hidden_size) * ffn_factor * dense_layers +
                 f_moe * k * ffn_factor * moe_layers + f_shared * ffn_factor * moe_layers) +
            attention + 3 * 2 * mtp * (3 * h + 2 * h * h) + 3 * 2 * h * V * (mtp + 1));
}

TEST(MoeFlops, ModelFlopsAreMegatronsMoeAwareFormulaForEveryMoePreset) {
    for (const char* name :
         {"mixtral-8x7b", "mixtral-8x22b", "deepseek-v3", "qwen3-30b-a3b", "qwen3-235b-a22b"}) {
        const config::Scenario sc = preset(name);
        EXPECT_NEAR(model_flops_per_iteration(sc).value / megatron_moe_flops(sc), 1.0, 1e-12) << name;
    }
    const config::Scenario small = scenario(kSmall + R"(, "moe_layer_freq": 2, "mtp_num_layers": 2)");
    EXPECT_NEAR(model_flops_per_iteration(small).value / megatron_moe_flops(small), 1.0, 1e-12);
}

TEST(MoeFlops, DeepSeekV3PerTokenByHand) {
    // 6 × active non-embedding GEMM weights per token is the usual shorthand; Megatron's count differs
    // only by core attention, the MLA norms' "+1" terms, the router (not counted) and the MTP module.
    // Per token and forward+backward at s = 4096, written out: MLA projections 6·61+1 layers, core
    // attention 6·62·4096·128·(192 + 128)/2, MLPs, MTP 6·(3h + 2h²), logits 6·h·V·2.
    const config::Scenario sc = preset("deepseek-v3");
    const double tokens = 8.0 * 4096;
    const double h = 7168;
    const double mla = 1536.0 * (h + 128 * 192 + 1) + 512.0 * (h + 128 * 256 + 1) + h * 64 + 128.0 * 128 * h;
    const double core = 4096.0 * 128 * 192 / 2 + 4096.0 * 128 * 128 / 2;
    const double mlp = 3 * h * (18432.0 * 3 + (2048.0 * 8 + 2048) * 59);
    const double expected = 6 * (62 * (mla + core) + mlp + (3 * h + 2 * h * h) + h * 129280 * 2);
    EXPECT_NEAR(model_flops_per_iteration(sc).value / tokens / expected, 1.0, 1e-12);
}

TEST(MoeKeys, DefaultsFollowMegatron) {
    const config::Scenario sc = scenario(R"("num_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
        "seq_length": 32, "padded_vocab_size": 256, "num_experts": 4)");
    ASSERT_TRUE(sc.model.moe);
    const config::MoeConfig& moe = *sc.model.moe;
    EXPECT_EQ(moe.router_topk, 2);
    EXPECT_EQ(moe.ffn_hidden_size, 4 * 64);  // the model's ffn_hidden_size
    EXPECT_EQ(moe.shared_expert_intermediate_size, 0);
    EXPECT_EQ(moe.num_moe_layers(), 4);  // moe_layer_freq 1
    EXPECT_EQ(moe.token_dispatcher, config::MoeTokenDispatcher::AllGather);
    EXPECT_FALSE(moe.expert_capacity_factor);
    EXPECT_FALSE(moe.grouped_gemm);
    EXPECT_EQ(sc.parallelism.expert_model_parallel_size, 1);
    EXPECT_EQ(sc.parallelism.expert_tensor_parallel(), 1);
    EXPECT_EQ(sc.parallelism.expert_data_parallel_size(), 1);
    const config::Scenario every_other = scenario(kSmall + R"(, "moe_layer_freq": 2)");
    EXPECT_EQ(every_other.model.moe->layer_is_moe, (std::vector<bool>{true, false, true, false}));
}

TEST(MoeKeys, KeysBesideAPresetOverrideIt) {
    // DeepSeek-V3 cut to 8 layers keeps its three dense ones; a null q_lora_rank is a full-rank query.
    const config::Scenario sc = scenario(R"("preset": "deepseek-v3", "num_layers": 8, "q_lora_rank": null,
        "moe_router_topk": 4, "moe_token_dispatcher_type": "alltoall", "mtp_num_layers": 0)");
    EXPECT_EQ(sc.model.moe->layer_is_moe,
              (std::vector<bool>{false, false, false, true, true, true, true, true}));
    EXPECT_EQ(sc.model.moe->router_topk, 4);
    EXPECT_EQ(sc.model.moe->num_experts, 256);
    EXPECT_EQ(sc.model.moe->token_dispatcher, config::MoeTokenDispatcher::AllToAll);
    EXPECT_FALSE(sc.model.mla->q_lora_rank);
    EXPECT_EQ(sc.model.mla->kv_lora_rank, 512);
    EXPECT_EQ(sc.model.mtp_num_layers, 0);
    // Full-rank queries: h·a·(128 + 64) in place of the 1536-rank pair.
    EXPECT_EQ(attention_parameters(sc.model),
              7168LL * 128 * 192 + 7168LL * 576 + 512 + 512LL * 128 * 256 + 128LL * 128 * 7168);
}

TEST(MoeKeys, NullExpertsMakeAnMoePresetDense) {
    const config::Scenario sc = scenario(R"("preset": "mixtral-8x7b", "num_experts": null)");
    EXPECT_FALSE(sc.model.moe);
    // Mixtral's layer with one dense MLP of 14336: the active count without the router.
    EXPECT_EQ(model_parameters(sc.model).total,
              model_parameters(preset("mixtral-8x7b").model).active - 32 * (14336LL * 4096 * 3 + 4096 * 8));
}

TEST(MoeKeys, ExpertDataParallelIsTheRestOfTheStage) {
    // t 2, c 1, d 8: 16 ranks a stage; ETP 1 × EP 8 leaves expert DP 2 (Megatron-Core's RankGenerator).
    const config::Scenario sc =
        scenario(kSmall, R"(, "tensor_model_parallel_size": 2, "data_parallel_size": 8,
        "sequence_parallel": true, "expert_model_parallel_size": 8, "expert_tensor_parallel_size": 1)");
    EXPECT_EQ(sc.parallelism.expert_data_parallel_size(), 2);
}

void expect_error(const std::string& model, const std::string& parallel, const std::string& part) {
    try {
        (void)scenario(model, parallel);
        ADD_FAILURE() << "no InputError for " << part;
    } catch (const InputError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find(part), std::string::npos) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
}

TEST(MoeKeys, RulesNameTheKey) {
    expect_error(kSmall, R"(, "data_parallel_size": 2, "expert_model_parallel_size": 3)",
                 "parallelism.expert_model_parallel_size=3 must divide model.num_experts=8");
    expect_error(kSmall, R"(, "data_parallel_size": 2, "expert_model_parallel_size": 4)",
                 "must divide tensor × context × data parallel = 2");
    expect_error(
        kSmall,
        R"(, "tensor_model_parallel_size": 2, "data_parallel_size": 2, "expert_model_parallel_size": 2)",
        "requires parallelism.sequence_parallel=true");
    expect_error(kSmall, R"(, "tensor_model_parallel_size": 2, "expert_tensor_parallel_size": 3)",
                 "parallelism.expert_tensor_parallel_size=3");
    expect_error(kSmall + R"(, "moe_layer_freq": [0, 1])", "",
                 "model.moe_layer_freq: the list has 2 entries");
    expect_error(kSmall + R"(, "moe_layer_freq": [0, 1, 2, 1])", "",
                 "model.moe_layer_freq[2]: expected 0 (dense) or 1");
    expect_error(kSmall + R"(, "moe_layer_freq": 0)", "",
                 "model.moe_layer_freq: expected a positive integer");
    expect_error(kSmall + R"(, "moe_expert_capacity_factor": 0)", "",
                 "model.moe_expert_capacity_factor: expected a number > 0");
    expect_error(kSmall + R"(, "moe_token_dispatcher_type": "flex")", "", "model.moe_token_dispatcher_type");
    expect_error(kSmall + R"(, "mtp_num_layers": -1)", "",
                 "model.mtp_num_layers: expected a non-negative integer");
    const std::string dense = R"("num_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
        "seq_length": 32, "padded_vocab_size": 256)";
    expect_error(dense + R"(, "num_experts": 8, "moe_router_topk": 9)", "",
                 "model.moe_router_topk=9 must not exceed model.num_experts=8");
    expect_error(dense + R"(, "moe_router_topk": 2)", "",
                 "model.moe_router_topk: applies only to a mixture-of-experts model");
    expect_error(dense, R"(, "data_parallel_size": 2, "expert_model_parallel_size": 2)",
                 "parallelism.expert_model_parallel_size=2 requires a mixture-of-experts model");
    expect_error(dense + R"(, "kv_lora_rank": 32)", "",
                 "model.kv_lora_rank: applies only with model.multi_latent_attention=true");
    expect_error(dense + R"(, "multi_latent_attention": true, "num_query_groups": 2)", "",
                 "model.num_query_groups: not allowed with model.multi_latent_attention=true");
}

void expect_refused(const config::Scenario& sc, const std::string& message) {
    try {
        (void)layer_shape_of(sc);
        ADD_FAILURE() << "no InputError for " << message;
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
}

TEST(MoeKeys, SimulationRefusesWhatItDoesNotModel) {
    // moe_layer.h models both token dispatchers at any ETP: anything else is refused with the key, not
    // simulated as if it were modelled. Megatron's default dispatcher is allgather
    // (tests/moe_allgather_dispatcher_test.cc).
    const std::string a2a = R"(, "moe_token_dispatcher_type": "alltoall")";
    EXPECT_EQ(layer_shape_of(preset("mixtral-8x7b")).moe_dispatcher, config::MoeTokenDispatcher::AllGather);
    EXPECT_EQ(layer_shape_of(scenario(kSmall + a2a + R"(, "moe_layer_freq": 1)")).shared_ffn, 48);
    const std::string routed = R"("num_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
        "seq_length": 32, "padded_vocab_size": 256, "ffn_hidden_size": 128, "swiglu": true,
        "add_bias_linear": false, "num_experts": 8, "moe_ffn_hidden_size": 32)" +
                               a2a;
    // A mix of dense and MoE layers is simulated layer by layer (tests/moe_layer_freq_test.cc).
    EXPECT_EQ(layer_shape_of(scenario(routed + R"(, "moe_layer_freq": [0, 1, 1, 1])"), 0).experts, 0);
    EXPECT_DOUBLE_EQ(
        layer_shape_of(scenario(routed + R"(, "moe_expert_capacity_factor": 1.0)")).capacity_factor,
        1.0);  // token dropping is modelled (moe_layer_test.cc, MoeCapacity)
    // Expert TP defaults to t, as in Megatron-LM (arguments.py), and is simulated
    // (tests/moe_expert_tensor_parallel_test.cc).
    EXPECT_EQ(
        layer_shape_of(scenario(routed, R"(, "tensor_model_parallel_size": 2, "sequence_parallel": true)"))
            .etp,
        2);
    EXPECT_EQ(layer_shape_of(scenario(routed)).experts, 8);
    std::string biased = routed;
    biased.replace(biased.find(R"("add_bias_linear": false)"), 24, R"("add_bias_linear": true)");
    expect_refused(scenario(biased), "model.add_bias_linear: experts with biases is not simulated yet");
}

}  // namespace
}  // namespace trainsim::workload
