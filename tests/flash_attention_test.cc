// FlashAttention (training.attention_backend flash/fused): the per-layer bytes it keeps against a hand
// derivation, its recompute behaviour, and its time from the profile's causal FlashAttention curves.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "sim/core/input_error.h"
#include "sim/cost/hardware_profile.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"
#include "tests/test_support.h"

namespace trainsim::workload {
namespace {

using config::RecomputeGranularity;

config::Scenario llama3_8b(const std::string& backend, std::int64_t t = 1) {
    const std::string text = R"({"model": {"preset": "llama3-8b"},
        "parallelism": {"tensor_model_parallel_size": )" +
                             std::to_string(t) + R"(, "pipeline_model_parallel_size": 1},
        "training": {"micro_batch_size": 1, "global_batch_size": 8, "attention_backend": ")" +
                             backend + R"("}, "hardware": {"profile": "a100-80gb-selene"}})";
    return config::parse_scenario(text, "test");
}

// Hand derivation, t = 1, b = 1: the unfused layer keeps 14sbh + 4sb·kv + 6sbf + 5as²b
// (dense_model_test). FlashAttention keeps the same Q, K and V and no s×s tensor (softmax output 2as²b,
// dropout mask as²b and output 2as²b are gone); it adds the fp32 log-sum-exp of every row, 4·a·s·b bytes.
TEST(FlashAttention, ActivationBytesDropTheScoresAndKeepTheLogSumExp) {
    const LayerShape x = layer_shape_of(llama3_8b("flash"));
    const std::int64_t s = 8192, b = 1, h = 4096, f = 14336, a = 32, kv = 8 * 128;
    const std::int64_t skeleton = 14 * s * b * h + 4 * s * b * kv + 6 * s * b * f;
    EXPECT_EQ(layer_activation_bytes(x, RecomputeGranularity::None).value, skeleton + 4 * a * s * b);
    // Selective recompute checkpoints the kernel's inputs only: the log-sum-exp goes, Q, K, V stay.
    EXPECT_EQ(layer_activation_bytes(x, RecomputeGranularity::Selective).value, skeleton);
    EXPECT_EQ(layer_activation_bytes(x, RecomputeGranularity::Full).value, 2 * s * b * h);
    // With t = 8 every per-head term and the MLP shrink by 8; with sequence parallelism off the norm,
    // dropout-mask and GEMM-input tensors stay whole (Korthikanti's 10sbh + 24sbh/t split).
    const LayerShape x8 = layer_shape_of(llama3_8b("fused", 8));
    EXPECT_EQ(layer_activation_bytes(x8, RecomputeGranularity::None).value,
              10 * s * b * h + (4 * s * b * h + 4 * s * b * kv + 6 * s * b * f + 4 * a * s * b) / 8);
}

TEST(FlashAttention, OneKernelEachWayWithTheGemmFlopsOfTheUnfusedAttention) {
    const config::Scenario sc = llama3_8b("flash");
    const LayerShape x = layer_shape_of(sc);
    const OpList fwd = layer_forward(x, RecomputeGranularity::None);
    const OpList bwd = layer_backward(x, RecomputeGranularity::Selective);
    int flash = 0;
    for (const Op& op : fwd) {
        EXPECT_EQ(op.name.find("attn.softmax"), std::string::npos);
        if (op.name == "attn.flash") {
            ++flash;
            EXPECT_DOUBLE_EQ(op.flops().value, 4.0 * 8192 * 8192 * 128 * 32);  // QKᵀ + attention over V
        }
    }
    EXPECT_EQ(flash, 1);
    // Selective recompute re-runs the forward kernel just before the backward kernel (2.5 × its FLOPs).
    std::vector<std::string> attention;
    for (const Op& op : bwd) {
        if (op.name.starts_with("attn.flash")) {
            attention.push_back(op.name + (op.is_recompute ? " (recompute)" : ""));
            if (op.name == "attn.flash.bwd") {
                EXPECT_DOUBLE_EQ(op.flops().value, 2.5 * 4.0 * 8192 * 8192 * 128 * 32);
            }
        }
    }
    EXPECT_EQ(attention, (std::vector<std::string>{"attn.flash (recompute)", "attn.flash.bwd"}));
}

