// What `run` measures for a scenario: every GEMM the simulator prices, from the workload library, and the
// grids around them; and the compare command's pricing.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "calibrate/bench/backend.h"
#include "calibrate/bench/bench_plan.h"
#include "calibrate/compare/profile_comparison.h"
#include "calibrate/tests/calibrate_test_support.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::calibrate {
namespace {

config::Scenario scenario(const std::string& relative) {
    return config::load_scenario(testing::source_path(relative));
}

bool has(const std::vector<GemmCase>& gemms, cost::GemmShape s,
         cost::GemmClass cls = cost::GemmClass::Dense) {
    return std::any_of(gemms.begin(), gemms.end(), [&](const GemmCase& g) {
        return g.shape.m == s.m && g.shape.n == s.n && g.shape.k == s.k && g.shape.batch == s.batch &&
               g.cls == cls;
    });
}

TEST(BenchPlan, TheScenariosForwardDgradAndWgradGemms) {
    // Korthikanti 22B, TP 8, b 4, s 2048, h 6144: s·b = 8192 tokens, 3h/t = 2304, h/t = 768, 4h/t = 3072.
    const std::vector<GemmCase> g = scenario_gemms(scenario("scenarios/korthikanti-22b.json"));
    EXPECT_TRUE(has(g, {8192, 2304, 6144}));                                     // QKV forward
    EXPECT_TRUE(has(g, {8192, 6144, 2304}));                                     // QKV input gradient
    EXPECT_TRUE(has(g, {2304, 6144, 8192}));                                     // QKV weight gradient
    EXPECT_TRUE(has(g, {8192, 6144, 768}));                                      // projection forward
    EXPECT_TRUE(has(g, {8192, 3072, 6144}));                                     // fc1 forward
    EXPECT_TRUE(has(g, {3072, 6144, 8192}));                                     // fc2 weight gradient
    EXPECT_TRUE(has(g, {2048, 2048, 96, 32}, cost::GemmClass::AttentionScore));  // QKᵀ: b·a/t = 32 heads
    EXPECT_TRUE(has(g, {2048, 96, 2048, 32}, cost::GemmClass::AttentionOverValue));  // probabilities x V
    EXPECT_TRUE(has(g, {8192, 6400, 6144}));  // logits: vocab 51200 / 8
    // Distinct: no shape twice.
    for (std::size_t i = 0; i < g.size(); ++i) {
        for (std::size_t j = i + 1; j < g.size(); ++j) {
            EXPECT_FALSE(g[i].shape.m == g[j].shape.m && g[i].shape.n == g[j].shape.n &&
                         g[i].shape.k == g[j].shape.k && g[i].shape.batch == g[j].shape.batch &&
                         g[i].cls == g[j].cls);
        }
    }
}

TEST(BenchPlan, GridsPlusTheScenarioWithinTheLimits) {
    PlanOptions o;
    o.scenarios = {scenario("scenarios/korthikanti-22b.json")};
    o.gemm_min_dim = 128;
    o.gemm_max_dim = 1024;
    o.max_gemm_flops = 1e11;
    o.kernel_min_elements = 1 << 10;
    o.kernel_max_elements = 1 << 12;
    o.group_sizes = {2, 4};
    std::vector<std::string> left_out;
    const BenchPlan plan = make_plan(o, left_out);
    EXPECT_TRUE(has(plan.gemms, {1024, 1024, 1024}));
    EXPECT_FALSE(has(plan.gemms, {8192, 2304, 6144}));  // 2.3e11 FLOPs: over the limit, and said so
    EXPECT_TRUE(std::any_of(left_out.begin(), left_out.end(), [](const std::string& s) {
        return s.find("left out gemm 8192x2304x6144") == 0;
    }));
    // TP 8 needs 8 ranks; this run has 4.
    EXPECT_TRUE(std::any_of(left_out.begin(), left_out.end(), [](const std::string& s) {
        return s.find("8 ranks, more than this run has (4)") != s.npos;
    }));
    EXPECT_TRUE(std::any_of(plan.kernels.begin(), plan.kernels.end(), [](const KernelCase& k) {
        return k.kind == KernelKind::ScaleMaskSoftmax && k.row == 2048;  // the scenario's score rows
    }));
    EXPECT_TRUE(std::any_of(plan.collectives.begin(), plan.collectives.end(), [](const CollectiveCase& c) {
        return c.op == cost::CollectiveKind::SendRecv && c.ranks == 2;
    }));
}

// The CPU plan: the 22B scenario's GPU-sized cases scaled to the limits, each kind still measured, and
// nothing over the limits (the 86 s --tiny run measured the full 134M-element softmax).
TEST(BenchPlan, ScaleToFitKeepsEveryScenarioCaseWithinTheLimits) {
    PlanOptions o;
    o.scenarios = {scenario("scenarios/korthikanti-22b.json")};
    o.scale_to_fit = true;
    o.gemm_min_dim = 16;
    o.gemm_max_dim = 128;
    o.max_gemm_flops = 1e8;
    o.kernel_max_elements = 1 << 16;
    o.collective_max_bytes = 1 << 16;
    o.group_sizes = {2};
    std::vector<std::string> notes;
    const BenchPlan plan = make_plan(o, notes);
    for (const GemmCase& g : plan.gemms) {
        EXPECT_LE(g.shape.flops().value, 1e8) << g.shape.m << "x" << g.shape.n << "x" << g.shape.k;
    }
    for (const KernelCase& k : plan.kernels) {
        EXPECT_LE(k.elements, 1 << 16) << to_string(k.kind);
    }
    // QKV 8192x2304x6144 (2.3e11 FLOPs) by one factor c = (1e8 / 2.32e11)^(1/3) = 0.0755: 618x174x464.
    EXPECT_TRUE(has(plan.gemms, {618, 174, 464}));
    EXPECT_NE(std::find(notes.begin(), notes.end(),
                        "scaled gemm 8192x2304x6144 batch 1 to 618x174x464 batch 1 (--max-gemm-flops)"),
              notes.end());
    // TP 8's 100 MB all-reduce, measured over the 2 ranks there are, at the largest size.
    EXPECT_TRUE(std::any_of(plan.collectives.begin(), plan.collectives.end(), [](const CollectiveCase& c) {
        return c.op == cost::CollectiveKind::AllReduce && c.ranks == 2 && c.bytes == 65536;
    }));
    EXPECT_EQ(scaled_to({64, 64, 32, 4}, 1e9).batch, 4);  // within the limit: unchanged
    EXPECT_EQ(scaled_to({1, 1, 1, 64}, 8.0).batch, 4);    // only the batch can shrink
}

TEST(BenchPlan, KernelBytesFollowTheSimulatorsCounting) {
    // transformer_layer.cc: LayerNorm 2·E·2, bias-dropout-add 3·E·2 + E (mask), dropout 2·S·2 + S.
    EXPECT_EQ(kernel_bytes_moved(KernelKind::LayerNorm, 1000, 2), 4000);
    EXPECT_EQ(kernel_bytes_moved(KernelKind::BiasDropoutAdd, 1000, 2), 7000);
    EXPECT_EQ(kernel_bytes_moved(KernelKind::Dropout, 1000, 2), 5000);
    EXPECT_EQ(kernel_bytes_moved(KernelKind::Optimizer, 1000, 2), 30000);
    EXPECT_EQ(kernel_bytes_moved(KernelKind::Triad, 1000, 8), 24000);
    // The framework kernels have no harness kernel to count for: their records come from framework timings.
    for (const KernelKind k : {KernelKind::Rope, KernelKind::CrossEntropy, KernelKind::CrossEntropyFused}) {
        EXPECT_THROW((void)kernel_bytes_moved(k, 1000, 2), std::invalid_argument) << to_string(k);
    }
}

TEST(Compare, AProfileAgainstItselfChangesNothingAndSlowerGemmsShow) {
    const std::string dir = testing::source_path("scenarios/hardware");
    const cost::HardwareProfile a = cost::load_hardware_profile("a100-80gb-selene", dir);
    cost::HardwareProfile half = a;
    half.name = "half-gemm";
    for (double& y : half.gemm_efficiency_vs_flops.y) {
        y /= 2.0;
    }
    const config::Scenario sc = scenario("scenarios/korthikanti-22b.json");
    const ProfileComparison same = compare_profiles(sc, a, a);
    ASSERT_FALSE(same.ops.empty());
    for (const OpComparison& op : same.ops) {
        EXPECT_EQ(op.a_s, op.b_s) << op.op;
    }
    const ProfileComparison slower = compare_profiles(sc, a, half);
    const auto qkv = std::find_if(slower.ops.begin(), slower.ops.end(),
                                  [](const OpComparison& o) { return o.op == "qkv"; });
    ASSERT_NE(qkv, slower.ops.end());
    EXPECT_NEAR(qkv->b_s / qkv->a_s, 2.0, 1e-12);
    EXPECT_EQ(qkv->what, "gemm 8192x2304x6144");
    const auto ar = std::find_if(slower.ops.begin(), slower.ops.end(),
                                 [](const OpComparison& o) { return o.op == "proj.allreduce"; });
    ASSERT_NE(ar, slower.ops.end());
    EXPECT_EQ(ar->a_s, ar->b_s);  // collectives read the unchanged network
    EXPECT_EQ(ar->what, "all_reduce 100663296 B over 8 (intra_node)");
}

}  // namespace
}  // namespace trainsim::calibrate

