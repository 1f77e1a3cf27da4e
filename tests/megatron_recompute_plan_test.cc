// Megatron's recompute policies compiled into recompute plans (recompute/megatron_recompute_plan.h),
// checked layer by layer and micro-batch by micro-batch by hand, and the order the one backward lowering
// runs a compiled plan's recomputations and backwards in.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sim/core/input_error.h"
#include "sim/program/iteration_program.h"
#include "sim/recompute/megatron_recompute_plan.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using recompute::LayerRecompute;
using recompute::megatron_recompute_plan;
using recompute::RecomputePlan;

constexpr LayerRecompute K = LayerRecompute::Keep;
constexpr LayerRecompute S = LayerRecompute::SelectiveOnDemand;
constexpr LayerRecompute F = LayerRecompute::FullOnDemand;
constexpr LayerRecompute C = LayerRecompute::FullChained;

// A small 22B-shaped model on 2 pipeline stages (1F1B), 8 micro-batches, `layers` layers in all.
config::Scenario small(const std::string& layers, std::vector<config::Override> extra) {
    std::vector<config::Override> o = {{"model.num_layers", layers},
                                       {"model.hidden_size", "1024"},
                                       {"model.num_attention_heads", "16"},
                                       {"model.ffn_hidden_size", "4096"},
                                       {"parallelism.tensor_model_parallel_size", "1"},
                                       {"parallelism.pipeline_model_parallel_size", "2"},
                                       {"training.micro_batch_size", "1"},
                                       {"training.global_batch_size", "8"}};
    o.insert(o.end(), extra.begin(), extra.end());
    return testing::shipped_scenario("korthikanti-22b", o);
}

config::Scenario full(const std::string& layers, const std::string& method, const std::string& n,
                      std::vector<config::Override> extra = {}) {
    extra.insert(extra.begin(), {{"training.recompute_granularity", "full"},
                                 {"training.recompute_method", method},
                                 {"training.recompute_num_layers", n}});
    return small(layers, extra);
}

TEST(MegatronRecomputePlan, NoneKeepsAndSelectiveRecomputesEveryLayer) {
    const RecomputePlan none = megatron_recompute_plan(small("8", {}));
    EXPECT_EQ(none.layers, (std::vector<std::vector<LayerRecompute>>{{K, K, K, K}, {K, K, K, K}}));
    EXPECT_TRUE(none.stored_microbatches.empty());
    const RecomputePlan selective =
        megatron_recompute_plan(small("8", {{"training.recompute_granularity", "selective"}}));
    EXPECT_EQ(selective.layers, (std::vector<std::vector<LayerRecompute>>{{S, S, S, S}, {S, S, S, S}}));
    EXPECT_EQ(selective.describe(), "stages 0-1: selective on demand");
}

TEST(MegatronRecomputePlan, UniformMethodCheckpointsBlocksOfNLayers) {
    // 6 layers a stage in blocks of 3: layers 0-2 and 3-5, each recomputed from its first layer's stored
    // input.
    const RecomputePlan plan = megatron_recompute_plan(full("12", "uniform", "3"));
    EXPECT_EQ(plan.layers,
              (std::vector<std::vector<LayerRecompute>>{{F, C, C, F, C, C}, {F, C, C, F, C, C}}));
    // One layer a block: every layer recomputed on its own.
    EXPECT_EQ(megatron_recompute_plan(full("10", "uniform", "1")).layers,
              (std::vector<std::vector<LayerRecompute>>{{F, F, F, F, F}, {F, F, F, F, F}}));
}

TEST(MegatronRecomputePlan, UniformBlocksStartAgainInEachModelChunk) {
    // Interleaved, 2 chunks of 4 layers a stage, blocks of 4: one block a chunk, each from its chunk's
    // first layer (Megatron checkpoints within a chunk's forward).
    const RecomputePlan plan =
        megatron_recompute_plan(full("32", "uniform", "4",
                                     {{"parallelism.pipeline_model_parallel_size", "4"},
                                      {"parallelism.virtual_pipeline_model_parallel_size", "2"}}));
    ASSERT_EQ(plan.layers.size(), 4u);
    for (const auto& stage : plan.layers) {
        EXPECT_EQ(stage, (std::vector<LayerRecompute>{F, C, C, C, F, C, C, C}));
    }
}

