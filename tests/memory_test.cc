// Memory against the paper: the Figure 7 reduction table, the interleaved first-stage factor
// (1 + (p − 1)/(p·v)), output-tensor deallocation (Appendix B) and partial checkpoints (Appendix C).
#include <gtest/gtest.h>

#include "sim/program/iteration_program.h"
#include "sim/report/activation_table.h"
#include "sim/report/iteration_report.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

report::IterationReport simulate(const config::Scenario& sc) {
    static const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    return report::make_iteration_report(sc, cost, prog, program::simulate(prog));
}

TEST(Figure7, SharesOfTheTensorParallelBaselineMatchTable2) {
    // papers.md §1.10, derived from Table 2 with t = 8: TP+SP, TP+selective, TP+SP+selective, full.
    const std::map<std::string, std::array<double, 4>> expected = {
        {"korthikanti-22b", {66.8, 49.4, 16.1, 7.6}},
        {"korthikanti-175b", {62.0, 56.5, 18.5, 8.7}},
        {"korthikanti-530b", {58.3, 61.9, 20.2, 9.5}},
        {"korthikanti-1t", {58.3, 61.9, 20.2, 9.5}},
    };
    for (const auto& [name, shares] : expected) {
        const report::ActivationTable t = report::activation_table(testing::shipped_scenario(name));
        ASSERT_EQ(t.rows.size(), 5u);
        EXPECT_DOUBLE_EQ(t.rows[0].share_of_baseline, 1.0);
        for (std::size_t i = 0; i < 4; ++i) {
            EXPECT_NEAR(100 * t.rows[i + 1].share_of_baseline, shares[i], 0.05) << name << " row " << i + 1;
        }
    }
}

TEST(Figure7, CommandPrintsTheTable) {
    const auto r = testing::run_trainsim("activations --format json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j.size(), 4u);
    EXPECT_EQ(j[0]["name"], "korthikanti-22b");
    EXPECT_NEAR(j[0]["rows"][3]["share_of_baseline"].get<double>(), 0.161, 0.001);
}

TEST(Interleaved, FirstStageHoldsOnePlusPMinusOneOverPVTimesLLayers) {
    // Korthikanti §4.2.3: the interleaved first stage keeps L·(1 + (p − 1)/(p·v)) layers of activations.
    // 175B: p = 8, v = 3, L = 96 → 124 layer-micro-batches, each 34·sbh/t with SP + selective; plus per
    // virtual micro-batch of chunk 0 the embedding dropout mask, plus the transiently rematerialised
    // core attention of one layer.
    const config::Scenario sc = testing::shipped_scenario("korthikanti-175b");
    const report::IterationReport r = simulate(sc);
    const std::int64_t sbh_t = 2048 * 12288 / 8;
    const std::int64_t per_layer = 34 * sbh_t;
    const double layers = 96.0 * (1.0 + 7.0 / 24.0);
    ASSERT_DOUBLE_EQ(layers, 124.0);
    // Chunk 0's micro-batches hold the embedding mask: at the peak, the first group's 8 (their chunk-0
    // backward comes last) and 8 of the second group (warm-up F24..F29, then F30 and F31 of steady state).
    const std::int64_t in_flight_chunk0 = 16;
    const std::int64_t attention = 5 * 96 * 2048 / 12288 * sbh_t;
    EXPECT_EQ(r.stages[0].microbatches_in_flight, 31);  // W + 1 = (p − 1)·2 + (v − 1)·p + 1
    EXPECT_EQ(r.stages[0].activation_bytes.value,
              static_cast<std::int64_t>(layers) * per_layer + in_flight_chunk0 * sbh_t + attention);
}

TEST(AppendixB, KeepingStageOutputsCostsOneTensorPerMicrobatchInFlight) {
    const config::Scenario freed = testing::shipped_scenario("korthikanti-1t", {{"training.global_batch_size", "128"}});
    const config::Scenario kept = testing::shipped_scenario(
        "korthikanti-1t", {{"training.global_batch_size", "128"}, {"training.deallocate_pipeline_outputs", "false"}});
    const report::IterationReport a = simulate(freed);
    const report::IterationReport b = simulate(kept);
    const std::int64_t output = 2048 * 25600 / 8 * 2;  // [s/t, b, h] in 16 bits with SP
    EXPECT_EQ(b.stages[0].activation_bytes.value - a.stages[0].activation_bytes.value, 64 * output);
    // A middle stage frees each kept output at its backward too: 63 in flight, not every micro-batch.
    EXPECT_EQ(b.stages[1].microbatches_in_flight, 63);
    EXPECT_EQ(b.stages[1].activation_bytes.value - a.stages[1].activation_bytes.value, 63 * output);
    EXPECT_EQ(b.stages[63].activation_bytes.value, a.stages[63].activation_bytes.value);  // the last sends nothing
    EXPECT_EQ(b.iteration_time.value, a.iteration_time.value);
}

TEST(AppendixC, PartialCheckpointsTradeMemoryForRecompute) {
    auto run = [](const char* n) {
        std::vector<config::Override> o = {{"parallelism.virtual_pipeline_model_parallel_size", "1"},
                                           {"training.recompute_granularity", "full"},
                                           {"training.global_batch_size", "32"}};
        if (n != nullptr) {
            o.push_back({"training.num_microbatches_with_partial_activation_checkpoints", n});
        }
        return simulate(testing::shipped_scenario("korthikanti-175b", o));
    };
    const report::IterationReport all = run(nullptr);
    const report::IterationReport some = run("2");
    EXPECT_LT(some.iteration_time.value, all.iteration_time.value);
    EXPECT_LT(some.breakdown.recompute.value, all.breakdown.recompute.value);
    EXPECT_GT(some.stages[0].activation_bytes.value, all.stages[0].activation_bytes.value);
    EXPECT_GT(some.stages[0].time.recompute.value, 0.0);
    EXPECT_LT(some.hfu, some.mfu * 4.0 / 3.0);  // fewer recomputed FLOPs than full recompute's 4/3
}

TEST(Fits, OverflowIsReportedPerStageInBytes) {
    const report::IterationReport r = simulate(testing::shipped_scenario("korthikanti-22b"));
    EXPECT_FALSE(r.fits_in_memory);
    EXPECT_EQ(r.stages[0].overflow_bytes, r.stages[0].peak_memory_bytes - r.memory_capacity_bytes);
    EXPECT_EQ(r.memory_capacity_bytes, r.memory_visible_bytes - r.memory_reserved_bytes);
    const report::IterationReport fits = simulate(testing::shipped_scenario(
        "korthikanti-22b",
        {{"training.recompute_granularity", "selective"}, {"parallelism.sequence_parallel", "true"}}));
    EXPECT_TRUE(fits.fits_in_memory);
    EXPECT_EQ(fits.stages[0].overflow_bytes.value, 0);
}

}  // namespace
}  // namespace trainsim
