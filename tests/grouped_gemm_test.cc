// The routed experts' grouped GEMM (cost::GroupedGemm, CostModel::grouped_gemm): one GEMM per expert on
// its own tokens, as Transformer Engine's GroupedLinear launches them, priced by hand on a profile whose
// efficiency is flat, and against the batched GEMM the experts used to be priced as.
#include <gtest/gtest.h>

#include "sim/cost/cost_model.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using cost::ExpertGemms;
using cost::GemmShape;
using cost::GroupedGemm;
using cost::TokenDim;

// The shipped A100 profile with a flat 0.5 efficiency and one SM (no wave quantization): a GEMM takes
// max(5 µs, FLOPs / (312 TFLOP/s · 0.5)).
cost::CostModel flat_cost_model() {
    cost::HardwareProfile p = testing::shipped_cost_model().profile();
    p.gemm_efficiency_vs_flops = cost::Curve{{1.0, 1e20}, {0.5, 0.5}};
    p.num_sms = 1;
    p.gemm_min_kernel_us = 5.0;
    return cost::CostModel(p);
}

TEST(GroupedGemm, UnevenExpertsCostTheSumOfTheirOwnGemms) {
    const cost::CostModel cost = flat_cost_model();
    // Five experts of n = k = 1024: one with 2048 tokens, two with 1024, one with 8, one with none.
    const GemmShape like{0, 1024, 1024};
    const GroupedGemm grouped{TokenDim::M, {{2048, 1}, {1024, 2}, {8, 1}, {0, 1}}};
    // 2·2048·1024² = 4.294967296e9 FLOPs at 156 TFLOP/s: 27.5318 µs; 1024 tokens: 13.7659 µs each; 8
    // tokens (1.68e7 FLOPs, 0.11 µs) pay the 5 µs kernel floor; the empty expert launches nothing.
    const double expected =
        2.0 * 2048 * 1024 * 1024 / 156e12 + 2 * (2.0 * 1024 * 1024 * 1024 / 156e12) + 5e-6;
    EXPECT_NEAR(cost.grouped_gemm(like, grouped).value, expected, 1e-12);
    EXPECT_DOUBLE_EQ(grouped.flops(like).value, 2.0 * 1024 * 1024 * (2048 + 2 * 1024 + 8));
    // The weight gradient carries the tokens in k: {1024, 1024, tokens} per expert, the same FLOPs.
    const GroupedGemm wgrad{TokenDim::K, grouped.experts};
    EXPECT_NEAR(cost.grouped_gemm(GemmShape{1024, 1024, 0}, wgrad).value, expected, 1e-12);
    EXPECT_EQ(wgrad.expert_shape(GemmShape{1024, 1024, 0, 7}, 8), (GemmShape{1024, 1024, 8, 1}));
}

TEST(GroupedGemm, SmallExpertsReadTheCurveAtTheirOwnFlops) {
    // On the shipped curve 16 experts of 512 tokens each (h 1024, fc1 2048 wide) run below the
    // efficiency of one batched GEMM of the same FLOPs: each reads the curve at 1/16 of them.
    const cost::CostModel cost = testing::shipped_cost_model();
    const GemmShape batched{512, 2048, 1024, 16};
    const GroupedGemm grouped{TokenDim::M, {{512, 16}}};
    const double per_expert = cost.gemm(GemmShape{512, 2048, 1024}).value;
    EXPECT_DOUBLE_EQ(cost.grouped_gemm(batched, grouped).value, 16 * per_expert);
    EXPECT_GT(cost.grouped_gemm(batched, grouped).value, cost.gemm(batched).value);
}

}  // namespace
}  // namespace trainsim