TEST(FlashAttention, TimeIsHalfTheFlopsAtTheCausalEfficiencyOfTheCurve) {
    const cost::CostModel cost = testing::shipped_cost_model();
    // At 16k tokens the curve is the FA2 measurement itself: forward 0.63, backward 0.60 of 312 TFLOP/s.
    const cost::GemmShape fwd{16384, 16384, 128, 2 * 32};
    const cost::GemmShape bwd{16384, 16384, 128, 5 * 32};
    EXPECT_DOUBLE_EQ(cost.gemm(fwd, cost::GemmClass::FlashForward).value,
                     0.5 * fwd.flops().value / (312e12 * 0.63));
    EXPECT_DOUBLE_EQ(cost.gemm(bwd, cost::GemmClass::FlashBackward).value,
                     0.5 * bwd.flops().value / (312e12 * 0.6));
    // Between points the efficiency is interpolated: 4k reads the 4k point exactly.
    const cost::GemmShape mid{4096, 4096, 128, 2 * 32};
    EXPECT_DOUBLE_EQ(cost.gemm(mid, cost::GemmClass::FlashForward).value,
                     0.5 * mid.flops().value / (312e12 * 0.56));
}

TEST(FlashAttention, AProfileWithoutTheCurveIsAnInputError) {
    cost::HardwareProfile profile = testing::shipped_cost_model().profile();
    profile.flash_forward_efficiency_vs_seq_length = {};
    const cost::CostModel cost(profile);
    try {
        (void)cost.gemm({2048, 2048, 128, 64}, cost::GemmClass::FlashForward);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "profile a100-80gb-selene has no compute.attention.flash_forward_efficiency_vs_seq_length "
                  "curve, which training.attention_backend=flash or fused needs");
    }
}

// H100 (FA3 paper Fig. 5, cuDNN causal forward at 4k tokens): 518 TFLOP/s at head dim 128 and 363 at 64,
// i.e. 0.524 and 0.367 of 989 as the profile rounds them; head dim 96 reads halfway between.
TEST(FlashAttention, HopperCurvesInterpolateInHeadDimensionBetween64And128) {
    const cost::CostModel h100(
        cost::load_hardware_profile("h100-80gb-dgx", testing::source_path("scenarios/hardware")));
    const auto time_at = [&](std::int64_t d, double efficiency) {
        const cost::GemmShape shape{4096, 4096, d, 2 * 32};
        EXPECT_DOUBLE_EQ(h100.gemm(shape, cost::GemmClass::FlashForward).value,
                         0.5 * shape.flops().value / (989e12 * efficiency))
            << "head dim " << d;
    };
    time_at(128, 0.524);
    time_at(64, 0.367);
    time_at(96, 0.5 * (0.524 + 0.367));
    time_at(32, 0.367);   // clamped at the smallest measured head dimension
    time_at(192, 0.524);  // and at the largest (Nemotron-4 340B's heads)
    // Backward at 16k: cuDNN's non-causal 516 TFLOP/s x its forward causal/non-causal ratio 539/595.
    const cost::GemmShape bwd{16384, 16384, 128, 5 * 32};
    EXPECT_DOUBLE_EQ(h100.gemm(bwd, cost::GemmClass::FlashBackward).value,
                     0.5 * bwd.flops().value / (989e12 * 0.473));
    EXPECT_NEAR(516.0 * 539.0 / 595.0 / 989.0, 0.473, 5e-4);
}

TEST(FlashAttention, AHeadDim64PairWithoutTheMainCurvesIsAProfileError) {
    const std::string dir = testing::source_path("scenarios/hardware");
    std::ifstream in(dir + "/h100-80gb-dgx.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto drop = [&](const std::string& key) {
        const std::size_t at = text.find("\"" + key + "\"");
        ASSERT_NE(at, std::string::npos);
        const std::size_t end = text.find("\n      },\n", at);  // the curve's closing brace at its indent
        text.erase(at, end + 10 - at);
    };
    drop("flash_forward_efficiency_vs_seq_length");
    drop("flash_backward_efficiency_vs_seq_length");
    const std::string path = ::testing::TempDir() + "/h100-80gb-dgx.json";  // the name must match the file
    std::ofstream(path) << text;
    try {
        (void)cost::load_hardware_profile(path, dir);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("compute.attention.flash_head_dim_64"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("requires flash_forward_efficiency_vs_seq_length"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace trainsim::workload
