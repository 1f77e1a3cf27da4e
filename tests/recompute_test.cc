// Overlapped recomputation: the scheduler's plan is never slower than recomputing the same ops on
// demand, never slower than a Megatron policy that fits, and fits whenever one does; the heuristic
// scheduler is within 5 % of the exhaustive optimum on small instances.
#include <gtest/gtest.h>

#include "sim/core/input_error.h"
#include "sim/recompute_search/policy_comparison.h"
#include "sim/recompute_search/recompute_scheduler.h"
#include "sim/recompute_search/stage_partition.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using recompute::LayerRecompute;
using recompute::RecomputePlan;

// The shipped pipelined scenarios with 2p micro-batches instead of 4p to 8p: the same stages, layers and
// memory budget, and the same peak (the first stage holds p micro-batches either way), at a quarter to a
// half of the events of each of the ~25 simulations a comparison runs (12.5 -> 3.3 s of CPU sanitized).
const std::vector<std::pair<const char*, const char*>> kShortPipelines = {
    {"scenarios/korthikanti-22b.json", "4"},             // 1 micro-batch, no pipeline: as shipped
    {"scenarios/korthikanti-175b.json", "16"},           // p 8 (v 3): 16 of 64
    {"scenarios/lynx/lynx-gpt3-2.7b-8gpu.json", "32"},   // p 4, b 4: 8 of 16
    {"scenarios/lynx/lynx-gpt3-13b-16gpu.json", "16"}};  // p 4, b 2: 8 of 32

config::Scenario short_pipeline(const char* path, const char* global_batch) {
    return config::load_scenario(testing::source_path(path), {{"training.global_batch_size", global_batch}});
}

TEST(OverlappedRecompute, OrderingAgainstMegatronPoliciesAndOnDemand) {
    const cost::CostModel cost = testing::shipped_cost_model();
    for (const auto& [path, global_batch] : kShortPipelines) {
        const config::Scenario sc = short_pipeline(path, global_batch);
        const recompute_search::PolicyComparison c = recompute_search::compare_policies(sc, cost);
        ASSERT_EQ(c.rows.size(), 5u);
        const auto& overlapped = c.rows[3];
        const auto& on_demand = c.rows[4];
        EXPECT_EQ(overlapped.policy, "overlapped");
        EXPECT_LE(overlapped.iteration_time.value, on_demand.iteration_time.value) << path;
        bool any_fits = false;
        for (std::size_t i = 0; i < 3; ++i) {  // none, selective, full
            if (c.rows[i].fits) {
                any_fits = true;
                EXPECT_LE(overlapped.iteration_time.value, c.rows[i].iteration_time.value)
                    << path << " vs " << c.rows[i].policy;
            }
        }
        EXPECT_EQ(overlapped.fits, any_fits) << path;
        EXPECT_LE(overlapped.peak_memory, c.budget) << path;
    }
}

TEST(OverlappedRecompute, HidesRecomputationInTheWaits) {
    // 175B: the chosen plan recomputes core attention in the windows and exposes none of it. 2p
    // micro-batches, as above (10.7 -> 2.7 s of CPU sanitized): the same plan is chosen and a quarter of
    // the micro-batches hide a quarter of the time, 47.3 ms of 189.2 ms, so the bar is a quarter of 0.1 s.
    const cost::CostModel cost = testing::shipped_cost_model();
    const config::Scenario sc = short_pipeline("scenarios/korthikanti-175b.json", "16");
    const recompute_search::PolicyComparison c = recompute_search::compare_policies(sc, cost);
    EXPECT_GT(c.rows[3].hidden_recompute.value, 0.025);
    EXPECT_LT(c.rows[3].exposed_recompute.value, c.rows[4].exposed_recompute.value);
    EXPECT_LT(c.rows[3].iteration_time.value, c.rows[1].iteration_time.value);  // beats selective on demand
}

config::Scenario tiny(const char* global_batch = "16") {
    return testing::shipped_scenario("korthikanti-22b", {{"model.num_layers", "4"},
                                                         {"model.hidden_size", "1024"},
                                                         {"model.num_attention_heads", "16"},
                                                         {"model.ffn_hidden_size", "4096"},
                                                         {"model.seq_length", "2048"},
                                                         {"parallelism.tensor_model_parallel_size", "2"},
                                                         {"parallelism.pipeline_model_parallel_size", "2"},
                                                         {"training.micro_batch_size", "4"},
                                                         {"training.global_batch_size", global_batch},
                                                         {"training.recompute_granularity", "overlapped"}});
}