TEST(MegatronRecomputePlan, BlockMethodRecomputesTheFirstNLayersOfEachChunk) {
    const RecomputePlan plan = megatron_recompute_plan(full("10", "block", "2"));
    EXPECT_EQ(plan.layers, (std::vector<std::vector<LayerRecompute>>{{F, F, K, K, K}, {F, F, K, K, K}}));
}

TEST(MegatronRecomputePlan, AppendixCKeepsTheFirstMicroBatchesOfEachCycle) {
    // 4 stages, 8 micro-batches, N = 1. Rank r has min(3 - r, 8) warm-up forwards, so cycles of 4, 3, 2
    // and 1 micro-batches; the first of each cycle keeps everything.
    const config::Scenario sc =
        full("8", "uniform", "1",
             {{"parallelism.pipeline_model_parallel_size", "4"},
              {"schedule", "1f1b"},
              {"training.num_microbatches_with_partial_activation_checkpoints", "1"}});
    const RecomputePlan plan = megatron_recompute_plan(sc);
    ASSERT_EQ(plan.stored_microbatches.size(), 4u);
    const std::int64_t periods[] = {4, 3, 2, 1};
    for (std::size_t r = 0; r < 4; ++r) {
        EXPECT_EQ(plan.stored_microbatches[r].period, periods[r]) << "rank " << r;
        EXPECT_EQ(plan.stored_microbatches[r].stored, 1) << "rank " << r;
    }
    // Rank 0: micro-batches 0 and 4 keep, the rest recompute both layers.
    for (std::int64_t mb = 0; mb < 8; ++mb) {
        const LayerRecompute want = mb == 0 || mb == 4 ? K : F;
        EXPECT_EQ(plan.at(0, 0, mb), want) << "micro-batch " << mb;
        EXPECT_EQ(plan.at(0, 1, mb), want) << "micro-batch " << mb;
        EXPECT_EQ(plan.at(2, 1, mb), mb % 2 == 0 ? K : F) << "micro-batch " << mb;
        EXPECT_EQ(plan.at(3, 0, mb), K) << "micro-batch " << mb;  // one in flight: it keeps them all
    }
    EXPECT_EQ(plan.describe(),
              "stage 0: full on demand, micro-batch 0 of every 4 keeps all; stage 1: full on demand, "
              "micro-batch 0 of every 3 keeps all; stage 2: full on demand, micro-batch 0 of every 2 keeps "
              "all; stage 3: full on demand, micro-batch 0 of every 1 keeps all");
}

TEST(MegatronRecomputePlan, OverlappedNeedsTheSearchsPlan) {
    try {
        (void)megatron_recompute_plan(small("8", {{"training.recompute_granularity", "overlapped"}}));
        FAIL() << "expected InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("needs a recompute plan"), std::string::npos) << e.what();
    }
}

// The backward of micro-batch `microbatch` on GPU 0 (stage 0) as "R3 R4 B4 B3 ..." : its recompute and
// compute tasks by layer, consecutive tasks of one layer and kind once.
std::string backward_order(const config::Scenario& sc, std::int32_t microbatch,
                           const RecomputePlan* plan = nullptr) {
    const program::IterationProgram prog =
        program::build_iteration(sc, testing::shipped_cost_model(), program::Fold{}, plan);
    std::string out;
    std::string last;
    for (const program::TaskInfo& t : prog.info) {
        if (t.gpu != engine::GpuId{0} || t.phase != program::Phase::Backward || t.microbatch != microbatch ||
            t.layer < 0) {
            continue;
        }
        std::string step;
        if (t.category == program::TaskCategory::Recompute) {
            step = "R" + std::to_string(t.layer);
        } else if (t.category == program::TaskCategory::Compute) {
            step = "B" + std::to_string(t.layer);
        } else {
            continue;
        }
        if (step != last) {
            out += (out.empty() ? "" : " ") + step;
            last = step;
        }
    }
    return out;
}

