// The cost model against hand computations from the shipped A100 profile (scenarios/hardware/).
// Expected values were worked out by hand from the profile's numbers; the formula is in each comment.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/cost/cost_model.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::cost {
namespace {

const std::string kProfileDir = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/hardware";

CostModel shipped_model() {
    return CostModel(load_hardware_profile("a100-80gb-selene", kProfileDir));
}

// Relative tolerance for hand-computed expectations: rounding only.
void expect_seconds(Seconds got, double expected) {
    EXPECT_NEAR(got.value, expected, 1e-9 * expected)
        << "got " << got.value << " s, expected " << expected << " s";
}

TEST(Curve, InterpolatesLinearlyInLog10AndClampsAtTheEnds) {
    const Curve c{{1e2, 1e4}, {0.2, 0.6}, "test"};
    EXPECT_DOUBLE_EQ(read_curve(c, 1e3).y, 0.4);  // log10 midpoint
    EXPECT_NEAR(read_curve(c, std::pow(10.0, 2.5)).y, 0.3, 1e-15);
    EXPECT_EQ(read_curve(c, 1e2).y, 0.2);
    EXPECT_EQ(read_curve(c, 1e2).range, CurveRange::Inside);
    EXPECT_EQ(read_curve(c, 1e4).y, 0.6);
    EXPECT_EQ(read_curve(c, 1e4).range, CurveRange::Inside);
    EXPECT_EQ(read_curve(c, 10.0).y, 0.2);
    EXPECT_EQ(read_curve(c, 10.0).range, CurveRange::BelowFirst);
    EXPECT_EQ(read_curve(c, 1e5).y, 0.6);
    EXPECT_EQ(read_curve(c, 1e5).range, CurveRange::AboveLast);
}

TEST(Curve, HitsEveryPointExactlyAndASinglePointCurveIsConstant) {
    const Curve c{{1.0, 10.0, 1000.0}, {5.0, 7.0, 3.0}, "test"};
    EXPECT_EQ(read_curve(c, 10.0).y, 7.0);
    EXPECT_DOUBLE_EQ(read_curve(c, 100.0).y, 5.0);  // halfway in log from 7 to 3
    const Curve one{{4.0}, {0.5}, "test"};
    EXPECT_EQ(read_curve(one, 4.0).y, 0.5);
    EXPECT_EQ(read_curve(one, 8.0).y, 0.5);
}

TEST(GemmCost, QkvShapeOfThe22BLayerMatchesAHandComputation) {
    const CostModel model = shipped_model();
    // 2·8192·2304·6144 = 2.31928233984e11 FLOPs lies between the curve points (1.4e11, 0.74) and
    // (8e11, 0.77): eff = 0.74 + 0.03·log10(2.3193e11/1.4e11)/log10(8e11/1.4e11) = 0.748688.
    // 576 tiles of 256x128 (6 waves) need no wave correction. t = F / (312e12 · 0.748688).
    const Seconds t = model.gemm({8192, 2304, 6144, 1});
    expect_seconds(t, 9.928826884476156e-4);
    const double efficiency = 2.0 * 8192 * 2304 * 6144 / (t.value * 312e12);
    EXPECT_GT(efficiency, 0.72);
    EXPECT_LT(efficiency, 0.76);
    EXPECT_TRUE(model.warnings().empty());
}

TEST(GemmCost, FourForwardGemmsOfThe22BLayerTakeAbout3_96Ms) {
    // hardware.md §7.1: QKV, projection, fc1 and fc2 of one 22B layer (h=6144, b=4, s=2048, TP=8).
    const CostModel model = shipped_model();
    const double total = model.gemm({8192, 2304, 6144}).value + model.gemm({8192, 6144, 768}).value +
                         model.gemm({8192, 3072, 6144}).value + model.gemm({8192, 6144, 3072}).value;
    EXPECT_NEAR(total, 3.96e-3, 0.01 * 3.96e-3);
}

TEST(GemmCost, SingleWaveShapeIsCorrectedByItsFillOfTheSms) {
    const CostModel model = shipped_model();
    // 256x1024x32768 and 2048³ have the same FLOPs (1.718e10), so the same curve efficiency. The first has
    // ceil(256/256)·ceil(1024/128) = 8 tiles for 108 SMs; the second 8·16 = 128 tiles (a full first wave).
    const double skinny = model.gemm({256, 1024, 32768}).value;
    const double cube = model.gemm({2048, 2048, 2048}).value;
    EXPECT_NEAR(skinny / cube, 108.0 / 8.0, 1e-12);
    // The cube itself: eff = 0.70 + 0.04·log10(1.718e10/1.7e10)/log10(1.4e11/1.7e10) = 0.700200.
    EXPECT_NEAR(cube, 7.863997275655985e-5, 1e-9 * 7.863997275655985e-5);
}

TEST(GemmCost, BatchMultipliesTheTiles) {
    const CostModel model = shipped_model();
    // 4 × (256x256x32768): 1·2 tiles each, 8 in all, again the FLOPs of 2048³.
    const double batched = model.gemm({256, 256, 32768, 4}).value;
    const double cube = model.gemm({2048, 2048, 2048}).value;
    EXPECT_NEAR(batched / cube, 108.0 / 8.0, 1e-12);
}

TEST(GemmCost, MeasuredSmallCubeIsNotPenalisedTwice) {
    const CostModel model = shipped_model();
    // 1024³ has 32 tiles, a partial wave, but the curve's 2.1e9 point is this very cube: relative to a
    // cube of the same FLOPs the fill is 1. 2.147e9 FLOPs is just past the (2.1e9, 0.38) point:
    // eff = 0.38 + 0.32·log10(2.147e9/2.1e9)/log10(1.7e10/2.1e9) = 0.383421; t = F / (312e12 · eff).
    expect_seconds(model.gemm({1024, 1024, 1024}), 1.795142651320747e-5);
}

TEST(GemmCost, MultiWaveShapesGetNoWaveCorrection) {
    const CostModel model = shipped_model();
    // 8192x2304 (576 tiles) and 8192x2432 (608 tiles) both span 6 waves; only FLOPs differ.
    const double a = model.gemm({8192, 2304, 6144}).value;
    const double b = model.gemm({8192, 2432, 6144}).value;
    const auto rate = [](double t, double n) { return 2.0 * 8192 * n * 6144 / t; };
    // Only the curve separates them (< 1%). A full wave factor (576/648 against 608/648 of the SMs) would
    // have made the second 5.5% faster.
    EXPECT_GT(rate(b, 2432), rate(a, 2304));
    EXPECT_LT(rate(b, 2432) / rate(a, 2304), 1.01);
}

TEST(GemmCost, AttentionClassesUseTheirOwnEfficiencyAndTheFloor) {
    const CostModel model = shipped_model();
    // QKᵀ of the 22B layer on one TP=8 rank: b·a/t = 4·64/8 = 32 products of s x s x (h/a) = 2048x2048x96.
    const GemmShape score{2048, 2048, 96, 32};
    expect_seconds(model.gemm(score, GemmClass::AttentionScore), score.flops().value / (312e12 * 0.417));
    const GemmShape over_value{2048, 96, 2048, 32};
    expect_seconds(model.gemm(over_value, GemmClass::AttentionOverValue),
                   over_value.flops().value / (312e12 * 0.702));
    // 2·8·8·8 FLOPs take far less than the 5 µs floor.
    expect_seconds(model.gemm({8, 8, 8, 1}, GemmClass::AttentionScore), 5e-6);
    expect_seconds(model.gemm({0, 8, 8, 1}), 0.0);
}

TEST(MemoryBoundCost, MatchesHandComputation) {
    const CostModel model = shipped_model();
    // 1e9 bytes lies on the flat part (0.84): t = 4 µs + 1e9 / (2039e9 · 0.84 · 1.0).
    expect_seconds(model.memory_bound(Bytes{1'000'000'000}, MemoryBoundKind::Generic), 5.878529624699316e-4);
    // LayerNorm over 2^27 bytes: eff = 0.80 + 0.04·log10(1.342e8/1e8)/log10(8.05) = 0.805644; factor 0.817.
    expect_seconds(model.memory_bound(Bytes{134'217'728}, MemoryBoundKind::LayerNorm), 1.040063032833042e-4);
    expect_seconds(model.memory_bound(Bytes{0}, MemoryBoundKind::Dropout), 0.0);
}

// The framework kernels' factors scale the same curve: on the H100 profile TE's fused RoPE over 4e8 bytes
// (the streaming curve there: 0.80 + 0.08·log10(4e8/1e8)/log10(8.05306e8/1e8) = 0.852) at 0.491.
TEST(MemoryBoundCost, FrameworkKernelsRunAtTheirOwnFactor) {
    const CostModel h100(load_hardware_profile("h100-80gb-dgx", kProfileDir));
    const double curve = 0.80 + 0.08 * std::log10(4.0) / std::log10(805306368.0 / 1e8);
    expect_seconds(h100.memory_bound(Bytes{400'000'000}, MemoryBoundKind::Rope),
                   4e-6 + 4e8 / (3350e9 * curve * 0.491));
    expect_seconds(h100.memory_bound(Bytes{400'000'000}, MemoryBoundKind::CrossEntropyFused),
                   4e-6 + 4e8 / (3350e9 * curve * 0.697));
    expect_seconds(h100.memory_bound(Bytes{400'000'000}, MemoryBoundKind::CrossEntropy),
                   4e-6 + 4e8 / (3350e9 * curve * 0.841));
    // The A100 profile has no timing of them: they run at the streaming curve, as before they had a kind.
    const CostModel a100 = shipped_model();
    for (const MemoryBoundKind k :
         {MemoryBoundKind::Rope, MemoryBoundKind::CrossEntropy, MemoryBoundKind::CrossEntropyFused}) {
        EXPECT_EQ(a100.memory_bound(Bytes{400'000'000}, k).value,
                  a100.memory_bound(Bytes{400'000'000}, MemoryBoundKind::Generic).value);
    }
}

TEST(CollectiveCost, AllReduceOf100MiBOn8GpusMatchesTheMeasuredTable) {
    const CostModel model = shipped_model();
    // busbw(100 MiB) = 171.54 + (176.92 - 171.54)·log2(100/64) = 175.0039 GB/s between the 64 and 128 MiB
    // rows. At n = 8 the model reproduces the measurement: t = S·2(8-1)/8 / busbw (the 15 µs latency
    // taken out of the measured time is added back).
    const Bytes s{100 * 1024 * 1024};
    expect_seconds(model.collective(CollectiveKind::AllReduce, s, 8, Scope::IntraNode),
                   1.0485523548388923e-3);
    EXPECT_TRUE(model.warnings().empty());
}

TEST(CollectiveCost, AllGatherAndReduceScatterScaleTheBandwidthPartByTheirFactor) {
    const CostModel model = shipped_model();
    const Bytes s{100 * 1024 * 1024};
    const double all_reduce = 1.0485523548388923e-3;
    // Latency 6.6 + 7·0.6 = 10.8 µs; bandwidth part (n-1)/n ÷ 2(n-1)/n = 1/2 of the all-reduce's
    // (t_AR - 15 µs).
    const double expected = 10.8e-6 + 0.5 * (all_reduce - 15e-6);
    expect_seconds(model.collective(CollectiveKind::AllGather, s, 8, Scope::IntraNode), expected);
    expect_seconds(model.collective(CollectiveKind::ReduceScatter, s, 8, Scope::IntraNode), expected);
    // A TP=4 all-reduce: latency 6.6 + 6·0.6 = 10.2 µs, factor 1.5 instead of 1.75.
    expect_seconds(model.collective(CollectiveKind::AllReduce, s, 4, Scope::IntraNode),
                   10.2e-6 + (1.5 / 1.75) * (all_reduce - 15e-6));
}

TEST(CollectiveCost, TwoAllReducesOfThe22BLayerTakeAbout2Ms) {
    // hardware.md §7.1: b·s·h·2 bytes = 100.7 MB per all-reduce at TP=8.
    const CostModel model = shipped_model();
    const double t =
        model.collective(CollectiveKind::AllReduce, Bytes{4LL * 2048 * 6144 * 2}, 8, Scope::IntraNode).value;
    EXPECT_NEAR(2 * t, 2.0e-3, 0.02 * 2.0e-3);
}

TEST(CollectiveCost, GroupOfOneOrNoBytesCostsNothing) {
    const CostModel model = shipped_model();
    for (const CollectiveKind k :
         {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
          CollectiveKind::SendRecv, CollectiveKind::AllToAll}) {
        EXPECT_EQ(model.collective(k, Bytes{1 << 20}, 1, Scope::IntraNode).value, 0.0) << to_string(k);
        EXPECT_EQ(model.collective(k, Bytes{1 << 20}, 1, Scope::InterNode, 1).value, 0.0) << to_string(k);
    }
    EXPECT_EQ(model.collective(CollectiveKind::AllReduce, Bytes{0}, 8, Scope::IntraNode).value, 0.0);
}

TEST(CollectiveCost, SendRecvUsesThePairBandwidth) {
    const CostModel model = shipped_model();
    const Bytes s{1 << 30};
    expect_seconds(model.collective(CollectiveKind::SendRecv, s, 2, Scope::IntraNode),
                   7.2e-6 + (1 << 30) / 195.1e9);
    expect_seconds(model.collective(CollectiveKind::SendRecv, s, 2, Scope::InterNode, 2),
                   9.3e-6 + (1 << 30) / 23.5e9);
}

TEST(CollectiveCost, InterNodeGroupGetsOneRailPerRankPerNode) {
    const CostModel model = shipped_model();
    const Bytes s{1 << 30};  // exactly the 1 GiB point of the efficiency curve: 0.958
    // A data-parallel group beside TP=8: 4 nodes, one rank each, one rail. Tree latency
    // 6.6 + 2·(0·0.6 + log2(4)·5.0) = 26.6 µs; t = 26.6 µs + S·2(4-1)/4 / (23.5e9·0.958).
    expect_seconds(model.collective(CollectiveKind::AllReduce, s, 4, Scope::InterNode, 4),
                   0.07156805320481499);
    // 16 ranks on 2 nodes: 8 rails. Latency 6.6 + 2·(7·0.6 + 1·5.0) = 25.0 µs; factor 2·15/16.
    expect_seconds(model.collective(CollectiveKind::AllReduce, s, 16, Scope::InterNode, 2),
                   0.011203352063252344);
    // All-gather has only the ring: 6.6 + (4-4)·0.6 + (4-1)·2.7 = 14.7 µs; factor 3/4.
    expect_seconds(model.collective(CollectiveKind::AllGather, s, 4, Scope::InterNode, 4),
                   0.035785426602407494);
}

TEST(CollectiveCost, AllToAllInsideANodeMovesWhatAnAllGatherMovesWithOneSendLatency) {
    // The expert dispatch/combine inside one NVSwitch node: each rank sends 7/8 of S, as an all-gather
    // of S does; one NVLink send latency 7.2 µs instead of the ring's 6.6 + 7·0.6.
    const CostModel model = shipped_model();
    const Bytes s{100 * 1024 * 1024};
    const double all_reduce = 1.0485523548388923e-3;
    expect_seconds(model.collective(CollectiveKind::AllToAll, s, 8, Scope::IntraNode),
                   7.2e-6 + 0.5 * (all_reduce - 15e-6));
}

TEST(CollectiveCost, AllToAllInsideANodeIsNeverFasterThanTheGpusNvlinkSends) {
    // Each rank's 7/8 of S leaves over its own NVLinks: at most the profile's point-to-point rate. A100
    // at 1 GiB (a curve point, all-reduce busbw 229.04): the all-gather rule alone would give
    // (2^30·1.75/229.04e9 − 15 µs)/2 = 4.095 ms, the sends at 195.1 GB/s take 4.816 ms.
    const Bytes s{1LL << 30};
    expect_seconds(shipped_model().collective(CollectiveKind::AllToAll, s, 8, Scope::IntraNode),
                   7.2e-6 + (1LL << 30) * 7.0 / 8 / 195.1e9);
    // H100's NVLS all-reduce reads 466.35 GB/s busbw at 1 GiB, above the 18 × 20.6 = 370.8 GB/s its
    // NVLinks carry (NCCL's figure): the all-to-all takes the NVLink rate.
    const CostModel h100(load_hardware_profile("h100-80gb-dgx", kProfileDir));
    expect_seconds(h100.collective(CollectiveKind::AllToAll, s, 8, Scope::IntraNode),
                   7.2e-6 + (1LL << 30) * 7.0 / 8 / 370.8e9);
    // Small messages stay on the curve (latency-bound there): 1 MiB on A100, 43.47 µs against the sends'
    // 4.7 µs.
    expect_seconds(shipped_model().collective(CollectiveKind::AllToAll, Bytes{1 << 20}, 8, Scope::IntraNode),
                   7.2e-6 + ((1 << 20) * 1.75 / 18.0e9 - 15e-6) / 2);
}

TEST(CollectiveCost, AllToAllAcrossNodesSendsItsNodeLocalShareAtTheNvlinkRate) {
    // With NICs far faster than NVLink, EP 16 over 2 nodes is bound by each rank's S·7/16 to its own
    // node's 7 other ranks, at the A100's 195.1 GB/s (the all-gather rule would give 2.05 ms at 1 GiB).
    HardwareProfile p = load_hardware_profile("a100-80gb-selene", kProfileDir);
    p.inter_node.nic_GBps = 1e6;
    const Bytes s{1LL << 30};
    expect_seconds(CostModel(p).collective(CollectiveKind::AllToAll, s, 16, Scope::InterNode, 2),
                   9.3e-6 + (1LL << 30) * 7.0 / 16 / 195.1e9);
}

TEST(CollectiveCost, AllToAllAcrossNodesIsBoundByTheNodesNics) {
    const CostModel model = shipped_model();
    const Bytes s{1 << 30};  // the 1 GiB point of the efficiency curve: 0.958
    const double rail = 23.5e9 * 0.958;
    // EP 16 over 2 nodes: 8 ranks a node each send S·8/16 off the node, 8·S/2 through the node's 8
    // rails; the NVLink part (S·7/16 a rank) is far smaller. One network send latency, 9.3 µs.
    expect_seconds(model.collective(CollectiveKind::AllToAll, s, 16, Scope::InterNode, 2),
                   9.3e-6 + 8.0 * (1 << 30) * 8 / 16 / (8 * rail));
    // EP 8 with one rank a node (beside TP 8): each rank sends 7/8 of S through its one rail.
    expect_seconds(model.collective(CollectiveKind::AllToAll, s, 8, Scope::InterNode, 8),
                   9.3e-6 + (1 << 30) * 7.0 / 8 / rail);
    // The NVLink part (the intra-node all-gather's bandwidth part scaled from (r−1)/r to (r−1)/n of S)
    // runs beside the network part; here it is the smaller, so the time above is the network's alone.
    const double nvlink =
        (model.collective(CollectiveKind::AllGather, s, 8, Scope::IntraNode).value - 10.8e-6) * 8 / 16;
    EXPECT_LT(nvlink, 8.0 * (1 << 30) * 8 / 16 / (8 * rail));
}

TEST(CollectiveCost, SmallInterNodeAllReduceLatencyMatchesPublishedMeasurements) {
    const CostModel model = shipped_model();
    // NCCL's tree latency with the profile's LL constants; 128 bytes add at most 0.02 µs of transfer.
    // 32 nodes x 8 GPUs: 6.6 + 2·(7·0.6 + 5·5.0) = 65.0 µs (measured 62-71 µs, nccl#652).
    const double big =
        model.collective(CollectiveKind::AllReduce, Bytes{128}, 256, Scope::InterNode, 32).value;
    EXPECT_NEAR(big, 65.0e-6, 0.05e-6);
    // 2 nodes x 1 GPU: 6.6 + 2·5.0 = 16.6 µs (measured 19-20 µs, nccl-tests#150).
    const double pair = model.collective(CollectiveKind::AllReduce, Bytes{128}, 2, Scope::InterNode, 2).value;
    EXPECT_NEAR(pair, 16.6e-6, 0.05e-6);
}

TEST(CostWarnings, OutOfRangeReadIsReportedOncePerCurveAndDirection) {
    const CostModel model = shipped_model();
    (void)model.gemm({64, 64, 64});     // 5.2e5 FLOPs, below the smallest point 1e8
    (void)model.gemm({128, 128, 128});  // below again: no new warning
    ASSERT_EQ(model.warnings().size(), 1U);
    EXPECT_EQ(model.warnings()[0],
              "cost: gemm efficiency read below the profile's smallest point 1e+08 FLOPs; "
              "clamped to 0.1 (first by gemm 64x64x64 batch 1, 524288 FLOPs, 190.735x below it)");
    (void)model.gemm({65536, 65536, 65536});  // 5.6e14 FLOPs, above the largest point 1e14
    ASSERT_EQ(model.warnings().size(), 2U);
    EXPECT_NE(model.warnings()[1].find("above the profile's largest point 1e+14 FLOPs"), std::string::npos);
    // Below the smallest message a collective is latency-bound: the clamped read does not matter.
    (void)model.collective(CollectiveKind::AllReduce, Bytes{1024}, 8, Scope::IntraNode);
    ASSERT_EQ(model.warnings().size(), 2U);
    (void)model.collective(CollectiveKind::AllReduce, Bytes{std::int64_t{1} << 36}, 8, Scope::IntraNode);
    ASSERT_EQ(model.warnings().size(), 3U);
    EXPECT_NE(model.warnings()[2].find("intra-node busbw read above the profile's largest point"),
              std::string::npos);
}

TEST(CostModelContract, RejectsImpossibleCalls) {
    const CostModel model = shipped_model();
    EXPECT_THROW((void)model.gemm({-1, 8, 8}), std::invalid_argument);
    EXPECT_THROW((void)model.memory_bound(Bytes{-1}, MemoryBoundKind::Generic), std::invalid_argument);
    EXPECT_THROW((void)model.collective(CollectiveKind::AllReduce, Bytes{1}, 16, Scope::IntraNode),
                 std::invalid_argument);
    EXPECT_THROW((void)model.collective(CollectiveKind::AllReduce, Bytes{1}, 8, Scope::InterNode, 1),
                 std::invalid_argument);
    EXPECT_THROW((void)model.collective(CollectiveKind::SendRecv, Bytes{1}, 4, Scope::IntraNode),
                 std::invalid_argument);
}

TEST(CostModelContract, NamesMatchTheProfileKeys) {
    EXPECT_STREQ(to_string(CollectiveKind::ReduceScatter), "reduce_scatter");
    EXPECT_STREQ(to_string(Scope::InterNode), "inter_node");
    EXPECT_STREQ(to_string(MemoryBoundKind::ScaleMaskSoftmax), "scale_mask_softmax");
    EXPECT_STREQ(to_string(MemoryBoundKind::BiasDropoutAdd), "bias_dropout_add");
    EXPECT_STREQ(to_string(MemoryBoundKind::Rope), "rope");
    EXPECT_STREQ(to_string(MemoryBoundKind::CrossEntropy), "cross_entropy");
    EXPECT_STREQ(to_string(MemoryBoundKind::CrossEntropyFused), "cross_entropy_fused");
}

}  // namespace
}  // namespace trainsim::cost

namespace trainsim::cost {
namespace {

TEST(CostModelNics, BusyGpusBeyondTheNicsShareThem) {
    // 8 data-parallel groups of one rank per node on 8 rail-aligned NICs: each group has its own NIC.
    // Twice as many busy GPUs as NICs halve each group's bandwidth; the latency is unchanged.
    const CostModel model(
        load_hardware_profile("a100-80gb-selene", std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/hardware"));
    const Bytes big{std::int64_t{1} << 32};
    const Bytes tiny{8};
    auto t = [&](Bytes b, int busy) {
        return model.collective(CollectiveKind::AllReduce, b, 8, Scope::InterNode, 8, busy).value;
    };
    EXPECT_DOUBLE_EQ(t(big, 0), t(big, 8));
    // t = α + bandwidth term, and sharing doubles only the bandwidth term.
    EXPECT_NEAR(t(big, 16) - t(tiny, 16), 2 * (t(big, 8) - t(tiny, 8)), 1e-12);
    EXPECT_NEAR(t(tiny, 16), t(tiny, 8), 1e-8);
}

}  // namespace
}  // namespace trainsim::cost