TEST(OverlappedRecompute, HiddenRecomputeIsPlacedInTheWaitsItFilled) {
    // The tiny 2-stage layout with full recomputation overlapped on every layer: the hidden time is
    // split by the wait it ran in, and the parts add up to the hidden total of every stage.
    const cost::CostModel cost = testing::shipped_cost_model();
    const auto e = recompute_search::evaluate_plan(
        tiny(), cost, RecomputePlan::uniform(2, 2, LayerRecompute::FullOverlapped, 0),
        Bytes{std::int64_t{1} << 40});
    ASSERT_EQ(e.report.stages.size(), 2u);
    for (const report::StageReport& s : e.report.stages) {
        const report::HiddenRecompute& h = s.time.hidden_in;
        EXPECT_GT(s.time.hidden_recompute.value, 0.0) << "stage " << s.stage;
        EXPECT_NEAR(h.total().value, s.time.hidden_recompute.value, 1e-9) << "stage " << s.stage;
        for (const Seconds part : {h.tensor_parallel, h.data_parallel, h.pipeline_warmup, h.pipeline_steady,
                                   h.pipeline_cooldown}) {
            EXPECT_GE(part.value, 0.0);
        }
        // No data parallelism, so nothing can hide behind a data-parallel reduction; the 2-way TP
        // all-reduces offer room on both stages.
        EXPECT_EQ(h.data_parallel.value, 0.0);
        EXPECT_GT(h.tensor_parallel.value, 0.0);
        // Stage 0 waits for stage 1's gradients between its backwards, room for the next micro-batch's
        // recomputation; the last stage runs each backward right after its forward, so a micro-batch's
        // recomputation can only hide behind the backward's own TP collectives there.
        if (s.stage == 0) {
            EXPECT_GT((h.pipeline_warmup + h.pipeline_steady + h.pipeline_cooldown).value, 0.0);
        }
    }
    // Without overlapped recomputation nothing is hidden anywhere.
    const auto on_demand = recompute_search::evaluate_plan(
        tiny(), cost, RecomputePlan::uniform(2, 2, LayerRecompute::FullOnDemand),
        Bytes{std::int64_t{1} << 40});
    EXPECT_EQ(on_demand.report.breakdown.hidden_in.total().value, 0.0);
    EXPECT_EQ(on_demand.report.breakdown.hidden_recompute.value, 0.0);
}

TEST(RecomputeSchedulers, HeuristicIsWithinFivePercentOfTheOptimum) {
    const cost::CostModel cost = testing::shipped_cost_model();
    // 2 micro-batches on the 2 stages: the same 625 plans (4 layers, 5 choices each) and the same
    // warm-up, steady and cool-down waits to fill, at half the events of each of the ~7000 simulations.
    const config::Scenario sc = tiny("8");
    // Budgets from generous to tight: between the peaks of keeping everything and recomputing everything.
    const auto keep = recompute_search::evaluate_plan(
        sc, cost, RecomputePlan::uniform(2, 2, LayerRecompute::Keep), Bytes{std::int64_t{1} << 40});
    const auto full = recompute_search::evaluate_plan(
        sc, cost, RecomputePlan::uniform(2, 2, LayerRecompute::FullOnDemand), Bytes{std::int64_t{1} << 40});
    ASSERT_LT(full.peak_memory, keep.peak_memory);
    // One record of simulated plans for the four budgets: a plan's time and peak do not depend on the
    // budget, so each of the 1713 plans is simulated once, not four times (0.60 -> 0.16 s of CPU
    // unsanitized).
    recompute_search::PlanEvaluations plans(sc, cost);
    for (const double share : {1.0, 0.75, 0.5, 0.25}) {
        recompute_search::SearchOptions options;
        options.memory_budget =
            Bytes{full.peak_memory.value +
                  static_cast<std::int64_t>(
                      share * static_cast<double>((keep.peak_memory - full.peak_memory).value))};
        const auto heuristic = recompute_search::heuristic_schedule(plans, options);
        const auto optimal = recompute_search::optimal_schedule(plans, options);
        ASSERT_TRUE(optimal.best.fits);
        EXPECT_TRUE(heuristic.best.fits);
        EXPECT_LE(optimal.best.iteration_time.value, heuristic.best.iteration_time.value);
        EXPECT_LE(heuristic.best.iteration_time.value, 1.05 * optimal.best.iteration_time.value)
            << "budget share " << share << ": heuristic " << heuristic.best.plan.describe() << ", optimal "
            << optimal.best.plan.describe();
        EXPECT_LT(heuristic.evaluations, 20);
        EXPECT_EQ(optimal.evaluations, 625 + 2 * (625 - 81));  // lookahead 0/2 only where something overlaps
        // Each plan simulated once over all budgets; the heuristic's uniform plans are among the optimum's.
        EXPECT_EQ(plans.simulated(), std::size_t{625 + 2 * (625 - 81)});
    }
    // What the shared record returns is what simulating afresh under that budget gives, fits included.
    for (const Bytes budget : {full.peak_memory, keep.peak_memory}) {
        const RecomputePlan plan = RecomputePlan::uniform(2, 2, LayerRecompute::SelectiveOverlapped, 2);
        const auto fresh = recompute_search::evaluate_plan(sc, cost, plan, budget);
        const auto kept = plans.evaluate(plan, budget);
        EXPECT_EQ(kept.iteration_time, fresh.iteration_time);
        EXPECT_EQ(kept.peak_memory, fresh.peak_memory);
        EXPECT_EQ(kept.fits, fresh.fits);
        EXPECT_EQ(kept.report.fingerprint, fresh.report.fingerprint);
    }
}

