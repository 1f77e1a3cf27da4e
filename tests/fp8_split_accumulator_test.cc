// Transformer Engine's split accumulator (training.fp8_split_accumulator, the profile's
// compute.gemm_fp8.split_accumulator_slowdown): TE runs dgrad and wgrad with cuBLASLt's fast
// accumulation off, which the profile's fast-accumulation FP8 curve does not see. Exact times by hand.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sim/core/input_error.h"
#include "sim/core/strict_json.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/hardware_profile.h"
#include "sim/program/iteration_program.h"
#include "sim/report/iteration_report.h"
#include "tests/support/layer_op_spans.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using cost::GemmPrecision;

cost::HardwareProfile h100() {
    return cost::load_hardware_profile("h100-80gb-dgx", testing::source_path("scenarios/hardware"));
}

Json h100_json() {
    const std::string path = testing::source_path("scenarios/hardware/h100-80gb-dgx.json");
    std::ifstream in(path);
    return parse_strict_json(std::string(std::istreambuf_iterator<char>(in), {}), path);
}

TEST(Fp8SplitAccumulatorCost, TakesTheProfilesSlowdownOverTheFastAccumulationCurve) {
    cost::HardwareProfile p = h100();
    p.fp8_gemm_efficiency_vs_flops = cost::Curve{{1e6}, {0.5}, "flat"};
    p.fp8_split_accumulator_slowdown = 1.25;
    const cost::CostModel model(p);
    // 8192³ (2048 tiles on 132 SMs: no wave correction): 2·8192³ / (1979e12 · 0.5) = 1.111 ms fast,
    // 1.389 ms promoting the partial sums.
    const double fast = 2.0 * 8192.0 * 8192.0 * 8192.0 / (1979e12 * 0.5);
    const cost::GemmShape shape{8192, 8192, 8192, 1};
    EXPECT_DOUBLE_EQ(model.gemm(shape, cost::GemmClass::Dense, GemmPrecision::Fp8).value, fast);
    EXPECT_DOUBLE_EQ(model.gemm(shape, cost::GemmClass::Dense, GemmPrecision::Fp8SplitAccumulator).value,
                     fast * 1.25);
    // Dense GEMMs only, as for the fast FP8 GEMM.
    EXPECT_THROW((void)model.gemm(shape, cost::GemmClass::AttentionScore, GemmPrecision::Fp8SplitAccumulator),
                 std::invalid_argument);
}

TEST(Fp8SplitAccumulatorCost, ShippedH100SaysItsSlowdownAndAbsentMeansNone) {
    EXPECT_DOUBLE_EQ(h100().fp8_split_accumulator_slowdown, 1.15);  // S-TORCHAO-2377's 1.1-1.2x, midpoint
    Json root = h100_json();
    root["compute"]["gemm_fp8"].erase("split_accumulator_slowdown");
    EXPECT_DOUBLE_EQ(cost::profile_from_json("h100-80gb-dgx", root).fp8_split_accumulator_slowdown, 1.0);
}

TEST(Fp8SplitAccumulatorCost, ASpeedUpIsRefusedNamingTheKey) {
    Json root = h100_json();
    root["compute"]["gemm_fp8"]["split_accumulator_slowdown"]["value"] = 0.9;
    try {
        (void)cost::profile_from_json("h100-80gb-dgx", root);
        FAIL() << "a slowdown below 1 was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("compute.gemm_fp8.split_accumulator_slowdown.value"),
                  std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("must be at least 1"), std::string::npos) << e.what();
    }
}

// Two 175B layers on one H100 (nothing waits for another GPU): the simulated backward GEMMs take 1.15×
// their fast price, the forward ones exactly that price, and the whole difference shows in the iteration
// time and in the report's split-accumulator line.
TEST(Fp8SplitAccumulatorRun, SimulatedGemmsAndTheReportLine) {
    const std::vector<config::Override> fp8 = {{"training.fp8_format", "hybrid"},
                                               {"hardware.profile", "h100-80gb-dgx"}};
    std::vector<config::Override> no_split = fp8;
    no_split.push_back({"training.fp8_split_accumulator", "false"});
    const config::Scenario on_sc = testing::one_gpu_175b_layers(fp8);
    const config::Scenario off_sc = testing::one_gpu_175b_layers(no_split);
    const cost::CostModel cost(h100());

    const program::IterationProgram prog = program::build_iteration(on_sc, cost);
    const engine::RunResult run = program::simulate(prog);
    const auto fwd = testing::layer_zero_spans(prog, run, program::Phase::Forward);
    const auto bwd = testing::layer_zero_spans(prog, run, program::Phase::Backward);
    // fc2.dgrad of the 175B layer is {m = 2048 tokens, n = ffn 49152, k = h 12288}.
    const program::OpSpan& dgrad = bwd.at("fc2.dgrad");
    ASSERT_EQ(dgrad.op->gemm.m, 2048);
    ASSERT_EQ(dgrad.op->gemm.n, 49152);
    ASSERT_EQ(dgrad.op->gemm.k, 12288);
    const double fast = cost.gemm(dgrad.op->gemm, cost::GemmClass::Dense, GemmPrecision::Fp8).value;
    EXPECT_EQ(dgrad.end - dgrad.start, to_sim_time(Seconds{fast * 1.15}));
    const program::OpSpan& wgrad = bwd.at("fc2.wgrad");
    EXPECT_EQ(wgrad.end - wgrad.start,
              to_sim_time(Seconds{
                  cost.gemm(wgrad.op->gemm, cost::GemmClass::Dense, GemmPrecision::Fp8).value * 1.15}));
    const program::OpSpan& forward = fwd.at("fc2");
    EXPECT_EQ(forward.end - forward.start,
              to_sim_time(cost.gemm(forward.op->gemm, cost::GemmClass::Dense, GemmPrecision::Fp8)));

    const report::IterationReport on = report::make_iteration_report(on_sc, cost, prog, run);
    const program::IterationProgram off_prog = program::build_iteration(off_sc, cost);
    const report::IterationReport off =
        report::make_iteration_report(off_sc, cost, off_prog, program::simulate(off_prog));
    ASSERT_TRUE(on.fp8_time && off.fp8_time);
    EXPECT_EQ(off.fp8_time->split_accumulator.value, 0.0);
    // The line is d·(1 − 1/1.15) over the split GEMMs: what they took beyond the fast rate, up to a
    // nanosecond of rounding per GEMM (2 layers × 2 micro-batches × 8 backward GEMMs).
    const double added = on.fp8_time->fp8_gemm.value - off.fp8_time->fp8_gemm.value;
    EXPECT_GT(added, 0.0);
    EXPECT_NEAR(on.fp8_time->split_accumulator.value, added, 32e-9);
    // One GPU, nothing overlaps the compute stream: the iteration grows by exactly that.
    EXPECT_NEAR(on.iteration_time.value - off.iteration_time.value, added, 1e-9);
}

TEST(Fp8SplitAccumulatorScenario, OffWithoutFp8IsRefusedNamingTheKey) {
    const testing::CommandResult r =
        testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-22b.json") +
                              " --set training.fp8_split_accumulator=false");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("training.fp8_split_accumulator=false requires training.fp8_format"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace
}  // namespace trainsim