namespace trainsim::calibrate {
namespace {

// Fused (cuDNN) or flash attention is one kernel, not a GEMM the backends can time: a scenario
// with flash attention adds its dense GEMMs only (the first H200 run timed a batched cuBLASLt GEMM under a
// flash_forward name, which fit then refused).
TEST(BenchPlan, FlashAttentionIsNotPlannedAsAGemm) {
    const config::Scenario nemotron = scenario("scenarios/nemo/nemotron3-8b-64gpu-fp8.json");
    ASSERT_EQ(nemotron.training.attention_backend, config::AttentionBackend::Fused);  // priced as flash_*
    for (const GemmCase& g : scenario_gemms(nemotron)) {
        EXPECT_EQ(g.cls, cost::GemmClass::Dense) << g.shape.m << "x" << g.shape.n << "x" << g.shape.k;
    }
    // Nor its s x s score kernels (softmax, dropout), which fused attention never runs: the plan's only
    // softmax and dropout cases are the grid's.
    PlanOptions o;
    o.scenarios = {nemotron};
    o.kernel_min_elements = 1 << 10;
    o.kernel_max_elements = 1 << 12;
    std::vector<std::string> notes;
    const BenchPlan plan = make_plan(o, notes);
    for (const KernelCase& k : plan.kernels) {
        if (k.kind == KernelKind::ScaleMaskSoftmax || k.kind == KernelKind::Dropout) {
            EXPECT_LE(k.elements, 1 << 12) << to_string(k.kind);
        }
    }
}

// `run --scenario A --scenario B`: both scenarios' shapes, a shape they share once.
TEST(BenchPlan, SeveralScenariosAddEachOnesShapesOnce) {
    PlanOptions o;
    o.gemm_min_dim = 128;
    o.gemm_max_dim = 128;
    const config::Scenario a = scenario("scenarios/nemo/llama3-8b-8gpu-fp8.json");
    const config::Scenario b = scenario("scenarios/nemo/llama2-7b-8gpu-fp8.json");
    std::vector<std::string> notes;
    o.scenarios = {a};
    const std::size_t only_a = make_plan(o, notes).gemms.size();
    o.scenarios = {b};
    const std::size_t only_b = make_plan(o, notes).gemms.size();
    o.scenarios = {a, b};
    const BenchPlan both = make_plan(o, notes);
    std::size_t shared = 0;
    for (const GemmCase& ga : scenario_gemms(a)) {
        for (const GemmCase& gb : scenario_gemms(b)) {
            shared += ga.shape == gb.shape && ga.cls == gb.cls ? 1 : 0;
        }
    }
    EXPECT_GT(shared, 0U);  // both have h = 4096: the attention output projection's shapes agree
    EXPECT_EQ(both.gemms.size(), only_a + only_b - 1 - shared);  // the 128 cube once
    for (const GemmCase& g : scenario_gemms(b)) {
        EXPECT_TRUE(has(both.gemms, {g.shape.m, g.shape.n, g.shape.k}));
    }
}

}  // namespace
}  // namespace trainsim::calibrate
