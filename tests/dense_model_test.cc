// Today's dense layers (DESIGN.md §8 model keys): every preset's parameter count against the published
// count, model FLOPs against Megatron-LM's num_floating_point_operations written out independently, the
// op list of a Llama layer (QKV width with groups, the gated MLP, RMSNorm, RoPE) and its activation bytes
// against a hand derivation, and the GPT-3 layer unchanged by the new keys' defaults.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>

#include "sim/config/model_presets.h"
#include "sim/core/input_error.h"
#include "sim/workload/model_flops.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_ops.h"
#include "sim/workload/transformer_layer.h"

namespace trainsim::workload {
namespace {

using config::RecomputeGranularity;

config::Scenario preset_scenario(const std::string& preset, const std::string& extra = "") {
    const std::string text = R"({"model": {"preset": ")" + preset + "\"" + extra + R"(},
        "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1},
        "training": {"micro_batch_size": 1, "global_batch_size": 8},
        "hardware": {"profile": "a100-80gb-selene"}})";
    return config::parse_scenario(text, "test");
}

std::int64_t total_parameters(const config::Scenario& sc) {
    return stage_parameters(sc, 0).total();  // t = p = 1: one rank holds the whole model
}

const Op* find(const OpList& ops, const std::string& name) {
    for (const Op& op : ops) {
        if (op.name == name) {
            return &op;
        }
    }
    return nullptr;
}

