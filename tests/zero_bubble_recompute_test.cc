// Recomputation under the schedules that split the backward (zb-v, dualpipev, dualpipe): Megatron's
// none, selective and full policies and the overlapped scheduler's plan all run, full recomputation
// lowers the peak the memory replay finds (the checkpoints are held until W, the recomputed forward only
// until B ends), and overlapped recomputation hides in the waits as under 1F1B.
#include <gtest/gtest.h>

#include <string>

#include "sim/memory/activation_timeline.h"
#include "sim/program/backward_split.h"
#include "sim/recompute_search/plan_evaluation.h"
#include "sim/recompute_search/policy_comparison.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_ops.h"
#include "sim/workload/transformer_layer.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using recompute::LayerRecompute;
using recompute::RecomputePlan;

// 8 layers of 1024 on t = 2, p = 2, two chunks a rank, 4 micro-batches of 4 (m ≥ 2p for DualPipe).
config::Scenario small(const std::string& schedule) {
    return testing::shipped_scenario("korthikanti-22b",
                                     {{"schedule", schedule},
                                      {"model.num_layers", "8"},
                                      {"model.hidden_size", "1024"},
                                      {"model.num_attention_heads", "16"},
                                      {"model.ffn_hidden_size", "4096"},
                                      {"model.seq_length", "2048"},
                                      {"parallelism.tensor_model_parallel_size", "2"},
                                      {"parallelism.pipeline_model_parallel_size", "2"},
                                      {"parallelism.virtual_pipeline_model_parallel_size", "2"},
                                      {"training.micro_batch_size", "4"},
                                      {"training.global_batch_size", "16"},
                                      {"training.recompute_granularity", "overlapped"}});
}

class SplitBackwardRecompute : public ::testing::TestWithParam<const char*> {};

TEST_P(SplitBackwardRecompute, EveryPolicyRunsAndFullRecomputeLowersThePeak) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const config::Scenario sc = small(GetParam());
    const recompute_search::PolicyComparison c = recompute_search::compare_policies(sc, cost);
    ASSERT_EQ(c.rows.size(), 5u);
    const recompute_search::PolicyRow &none = c.rows[0], &selective = c.rows[1], &full = c.rows[2];
    const recompute_search::PolicyRow &overlapped = c.rows[3], &on_demand = c.rows[4];
    EXPECT_EQ(none.policy, "none");
    EXPECT_EQ(full.policy, "full");
    for (const recompute_search::PolicyRow& row : c.rows) {
        EXPECT_GT(row.iteration_time.value, 0.0) << row.policy;
    }
    // Selective keeps all but the core attention's activations, full only each layer's input.
    EXPECT_LT(selective.peak_memory, none.peak_memory);
    EXPECT_LT(full.peak_memory, selective.peak_memory);
    // And pays for it in recomputation, none of which the Megatron policies hide.
    EXPECT_EQ(none.exposed_recompute.value, 0.0);
    EXPECT_GT(selective.exposed_recompute.value, 0.0);
    EXPECT_GT(full.exposed_recompute.value, selective.exposed_recompute.value);
    EXPECT_GT(full.iteration_time, none.iteration_time);
    // The overlapped plan as under 1F1B (recompute_test.cc): never slower than the same plan on demand.
    EXPECT_LE(overlapped.iteration_time, on_demand.iteration_time);
    EXPECT_LE(overlapped.peak_memory, c.budget);

    // With a budget between full's and selective's peaks only full of Megatron's policies fits; the
    // scheduler's plan fits too and is no slower than full.
    config::Scenario tight = sc;
    tight.training.recompute_memory_budget = (full.peak_memory.value + selective.peak_memory.value) / 2;
    const recompute_search::PolicyComparison t = recompute_search::compare_policies(tight, cost);
    ASSERT_EQ(t.rows.size(), 5u);
    EXPECT_FALSE(t.rows[0].fits);
    EXPECT_FALSE(t.rows[1].fits);
    EXPECT_TRUE(t.rows[2].fits);
    EXPECT_TRUE(t.rows[3].fits) << t.rows[3].plan;
    EXPECT_LE(t.rows[3].peak_memory, t.budget);
    EXPECT_LE(t.rows[3].iteration_time, t.rows[2].iteration_time) << t.rows[3].plan;
    EXPECT_LE(t.rows[3].iteration_time, t.rows[4].iteration_time) << t.rows[3].plan;
    EXPECT_NE(t.rows[3].plan.find("full"), std::string::npos) << t.rows[3].plan;
}