TEST(MegatronRecomputePlan, BackwardRecomputesEachBlockThenRunsItsLayersLastFirst) {
    EXPECT_EQ(backward_order(full("12", "uniform", "3"), 0), "R3 R4 R5 B5 B4 B3 R0 R1 R2 B2 B1 B0");
    EXPECT_EQ(backward_order(full("10", "block", "2"), 0), "B4 B3 B2 R1 B1 R0 B0");
    EXPECT_EQ(backward_order(small("10", {}), 0), "B4 B3 B2 B1 B0");
}

TEST(MegatronRecomputePlan, AppendixCMicroBatchesKeepTheirActivations) {
    // 2 stages: rank 0 holds 2 micro-batches in flight, so with N = 1 the even ones keep everything.
    const config::Scenario sc =
        full("4", "uniform", "1",
             {{"schedule", "1f1b"}, {"training.num_microbatches_with_partial_activation_checkpoints", "1"}});
    EXPECT_EQ(backward_order(sc, 0), "B1 B0");
    EXPECT_EQ(backward_order(sc, 1), "R1 B1 R0 B0");
    EXPECT_EQ(backward_order(sc, 2), "B1 B0");
}

TEST(MegatronRecomputePlan, AGivenPlanLowersLikeTheCompiledPolicy) {
    // The plan alone decides: the none scenario under the compiled full-uniform plan runs its blocks.
    const RecomputePlan plan = megatron_recompute_plan(full("12", "uniform", "3"));
    EXPECT_EQ(backward_order(small("12", {}), 0, &plan), "R3 R4 R5 B5 B4 B3 R0 R1 R2 B2 B1 B0");
}

TEST(MegatronRecomputePlan, FsdpGathersEachLayerUnderAGivenPlanToo) {
    // The search's plans go through the same lowering: with FSDP each layer's backward gathers its weights
    // and reduce-scatters its gradients (before, a given plan's backward left them out, and `trainsim
    // recompute` reported 0.80 s where `trainsim run` took 1.14 s on a 24-layer GPT-3 175B, d = 2).
    const config::Scenario sc =
        small("8", {{"parallelism.data_parallel_size", "2"},
                    {"parallelism.data_parallel_sharding_strategy", "optim_grads_params"},
                    {"training.use_distributed_optimizer", "true"},
                    {"training.global_batch_size", "16"}});
    const cost::CostModel cost = testing::shipped_cost_model();
    const RecomputePlan keep = RecomputePlan::uniform(2, 4, LayerRecompute::Keep);
    const program::IterationProgram compiled = program::build_iteration(sc, cost);
    const program::IterationProgram given = program::build_iteration(sc, cost, program::Fold{}, &keep);
    EXPECT_EQ(given.program.size(), compiled.program.size());
    EXPECT_EQ(program::simulate(given).makespan, program::simulate(compiled).makespan);
    // Overlapped recomputation would need the weights gathered for the background lane too.
    const RecomputePlan overlapped = RecomputePlan::uniform(2, 4, LayerRecompute::FullOverlapped);
    EXPECT_THROW((void)program::build_iteration(sc, cost, program::Fold{}, &overlapped), InputError);
}

TEST(MegatronRecomputePlan, RefusesAChainedLayerWithoutABlockToChainFrom) {
    RecomputePlan plan = RecomputePlan::uniform(2, 5, LayerRecompute::FullOnDemand);
    plan.layers[1][2] = LayerRecompute::Keep;
    plan.layers[1][3] = LayerRecompute::FullChained;  // after a kept layer
    try {
        (void)program::build_iteration(small("10", {}), testing::shipped_cost_model(), program::Fold{},
                                       &plan);
        FAIL() << "expected InputError";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "recompute plan: stage 1 layer 3 is full chained, which must follow a full on-demand or "
                  "chained layer of its chunk");
    }
    plan = RecomputePlan::uniform(2, 5, LayerRecompute::FullOnDemand);
    plan.stored_microbatches = {{2, 1}};  // one stage of two
    EXPECT_THROW((void)program::build_iteration(small("10", {}), testing::shipped_cost_model(),
                                                program::Fold{}, &plan),
                 InputError);
}

}  // namespace
}  // namespace trainsim
