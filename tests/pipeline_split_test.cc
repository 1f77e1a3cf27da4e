// Uneven pipeline splits (parallelism.layers_per_pipeline_stage): where each virtual stage's layers
// start, that the explicit uniform split is the default, and that moving a layer between stages moves
// exactly its compute, its weights and its activations.
#include <gtest/gtest.h>

#include "sim/engine/fingerprint.h"
#include "sim/memory/static_memory.h"
#include "sim/program/iteration_program.h"
#include "sim/report/iteration_report.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using config::Override;

struct SplitRun {
    report::IterationReport report;
    std::string fingerprint;
};

SplitRun simulate(const config::Scenario& sc) {
    static const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    const engine::RunResult run = program::simulate(prog);
    return {report::make_iteration_report(sc, cost, prog, run), engine::fingerprint_hex(run)};
}

// 1F1B on two stages of a small 22B-shaped model without recomputation: 4 layers, 4 micro-batches.
config::Scenario two_stages(const std::string& split) {
    std::vector<Override> o = {{"model.num_layers", "4"},
                               {"parallelism.pipeline_model_parallel_size", "2"},
                               {"training.micro_batch_size", "1"},
                               {"training.global_batch_size", "4"}};
    if (!split.empty()) {
        o.push_back({"parallelism.layers_per_pipeline_stage", split});
    }
    return testing::shipped_scenario("korthikanti-22b", o);
}

TEST(PipelineSplit, VirtualStagesStartAfterTheChunksBeforeThem) {
    // p = 3, v = 2, ranks with 2, 4 and 6 layers: chunks of 1, 2 and 3 layers, run chunk-major.
    const config::Scenario sc = testing::shipped_scenario(
        "korthikanti-22b", {{"model.num_layers", "12"},
                            {"parallelism.pipeline_model_parallel_size", "3"},
                            {"parallelism.virtual_pipeline_model_parallel_size", "2"},
                            {"parallelism.layers_per_pipeline_stage", "[2,4,6]"},
                            {"training.micro_batch_size", "1"},
                            {"training.global_batch_size", "6"}});
    EXPECT_EQ(sc.chunk_num_layers(0, 0), 1);
    EXPECT_EQ(sc.chunk_num_layers(2, 1), 3);
    const std::vector<std::int64_t> first{0, 1, 3, 6, 7, 9};
    for (std::int64_t vs = 0; vs < 6; ++vs) {
        EXPECT_EQ(sc.first_layer_of_virtual_stage(vs), first[static_cast<std::size_t>(vs)]) << vs;
    }
    EXPECT_GT(simulate(sc).report.iteration_time.value, 0.0);
}

TEST(PipelineSplit, TheExplicitUniformSplitIsTheDefault) {
    const SplitRun implicit = simulate(two_stages(""));
    const SplitRun explicit_split = simulate(two_stages("[2,2]"));
    EXPECT_EQ(implicit.fingerprint, explicit_split.fingerprint);
    EXPECT_EQ(implicit.report.iteration_time.value, explicit_split.report.iteration_time.value);
    EXPECT_EQ(implicit.report.peak_memory_bytes, explicit_split.report.peak_memory_bytes);
}

TEST(PipelineSplit, MovingALayerMovesItsComputeWeightsAndActivations) {
    const config::Scenario even = two_stages("[2,2]");
    const config::Scenario uneven = two_stages("[1,3]");
    const SplitRun a = simulate(even);
    const SplitRun b = simulate(uneven);
    ASSERT_EQ(a.report.stages.size(), 2u);
    ASSERT_EQ(b.report.stages.size(), 2u);
    EXPECT_EQ(b.report.stages[0].layers, 1);
    EXPECT_EQ(b.report.stages[1].layers, 3);
    // One layer's forward and backward for every micro-batch leave stage 0 and arrive on stage 1.
    const double moved = a.report.stages[0].time.compute.value - b.report.stages[0].time.compute.value;
    EXPECT_GT(moved, 0.0);
    EXPECT_NEAR(b.report.stages[1].time.compute.value - a.report.stages[1].time.compute.value, moved, 1e-9);
    // Weights, gradients and Adam state: 18 bytes per parameter of the moved layer.
    const std::int64_t layer_bytes = 18 * workload::layer_parameters_per_rank(workload::layer_shape_of(even));
    EXPECT_EQ((memory::static_bytes(even, 0) - memory::static_bytes(uneven, 0)).value, layer_bytes);
    EXPECT_EQ((memory::static_bytes(uneven, 1) - memory::static_bytes(even, 1)).value, layer_bytes);
    // Stage 0 keeps p = 2 micro-batches in flight: two layers' activations fewer at its peak.
    const Bytes per_layer =
        workload::layer_activation_bytes(workload::layer_shape_of(even), config::RecomputeGranularity::None);
    EXPECT_EQ(a.report.stages[0].microbatches_in_flight, 2);
    EXPECT_EQ((a.report.stages[0].activation_bytes - b.report.stages[0].activation_bytes).value,
              2 * per_layer.value);
}

}  // namespace
}  // namespace trainsim