TEST(RecomputeSchedulers, OptimalRefusesLargeInstances) {
    const cost::CostModel cost = testing::shipped_cost_model();
    recompute_search::SearchOptions options;
    options.memory_budget = Bytes{std::int64_t{1} << 40};
    try {
        (void)recompute_search::optimal_schedule(testing::shipped_scenario("korthikanti-175b"), cost,
                                                 options);
        FAIL() << "expected the search to be refused";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("use \"heuristic\""), std::string::npos) << e.what();
    }
}

TEST(RecomputePlan, DescribesRunsOfStagesAndLayers) {
    RecomputePlan plan = RecomputePlan::uniform(4, 2, LayerRecompute::SelectiveOverlapped, 0);
    plan.layers[3][1] = LayerRecompute::Keep;
    EXPECT_EQ(plan.describe(),
              "stages 0-2: selective overlapped; stage 3: 1 x selective overlapped, 1 x keep "
              "(after the previous backward frees each layer)");
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(StagePartition, NeverWorseThanTheUniformSplitAndBalancesTheOutputLayer) {
    // Lynx-like GPT-3 6.7B on 2 stages under 32 GiB: the last stage also runs the output layer and
    // the loss, and the first holds two micro-batches; the partitioner gives the last stage fewer layers.
    const cost::CostModel cost = testing::shipped_cost_model();
    const config::Scenario sc =
        config::load_scenario(testing::source_path("scenarios/lynx/lynx-gpt3-6.7b-8gpu.json"));
    recompute_search::PartitionOptions options;
    options.search.memory_budget = Bytes{*sc.training.recompute_memory_budget};
    const recompute_search::PartitionResult r = recompute_search::partition_stages(sc, cost, options);
    EXPECT_EQ(r.start.split, (std::vector<std::int64_t>{16, 16}));
    EXPECT_EQ(r.best.split[0] + r.best.split[1], 32);
    EXPECT_LT(r.best.split[1], r.best.split[0]);
    ASSERT_TRUE(r.best.search.best.fits);
    EXPECT_LT(r.best.search.best.iteration_time.value, r.start.search.best.iteration_time.value);
    EXPECT_GE(r.splits_evaluated, 2);
    // The chosen split reproduces when the user runs it.
    config::Scenario chosen = sc;
    chosen.parallelism.layers_per_pipeline_stage = r.best.split;
    const recompute_search::PlanEvaluation again =
        recompute_search::evaluate_plan(chosen, cost, r.best.search.best.plan, options.search.memory_budget);
    EXPECT_EQ(again.iteration_time.value, r.best.search.best.iteration_time.value);
}

TEST(StagePartition, TheComparisonTableGainsAPartitionedRow) {
    const cost::CostModel cost = testing::shipped_cost_model();
    // 2p micro-batches of each, as in OrderingAgainstMegatronPoliciesAndOnDemand (8.7 -> 3.1 s of CPU
    // sanitized).
    for (const auto& [path, global_batch] : {std::pair{"scenarios/lynx/lynx-gpt3-1.3b-8gpu.json", "32"},
                                             std::pair{"scenarios/lynx/lynx-gpt3-13b-16gpu.json", "16"}}) {
        const config::Scenario sc = short_pipeline(path, global_batch);
        const recompute_search::PolicyComparison c =
            recompute_search::compare_policies(sc, cost, /*partition=*/true);
        ASSERT_EQ(c.rows.size(), 6u);
        ASSERT_TRUE(c.partition.has_value());
        EXPECT_EQ(c.rows[5].policy, "overlapped, partitioned");
        EXPECT_LE(c.rows[5].iteration_time.value, c.rows[3].iteration_time.value) << path;
        EXPECT_EQ(c.rows[5].fits, c.rows[3].fits) << path;
    }
}

}  // namespace
}  // namespace trainsim