// Published totals: Meta's model cards (Llama 2 and 3 on Hugging Face, the exact count of the released
// weights) for Llama.
TEST(DensePresets, LlamaParameterCountsMatchTheReleasedWeightsExactly) {
    EXPECT_EQ(total_parameters(preset_scenario("llama3-8b")), 8'030'261'248);
    EXPECT_EQ(total_parameters(preset_scenario("llama3-70b")), 70'553'706'496);
    EXPECT_EQ(total_parameters(preset_scenario("llama3.1-405b")), 405'853'388'800);
    EXPECT_EQ(total_parameters(preset_scenario("llama2-7b")), 6'738'415'616);
    EXPECT_EQ(total_parameters(preset_scenario("llama2-13b")), 13'015'864'320);
    EXPECT_EQ(total_parameters(preset_scenario("llama2-70b")), 68'976'648'192);
}

// Papers that print rounded counts: within the rounding of the printed figure.
TEST(DensePresets, OtherPresetsMatchTheirPapersRoundedCounts) {
    struct Case {
        const char* preset;
        double published;
        double tolerance;  // half the last printed digit, relative
    };
    // Nemotron-4 15B: "3.2 billion embedding and 12.5 billion non-embedding parameters" (arXiv 2402.16819
    // §2); 340B: 9.4 B embedding and 331.6 B non-embedding (arXiv 2406.11704 Table 1 text). GPT-3 5B,
    // 20B, 175B and Nemotron-3 8B, 22B: the names NeMo gives them. By hand, Nemotron-3 8B is
    // 32·(4h² + 2h·4h) + 2·256000·h = 8.54 B at h = 4096 (the name rounds it down), 22B 21.27 B.
    const Case cases[] = {
        {"nemotron4-15b", 15.7e9, 0.01}, {"nemotron4-340b", 341.0e9, 0.5e9 / 341.0e9},
        {"gpt3-5b", 5e9, 0.1},           {"gpt3-20b", 20e9, 0.05},
        {"gpt3-175b", 175e9, 0.01},      {"nemotron3-8b", 8e9, 0.1},
        {"nemotron3-22b", 22e9, 0.05},
    };
    for (const Case& c : cases) {
        const auto p = static_cast<double>(total_parameters(preset_scenario(c.preset)));
        EXPECT_NEAR(p / c.published, 1.0, c.tolerance) << c.preset << ": " << p;
    }
    // The Nemotron-4 split: untied input and output embeddings, and 12.5 B / 331.6 B non-embedding.
    for (const auto& [name, non_embedding] : {std::pair{"nemotron4-15b", 12.5}, {"nemotron4-340b", 331.6}}) {
        const config::Scenario sc = preset_scenario(name);
        const std::int64_t embedding = stage_parameters(sc, 0).embedding;
        EXPECT_EQ(embedding, 2 * 256000 * sc.model.hidden_size) << name;
        EXPECT_NEAR(static_cast<double>(total_parameters(sc) - embedding) / 1e9, non_embedding, 0.05) << name;
    }
    // Nemotron-3 exactly, from NeMo's config: L·(4h² + 2·h·f) + 2·256000·h plus the two LayerNorms
    // (weight and bias, 4h a layer) and the final one (2h); no linear biases.
    for (const auto& [name, L, h] :
         {std::tuple{"nemotron3-8b", 32LL, 4096LL}, {"nemotron3-22b", 40LL, 6144LL}}) {
        const config::Scenario sc = preset_scenario(name);
        EXPECT_EQ(sc.model.query_groups(), sc.model.num_attention_heads) << name;
        EXPECT_EQ(total_parameters(sc), L * (4 * h * h + 2 * h * 4 * h + 4 * h) + 2 * h + 2 * 256000 * h)
            << name;
    }
}

// Megatron-LM training.py num_floating_point_operations (dense, GQA, SwiGLU), written out here apart
// from model_flops.cc: 12·B·s·L·h²·((1 + g/a + s/h)·a·d/h + (3/2)·f/h + V/(2Lh)).
double megatron_flops(const config::Scenario& sc) {
    const auto& m = sc.model;
    const double B = static_cast<double>(sc.training.global_batch_size);
    const double s = static_cast<double>(m.seq_length), L = static_cast<double>(m.num_layers);
    const double h = static_cast<double>(m.hidden_size), a = static_cast<double>(m.num_attention_heads);
    const double g = static_cast<double>(m.query_groups()), d = static_cast<double>(m.head_dim());
    const double f = static_cast<double>(m.ffn_hidden_size), V = static_cast<double>(m.padded_vocab_size);
    const double gated = m.swiglu ? 1.5 : 1.0;
    return 12.0 * B * s * L * h * h *
           ((1.0 + g / a + s / h) * (a * d / h) + gated * f / h + V / (2.0 * L * h));
}

TEST(DenseFlops, ModelFlopsAreMegatronsFormulaForEveryPreset) {
    for (const std::string& name : config::model_preset_names()) {
        const config::Scenario sc = preset_scenario(name);
        if (sc.model.moe || sc.model.mla) {
            continue;  // the MoE-aware form: tests/moe_model_test.cc
        }
        EXPECT_NEAR(model_flops_per_iteration(sc).value / megatron_flops(sc), 1.0, 1e-12) << name;
    }
}

TEST(DenseFlops, LlamaLayerGemmsSumToTheFormulaPerToken) {
    // One Llama-3 8B layer's forward GEMMs on one rank, b = 1: QKV 2·s·h·(a+2g)·d, projection 2·s·a·d·h,
    // SwiGLU MLP 6·s·h·f, attention 4·s²·a·d.
    const config::Scenario sc = preset_scenario("llama3-8b");
    const LayerShape x = layer_shape_of(sc);
    double total = 0;
    for (const Op& op : layer_forward(x, RecomputeGranularity::None)) {
        total += op.flops().value;
    }
    const double s = 8192, h = 4096, f = 14336, kv = 8 * 128;
    EXPECT_DOUBLE_EQ(total, 2 * s * h * (h + 2 * kv) + 2 * s * h * h + 6 * s * h * f + 4 * s * s * h);
    // Three times every layer plus the logits' forward and backward: Megatron's count.
    EXPECT_NEAR((3 * 32 * total + 6 * s * h * 128256) * 8 / megatron_flops(sc), 1.0, 1e-12);
}

TEST(DenseLayer, LlamaOpListHasGroupedQkvGatedMlpRmsNormAndRope) {
    config::Scenario sc = preset_scenario("llama3-70b");
    sc.parallelism.tensor_model_parallel_size = 8;
    sc.parallelism.sequence_parallel = true;
    const LayerShape x = layer_shape_of(sc);
    const OpList fwd = layer_forward(x, RecomputeGranularity::None);
    // QKV: (64 + 2·8)·128 / 8 = 1280 columns per rank; fc1: 2 · 28672 / 8 = 7168.
    ASSERT_NE(find(fwd, "qkv"), nullptr);
    EXPECT_EQ(find(fwd, "qkv")->gemm.n, 1280);
    EXPECT_EQ(find(fwd, "fc1")->gemm.n, 7168);
    EXPECT_EQ(find(fwd, "fc2")->gemm.k, 3584);
    EXPECT_EQ(find(fwd, "proj")->gemm.k, 1024);
    EXPECT_NE(find(fwd, "rmsnorm1"), nullptr);
    EXPECT_NE(find(fwd, "rmsnorm1.allgather"), nullptr);
    EXPECT_EQ(find(fwd, "ln1"), nullptr);
    EXPECT_EQ(find(fwd, "bias_gelu"), nullptr);
    // RoPE reads and writes Q (s·h/t) and K (s·g·d/t), 2 bytes each.
    const std::int64_t s = 8192, q = s * 8192 / 8, k = s * 8 * 128 / 8;
    ASSERT_NE(find(fwd, "rope"), nullptr);
    EXPECT_EQ(find(fwd, "rope")->bytes_moved.value, 2 * (q + k) * 2);
    // Transformer Engine's fused RoPE kernel, priced at its own measured factor (profile kind_factors.rope).
    EXPECT_EQ(find(fwd, "rope")->memory_kind, cost::MemoryBoundKind::Rope);
    // SwiGLU reads both halves of fc1's output and writes one: 3·s·f/t elements.
    EXPECT_EQ(find(fwd, "swiglu")->bytes_moved.value, 3 * s * 28672 / 8 * 2);
    const OpList bwd = layer_backward(x, RecomputeGranularity::None);
    EXPECT_NE(find(bwd, "rope.bwd"), nullptr);
    EXPECT_EQ(find(bwd, "rope.bwd")->memory_kind, cost::MemoryBoundKind::Rope);
    EXPECT_EQ(find(bwd, "qkv.bias_grad"), nullptr);  // no linear biases
    EXPECT_NE(find(bwd, "swiglu.bwd"), nullptr);
    // The embedding has no position add with RoPE; the output layer's norm is an RMSNorm.
    EXPECT_EQ(find(embedding_forward(x), "embedding.position_add"), nullptr);
    EXPECT_NE(find(output_forward(x), "final_rmsnorm"), nullptr);
}

// Activation bytes per layer, derived by hand from what each op keeps (2-byte activations, 1-byte
// masks), with kv = g·d the K and V width: norm1 input 2sbh, QKV input 2sbh, Q 2sbh, K and V 2sb·kv
// each, softmax output 2as²b, dropout mask as²b and output 2as²b, projection input 2sbh, attention
// dropout mask sbh, norm2 input 2sbh, fc1 input 2sbh, SwiGLU input 2·2sbf, fc2 input 2sbf, MLP dropout
// mask sbh: 14sbh + 4sb·kv + 6sbf + 5as²b. (With kv = h and GeLU, 4sbf in place of 6sbf, this is
// Korthikanti's 34sbh + 5as²b.)
TEST(DenseLayer, LlamaActivationBytesMatchTheHandDerivation) {
    const config::Scenario sc = preset_scenario("llama3-8b");
    const LayerShape x = layer_shape_of(sc);
    const std::int64_t s = 8192, b = 1, h = 4096, f = 14336, a = 32, kv = 8 * 128;
    EXPECT_EQ(layer_activation_bytes(x, RecomputeGranularity::None).value,
              14 * s * b * h + 4 * s * b * kv + 6 * s * b * f + 5 * a * s * s * b);
    EXPECT_EQ(layer_activation_bytes(x, RecomputeGranularity::Selective).value,
              14 * s * b * h + 4 * s * b * kv + 6 * s * b * f);
    EXPECT_EQ(layer_activation_bytes(x, RecomputeGranularity::Full).value, 2 * s * b * h);
}

TEST(DenseLayer, UntiedEmbeddingsHaveTheirOwnOutputWeightsAndNoGradientAllReduce) {
    config::Scenario sc = preset_scenario("llama3-8b");
    const std::int64_t word = 128256 * 4096;
    EXPECT_EQ(stage_parameters(sc, 0).embedding, 2 * word);  // p = 1: input and output on one rank
    sc.parallelism.pipeline_model_parallel_size = 2;
    EXPECT_EQ(stage_parameters(sc, 0).embedding, word);
    EXPECT_EQ(stage_parameters(sc, 1).embedding, word);
    EXPECT_FALSE(holds_tied_embedding_copy(sc, 0));
    EXPECT_FALSE(holds_tied_embedding_copy(sc, 1));
    sc.model.untie_embeddings_and_output_weights = false;
    EXPECT_TRUE(holds_tied_embedding_copy(sc, 1));
    sc.parallelism.pipeline_model_parallel_size = 1;
    EXPECT_EQ(stage_parameters(sc, 0).embedding, word);  // tied, p = 1: one copy
}

TEST(DenseLayer, SwigluDefaultsFfnTheWayMegatronDoes) {
    // Megatron arguments.py: int((4h·2/3) / 64)·64 when ffn_hidden_size is not given.
    const config::Scenario sc = config::parse_scenario(R"({"model": {"num_layers": 2, "hidden_size": 4096,
        "num_attention_heads": 32, "seq_length": 2048, "padded_vocab_size": 32000, "swiglu": true},
        "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1},
        "training": {"micro_batch_size": 1, "global_batch_size": 1}, "hardware": {"profile": "x"}})",
                                                       "t");
    EXPECT_EQ(sc.model.ffn_hidden_size, 10880);  // int(10922.67 / 64) · 64
}

TEST(DenseLayer, GptDefaultsLeaveTheLayerAsItWas) {
    const config::Scenario sc = preset_scenario("gpt3-175b");
    const LayerShape x = layer_shape_of(sc);
    EXPECT_EQ(x.groups(), 96);
    EXPECT_EQ(x.head_dim(), 128);
    const std::int64_t s = 2048, h = 12288, a = 96;
    EXPECT_EQ(layer_activation_bytes(x, RecomputeGranularity::None).value, 34 * s * h + 5 * a * s * s);
    EXPECT_EQ(layer_parameters_per_rank(x), 12 * h * h + 13 * h);  // Narayanan Eq. 2's per-layer terms
}

TEST(DenseConfig, BadGroupsAndUnknownSpellingsExitWithTheRule) {
    auto error_of = [](const std::string& extra, std::int64_t t = 1) {
        try {
            const std::string text = R"({"model": {"preset": "llama3-8b")" + extra + R"(},
                "parallelism": {"tensor_model_parallel_size": )" +
                                     std::to_string(t) + R"(, "pipeline_model_parallel_size": 1},
                "training": {"micro_batch_size": 1, "global_batch_size": 8},
                "hardware": {"profile": "a100-80gb-selene"}})";
            (void)config::parse_scenario(text, "t");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(error_of(R"(, "num_query_groups": 5)"),
              "model.num_query_groups=5 must divide model.num_attention_heads=32 (each group of query heads "
              "shares one key and value head)");
    EXPECT_EQ(error_of("", 16),
              "parallelism.tensor_model_parallel_size=16 must divide model.num_query_groups=8 (each rank "
              "holds whole key and value heads)");
    EXPECT_NE(error_of(R"(, "normalization": "rmsnorm")").find("model.normalization"), std::string::npos);
    EXPECT_NE(
        error_of(R"(, "position_embedding": "rope")").find("did you mean model.position_embedding_type"),
        std::string::npos);
}

}  // namespace
}  // namespace trainsim::workload