// Full recomputation of every layer on the background lane: it runs while the compute stream waits
// (for W passes' neighbours, TP collectives) and peaks no higher than full recompute on demand.
TEST_P(SplitBackwardRecompute, OverlappedFullRecomputeHidesAndKeepsTheLowPeak) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const config::Scenario sc = small(GetParam());
    const std::int64_t layers = sc.stage_num_layers(0);
    const Bytes unlimited{std::int64_t{1} << 40};
    const auto hidden = recompute_search::evaluate_plan(
        sc, cost, RecomputePlan::uniform(2, layers, LayerRecompute::FullOverlapped, 1), unlimited);
    const auto on_demand = recompute_search::evaluate_plan(
        sc, cost, RecomputePlan::uniform(2, layers, LayerRecompute::FullOnDemand), unlimited);
    const auto keep = recompute_search::evaluate_plan(
        sc, cost, RecomputePlan::uniform(2, layers, LayerRecompute::Keep), unlimited);
    EXPECT_GT(hidden.report.breakdown.hidden_recompute.value, 0.0);
    EXPECT_LT(hidden.iteration_time, on_demand.iteration_time);
    EXPECT_LT(on_demand.peak_memory, keep.peak_memory);
    EXPECT_LT(hidden.peak_memory, keep.peak_memory);
}

// Megatron's partial checkpointing counts a 1F1B rank's in-flight micro-batches; the CLI refuses it for
// these schedules with exit status 2, naming the key and the rule.
TEST_P(SplitBackwardRecompute, CliRefusesPartialCheckpointingWithExitTwo) {
    const std::string schedule = GetParam();
    const auto bad = testing::run_trainsim(
        "run " + testing::source_path("scenarios/korthikanti-175b.json") + " --set schedule=" + schedule +
        " --set parallelism.virtual_pipeline_model_parallel_size=2 --set training.recompute_granularity=full"
        " --set training.num_microbatches_with_partial_activation_checkpoints=2");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("training.num_microbatches_with_partial_activation_checkpoints requires schedule "
                           "\"1f1b\""),
              std::string::npos)
        << bad.err;
    EXPECT_NE(bad.err.find("got \"" + schedule + "\""), std::string::npos) << bad.err;
}

// W reads the inputs its weight GEMMs saved. Under full recomputation those are recomputed in B, so they
// stay until W; the rest of the recomputed forward (attention's tensors, masks) goes when B ends. One
// layer on one GPU under ZB-H1, one micro-batch: F, B, W. Between B's end and W's start the GPU holds
// the layer's checkpoint, what the output layer saved (its W is still to run) and the recomputed qkv,
// proj, fc1 and fc2 inputs; the embedding's dropout mask went with the embedding's backward, in B.
TEST(SplitBackwardRecomputeMemory, WeightGemmInputsOfARecomputedLayerStayUntilW) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const config::Scenario sc = testing::shipped_scenario(
        "korthikanti-22b", {{"schedule", "zb-h1"},
                            {"model.num_layers", "1"},
                            {"parallelism.tensor_model_parallel_size", "1"},
                            {"parallelism.pipeline_model_parallel_size", "1"},
                            {"parallelism.virtual_pipeline_model_parallel_size", "1"},
                            {"training.micro_batch_size", "1"},
                            {"training.global_batch_size", "1"},
                            {"training.recompute_granularity", "full"}});
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    const engine::RunResult run = program::simulate(prog);
    // W starts with the first task made of wgrad GEMMs alone.
    SimTime w_start = run.makespan;
    for (std::size_t t = 0; t < prog.info.size(); ++t) {
        if (prog.info[t].priced < 0) {
            continue;
        }
        bool weight_only = true;
        for (const program::OpSpan& span :
             program::op_spans(prog, engine::TaskId::from_index(t), run.timings[t])) {
            weight_only = weight_only && span.op != nullptr && program::is_weight_gradient(*span.op);
        }
        if (weight_only) {
            w_start = std::min(w_start, run.timings[t].start);
        }
    }
    ASSERT_LT(w_start, run.makespan);
    const memory::ActivationTimeline timeline = memory::activation_timelines(prog, run).at(0);
    Bytes held{0};
    for (const memory::MemorySample& sample : timeline.samples) {
        if (sample.time <= w_start) {
            held = sample.held;
        }
    }
    const workload::LayerShape shape = workload::layer_shape_of(sc);
    auto saved = [](const workload::OpList& ops, bool weight_gemms_only) {
        std::int64_t total = 0;
        for (const workload::Op& op : ops) {
            if (!weight_gemms_only || program::saved_for_weight_gradient(op)) {
                total += op.saved_bytes.value;
            }
        }
        return total;
    };
    const std::int64_t weight_inputs = saved(workload::layer_full_recompute(shape), true);
    EXPECT_GT(weight_inputs, 0);
    EXPECT_EQ(held.value, saved(workload::layer_forward(shape, config::RecomputeGranularity::Full), false) +
                              saved(workload::output_forward(shape), false) + weight_inputs);
}

INSTANTIATE_TEST_SUITE_P(Schedules, SplitBackwardRecompute,
                         ::testing::Values("zb-v", "dualpipev", "dualpipe"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                             std::string name = info.param;
                             std::erase(name, '-');
                             return name;
                         });

}  // namespace
}  // namespace trainsim
