// trainsim plan: the layout space, the memory lower bound (never above the simulated peak), the
// ranking, and the CLI's errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>

#include "sim/config/scenario_reader.h"
#include "sim/core/input_error.h"
#include "sim/cost/hardware_profile.h"
#include "sim/plan/explain.h"
#include "sim/plan/layout_space.h"
#include "sim/plan/memory_bound.h"
#include "sim/plan/pipeline_splits.h"
#include "sim/plan/planner.h"
#include "sim/plan/time_bound.h"
#include "sim/sweep/point_runner.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

// GPT-22B's layer cut to 8 layers with a short sequence: every layout simulates in milliseconds.
plan::PlanRequest small_request(std::int64_t gpus, std::int64_t batch) {
    plan::PlanRequest r;
    r.base = config::parse_scenario(
        R"({"model": {"preset": "gpt-22b", "num_layers": 8, "seq_length": 512},
            "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1},
            "training": {"micro_batch_size": 1, "global_batch_size": 1},
            "hardware": {"profile": "a100-80gb-selene"}})",
        "small");
    r.gpus = gpus;
    r.global_batch = batch;
    r.max_micro_batch = 4;
    return r;
}

plan::PlanOptions plan_options() {
    plan::PlanOptions o;
    o.jobs = 2;
    o.profile_directory = testing::source_path("scenarios/hardware");
    return o;
}

TEST(PlanSpace, LayoutsAreValidDistinctAndUseTheLargestDataParallelSize) {
    const plan::PlanRequest request = small_request(24, 12);
    const plan::LayoutSpace space = plan::enumerate_layouts(request);
    ASSERT_FALSE(space.valid.empty());
    EXPECT_GT(space.considered, space.valid.size());
    std::set<std::string> labels;
    for (const config::Scenario& sc : space.valid) {
        EXPECT_TRUE(labels.insert(sc.name).second) << sc.name;
        EXPECT_LE(sc.num_gpus(), 24);
        EXPECT_EQ(sc.training.global_batch_size, 12);
        const std::int64_t tp =
            sc.parallelism.tensor_model_parallel_size * sc.parallelism.pipeline_model_parallel_size;
        const std::int64_t d = sc.parallelism.data_parallel_size;
        // No larger d fits the GPUs and divides the batch.
        for (std::int64_t bigger = d + 1; tp * bigger <= 24; ++bigger) {
            EXPECT_NE(12 % (sc.training.micro_batch_size * bigger), 0) << sc.name;
        }
        EXPECT_NO_THROW(config::validate_scenario(sc));
    }
    // t 4 × p 2 × d 3 uses all 24 GPUs; t 8 × p 2 leaves 8 idle (d 2 would need 32).
    EXPECT_TRUE(labels.contains("t4 p2 d3 v1 b1 selective sp distopt"));
    // Every data-parallel sharding where d > 1 (so the bound tests below cover ZeRO-2 and FSDP too).
    EXPECT_TRUE(labels.contains("t4 p2 d3 v1 b1 selective sp zero2"));
    EXPECT_TRUE(labels.contains("t4 p2 d3 v1 b1 selective sp fsdp"));
    EXPECT_FALSE(labels.contains("t8 p2 d1 v1 b1 full sp fsdp"));  // nothing to shard among 1 replica
    // Megatron's accounted split: 8 layers + embedding + loss on 5 stages, 1 + 2 + 2 + 2 + 1.
    std::size_t uneven = 0;
    for (const config::Scenario& sc : space.valid) {
        if (sc.parallelism.account_for_embedding_in_pipeline_split) {
            ++uneven;
            EXPECT_EQ(sc.parallelism.layers_per_pipeline_stage, (std::vector<std::int64_t>{1, 2, 2, 2, 1}))
                << sc.name;
        }
    }
    EXPECT_GT(uneven, 0u);
    EXPECT_TRUE(labels.contains("t1 p5 d4 v1 b1 selective uneven distopt"));
    EXPECT_TRUE(labels.contains("t8 p2 d1 v1 b1 full sp"));
    EXPECT_FALSE(labels.contains("t8 p4 d1 v2 b1 full sp"));  // 32 GPUs
}

// Simulates layouts and checks both bounds against each (never above the simulated peak and time),
// counting how many are tight: the memory bound within 5 % of the peak, the time bound over
// `time_share` of the simulated time.
struct BoundTally {
    double time_share;
    std::size_t checked = 0, tight_memory = 0, tight_time = 0;

    void check(const config::Scenario& sc, sweep::PointRunner& runner, const cost::CostModel& cost) {
        const sweep::PointOutcome out = runner.simulate(sc);
        ASSERT_TRUE(out.report) << sc.name << ": " << out.error;
        const Bytes memory = plan::memory_lower_bound(sc);
        const Seconds time = plan::iteration_time_lower_bound(sc, cost);
        EXPECT_LE(memory.value, out.report->peak_memory_bytes.value) << sc.name;
        EXPECT_LE(time, out.report->iteration_time) << sc.name;
        ++checked;
        tight_memory += memory.value * 100 >= out.report->peak_memory_bytes.value * 95 ? 1 : 0;
        tight_time += time.value >= time_share * out.report->iteration_time.value ? 1 : 0;
    }
};

// Both bounds against every layout of a grid that includes interleaving, all three recompute policies, SP
// and every data-parallel sharding, each layout simulated once for both. The memory bound is what makes
// pruning safe, the time bound what makes stopping early exact.
TEST(PlanBounds, HoldForEveryLayoutOfTheEvenGrid) {
    const plan::LayoutSpace space = plan::enumerate_layouts(small_request(16, 16));
    ASSERT_GT(space.valid.size(), 100u);
    const cost::CostModel cost = testing::shipped_cost_model();
    sweep::PointRunner runner(testing::source_path("scenarios/hardware"), {});
    BoundTally tally{0.5};
    for (const config::Scenario& sc : space.valid) {
        tally.check(sc, runner, cost);
    }
    // Not vacuous: most layouts' memory bound is within 5% of their peak and, on this small,
    // communication-heavy model, most time bounds are over half the simulated time.
    EXPECT_GT(tally.tight_memory * 2, space.valid.size())
        << tally.tight_memory << " of " << space.valid.size();
    EXPECT_GT(tally.tight_time * 2, space.valid.size()) << tally.tight_time << " of " << space.valid.size();
}

// On a profile with FP8 tensor cores the planner searches FP8 beside BF16: both bounds hold on that grid
// too (FP8 weight copies in memory, FP8 GEMM prices in time).
TEST(PlanBounds, HoldForFp8LayoutsOnH100) {
    plan::PlanRequest request = small_request(8, 8);
    request.base.hardware.profile = "h100-80gb-dgx";
    request.search_fp8 = true;
    const plan::LayoutSpace space = plan::enumerate_layouts(request);
    const cost::CostModel cost(
        cost::load_hardware_profile("h100-80gb-dgx", testing::source_path("scenarios/hardware")));
    sweep::PointRunner runner(testing::source_path("scenarios/hardware"), {});
    std::size_t fp8 = 0;
    for (const config::Scenario& sc : space.valid) {
        fp8 += sc.training.fp8_format ? 1 : 0;
        const sweep::PointOutcome out = runner.simulate(sc);
        ASSERT_TRUE(out.report) << sc.name << ": " << out.error;
        EXPECT_LE(plan::memory_lower_bound(sc).value, out.report->peak_memory_bytes.value) << sc.name;
        EXPECT_LE(plan::iteration_time_lower_bound(sc, cost), out.report->iteration_time) << sc.name;
    }
    EXPECT_GT(fp8, 20u);
    EXPECT_EQ(fp8 * 2, space.valid.size());  // each layout in BF16 and in FP8
    // The planner turns the search on from the profile, and not on A100 (no FP8 tensor cores). Only the
    // layouts it enumerates are compared: a budget of almost nothing prunes every one of them by its memory
    // bound before any is priced or simulated (all were simulated above; 0.48 -> 0.33 s of CPU unsanitized).
    plan::PlanOptions options = plan_options();
    options.memory_headroom = 0.999999;
    const plan::PlanResult h100 = plan::run_plan(request, options);
    EXPECT_EQ(h100.valid, space.valid.size());
    EXPECT_EQ(h100.pruned_by_memory, h100.valid);
    plan::PlanRequest a100 = small_request(8, 8);
    const plan::PlanResult a100_plan = plan::run_plan(a100, options);
    EXPECT_EQ(a100_plan.pruned_by_memory, a100_plan.valid);
    EXPECT_EQ(a100_plan.valid * 2, h100.valid);
}

// The same two bounds on the zero-bubble (zb-h1, zb-h2, zb-v) and DualPipeV layouts (plan --schedules): W
// passes hold activations longer and run a step later, which neither bound may overlook.
TEST(PlanBounds, HoldForTheZeroBubbleAndDualPipeSchedules) {
    plan::PlanRequest request = small_request(16, 16);
    request.schedules = {config::ScheduleKind::ZbH1, config::ScheduleKind::ZbH2, config::ScheduleKind::ZbV,
                         config::ScheduleKind::DualPipe, config::ScheduleKind::DualPipeV};
    // Micro-batch 1 only: the schedules are what this test is about; 687 layouts of all five (b up to 4:
    // 1815, 1.02 -> 0.54 s of CPU unsanitized).
    request.max_micro_batch = 1;
    const plan::LayoutSpace space = plan::enumerate_layouts(request);
    const cost::CostModel cost = testing::shipped_cost_model();
    sweep::PointRunner runner(testing::source_path("scenarios/hardware"), {});
    std::set<config::ScheduleKind> seen;
    for (const config::Scenario& sc : space.valid) {
        seen.insert(sc.schedule);
        const sweep::PointOutcome out = runner.simulate(sc);
        ASSERT_TRUE(out.report) << sc.name << ": " << out.error;
        EXPECT_LE(plan::memory_lower_bound(sc).value, out.report->peak_memory_bytes.value) << sc.name;
        EXPECT_LE(plan::iteration_time_lower_bound(sc, cost), out.report->iteration_time) << sc.name;
    }
    EXPECT_EQ(seen.size(), 5u);
}

// Each schedule makes a layout of its own, so the layouts searched count each (combination, schedule)
// pair, as the valid ones do: with several schedules the planner once printed "searched 435 layouts (438
// valid)".
TEST(PlanSpace, SearchedLayoutsCountEverySchedule) {
    plan::PlanRequest request = small_request(16, 16);
    request.max_micro_batch = 1;
    const plan::LayoutSpace one = plan::enumerate_layouts(request);
    request.schedules = {config::ScheduleKind::Auto, config::ScheduleKind::ZbH1,
                         config::ScheduleKind::DualPipeV};
    const plan::LayoutSpace three = plan::enumerate_layouts(request);
    EXPECT_EQ(three.considered, 3 * one.considered);
    EXPECT_LE(one.valid.size(), one.considered);
    EXPECT_LE(three.valid.size(), three.considered);
    EXPECT_GT(three.valid.size(), one.valid.size());
}

// Without tensor parallelism or recomputation the bound of a rank is exactly its simulated compute
// time: m micro-batches of its chunks' forwards and backwards plus its optimizer step. In a V (zb-v,
// dualpipev) the busiest rank is rank 0, whose chunk 1 is the last stage: it runs the embedding and the
// output layer. The bound that put the output layer on rank p − 1's chunk 1 came out 1.3 ms (0.56 %)
// below rank 0's compute time here: rank p − 1's layers and output layer, without rank 0's embedding.
TEST(PlanBounds, CountTheOutputLayerOnRankZeroOfAV) {
    const cost::CostModel cost = testing::shipped_cost_model();
    sweep::PointRunner runner(testing::source_path("scenarios/hardware"), {});
    for (const std::string schedule : {"zb-v", "dualpipev"}) {
        SCOPED_TRACE(schedule);
        const config::Scenario sc = config::parse_scenario(R"({"schedule": ")" + schedule + R"(",
                "model": {"preset": "gpt-22b", "num_layers": 4, "seq_length": 2048, "hidden_size": 1024,
                          "num_attention_heads": 8, "ffn_hidden_size": 4096},
                "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 2,
                                "virtual_pipeline_model_parallel_size": 2},
                "training": {"micro_batch_size": 4, "global_batch_size": 32},
                "hardware": {"profile": "a100-80gb-selene"}})",
                                                           "v");
        const sweep::PointOutcome out = runner.simulate(sc);
        ASSERT_TRUE(out.report) << out.error;
        const std::vector<report::StageReport>& stages = out.report->stages;
        ASSERT_EQ(stages.size(), 2u);
        EXPECT_GT(stages[0].time.busy(), stages[1].time.busy());
        const Seconds bound = plan::iteration_time_lower_bound(sc, cost);
        EXPECT_NEAR(bound.value, stages[0].time.busy().value, 1e-9);
        EXPECT_LE(bound, out.report->iteration_time);
    }
}

// A small mixture-of-experts model for the expert-parallel axis: 4 layers of h 1024, the first dense
// (moe_layer_freq [0, 1, 1, 1]), then 6 gated experts of 1024 (top-2); 12 GPUs on nodes of 4, so that
// ep 3 and 6 groups straddle nodes on some stages and not on others (t·c·d = 12: ranks 3–5 span nodes 0
// and 1, ranks 0–2 only node 0) and the all-to-all runs over NVLink or the NICs.
plan::PlanRequest small_moe_request(std::int64_t gpus, std::int64_t batch) {
    plan::PlanRequest r;
    r.base = config::parse_scenario(
        R"({"model": {"num_layers": 4, "hidden_size": 1024, "num_attention_heads": 8,
            "seq_length": 512, "padded_vocab_size": 32768, "ffn_hidden_size": 4096, "swiglu": true,
            "normalization": "RMSNorm", "position_embedding_type": "rope", "add_bias_linear": false,
            "num_experts": 6, "moe_router_topk": 2, "moe_ffn_hidden_size": 1024,
            "moe_token_dispatcher_type": "alltoall", "moe_grouped_gemm": true, "moe_layer_freq": [0, 1, 1, 1]},
            "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1},
            "training": {"micro_batch_size": 1, "global_batch_size": 1, "attention_backend": "flash"},
            "hardware": {"profile": "h100-80gb-dgx", "gpus_per_node": 4}})",
        "small-moe");
    r.gpus = gpus;
    r.global_batch = batch;
    r.max_micro_batch = 2;
    r.max_expert_tensor_parallel =
        1;  // the expert-TP axis has its own tests (SearchesExpertTensorParallelism)
    return r;
}

// The expert-parallel axis: every ep Megatron-Core accepts (it divides num_experts and t·c·d), etp 1,
// only the data-parallel states the MoE layer models, and --max-expert-parallel caps it.
TEST(PlanSpace, SearchesExpertParallelismOfAnMoeModel) {
    const plan::LayoutSpace space = plan::enumerate_layouts(small_moe_request(12, 12));
    ASSERT_FALSE(space.valid.empty());
    std::set<std::int64_t> eps;
    std::set<std::string> labels;
    for (const config::Scenario& sc : space.valid) {
        const auto& par = sc.parallelism;
        const std::int64_t ep = par.expert_model_parallel_size;
        eps.insert(ep);
        EXPECT_TRUE(labels.insert(sc.name).second) << sc.name;
        EXPECT_EQ(6 % ep, 0) << sc.name;
        EXPECT_EQ(par.tensor_model_parallel_size * par.context_parallel_size * par.data_parallel_size % ep, 0)
            << sc.name;
        EXPECT_EQ(par.expert_tensor_parallel(), 1) << sc.name;
        EXPECT_NE(sc.name.find(" ep" + std::to_string(ep)), std::string::npos) << sc.name;
        EXPECT_FALSE(sc.training.fp8_format) << sc.name;
        EXPECT_TRUE(par.data_parallel_sharding_strategy == config::DataParallelSharding::NoShard) << sc.name;
        EXPECT_NO_THROW(config::validate_scenario(sc));
    }
    EXPECT_EQ(eps, (std::set<std::int64_t>{1, 2, 3, 6}));
    // t 2 × d 6 holds ep 1, 2, 3 and 6; with SP, as Megatron requires beside TP.
    for (const char* label :
         {"t2 p1 d6 v1 b1 selective ep1 sp distopt", "t2 p1 d6 v1 b1 selective ep6 sp distopt",
          "t1 p2 d6 v1 b1 none ep3 distopt", "t4 p1 d3 v1 b1 full ep3 sp"}) {
        EXPECT_TRUE(labels.contains(label)) << label;
    }
    EXPECT_FALSE(labels.contains("t2 p1 d6 v1 b1 selective ep6 distopt"));  // EP beside TP needs SP
    EXPECT_FALSE(labels.contains("t1 p4 d3 v1 b1 none ep2 distopt"));       // 2 does not divide t·d = 3
    plan::PlanRequest capped = small_moe_request(12, 12);
    capped.max_expert_parallel = 2;
    for (const config::Scenario& sc : plan::enumerate_layouts(capped).valid) {
        EXPECT_LE(sc.parallelism.expert_model_parallel_size, 2) << sc.name;
    }
    // A dense model's layouts are unchanged by the axis: no ep in their labels.
    for (const config::Scenario& sc : plan::enumerate_layouts(small_request(8, 8)).valid) {
        EXPECT_EQ(sc.name.find(" ep"), std::string::npos) << sc.name;
    }
}

// The expert tensor-parallel axis: powers of two up to a node (4 GPUs here) dividing moe_ffn_hidden_size,
// with etp·ep dividing t·c·d; `etp2` in the label above 1; --max-expert-tensor-parallel caps it.
TEST(PlanSpace, SearchesExpertTensorParallelism) {
    plan::PlanRequest request = small_moe_request(12, 12);
    request.max_expert_tensor_parallel = std::numeric_limits<std::int64_t>::max();
    std::set<std::pair<std::int64_t, std::int64_t>> sizes;
    std::set<std::string> labels;
    for (const config::Scenario& sc : plan::enumerate_layouts(request).valid) {
        const auto& par = sc.parallelism;
        const std::int64_t etp = par.expert_tensor_parallel(), ep = par.expert_model_parallel_size;
        sizes.insert({etp, ep});
        EXPECT_TRUE(labels.insert(sc.name).second) << sc.name;
        EXPECT_EQ(1024 % etp, 0) << sc.name;
        EXPECT_LE(etp, 4) << sc.name;
        EXPECT_EQ(par.tensor_model_parallel_size * par.context_parallel_size * par.data_parallel_size %
                      (etp * ep),
                  0)
            << sc.name;
        EXPECT_EQ(sc.name.find(" etp") != std::string::npos, etp > 1) << sc.name;
        EXPECT_NO_THROW(config::validate_scenario(sc));
    }
    // t·d = 12: etp 2 beside ep 1, 2, 3, 6 and etp 4 beside ep 1 and 3 (4·2 does not divide 12).
    EXPECT_TRUE(sizes.contains({2, 6}));
    EXPECT_TRUE(sizes.contains({4, 3}));
    EXPECT_FALSE(sizes.contains({4, 2}));
    EXPECT_FALSE(sizes.contains({8, 1}));  // beyond a node
    for (const char* label :
         {"t1 p1 d12 v1 b1 none ep3 etp4 distopt", "t2 p1 d6 v1 b1 selective ep6 etp2 sp distopt",
          "t4 p1 d3 v1 b1 full ep1 etp4 sp"}) {
        EXPECT_TRUE(labels.contains(label)) << label;
    }
    request.max_expert_tensor_parallel = 2;
    for (const config::Scenario& sc : plan::enumerate_layouts(request).valid) {
        EXPECT_LE(sc.parallelism.expert_tensor_parallel(), 2) << sc.name;
    }
}

// Both bounds on every layout of the MoE grid: expert weights, gradients and optimizer state per rank
// change with ep (sharded over edp = t·c·d/ep), the dispatch and combine all-to-alls run inside or
// across nodes, and the first layer is dense (its own activations and compute).
TEST(PlanSpace, KeepsTheScenariosRecomputeModulesForSelectiveLayoutsOnly) {
    // A scenario's recompute_modules list belongs to selective recomputation: the planner's none and full
    // candidates drop it, its selective ones keep it (kept beside full, every full layout was refused).
    plan::PlanRequest request = small_moe_request(12, 12);
    request.base.training.recompute_modules =
        config::RecomputeModules{config::RecomputeModule::CoreAttn, config::RecomputeModule::Mlp};
    std::set<config::RecomputeGranularity> seen;
    for (const config::Scenario& sc : plan::enumerate_layouts(request).valid) {
        const bool selective = sc.training.recompute_granularity == config::RecomputeGranularity::Selective;
        seen.insert(sc.training.recompute_granularity);
        EXPECT_EQ(sc.training.recompute_modules.has_value(), selective) << sc.name;
        EXPECT_NO_THROW(config::validate_scenario(sc)) << sc.name;
    }
    EXPECT_TRUE(seen.contains(config::RecomputeGranularity::None));
    EXPECT_TRUE(seen.contains(config::RecomputeGranularity::Full));
    EXPECT_TRUE(seen.contains(config::RecomputeGranularity::Selective));
}

TEST(PlanBounds, HoldForMixtureOfExpertsLayouts) {
    const plan::LayoutSpace space = plan::enumerate_layouts(small_moe_request(12, 12));
    ASSERT_GT(space.valid.size(), 100u);
    const cost::CostModel cost(
        cost::load_hardware_profile("h100-80gb-dgx", testing::source_path("scenarios/hardware")));
    sweep::PointRunner runner(testing::source_path("scenarios/hardware"), {});
    BoundTally tally{0.4};
    for (const config::Scenario& sc : space.valid) {
        tally.check(sc, runner, cost);
    }
    // Not vacuous: most memory bounds are within 5% of the peak, and most time bounds over 40% of the
    // simulated time (the median is 49%: the gradient reduction, which MoE runs do not overlap here, and
    // the pipeline transfers are outside the bound).
    EXPECT_GT(tally.tight_memory * 2, space.valid.size())
        << tally.tight_memory << " of " << space.valid.size();
    EXPECT_GT(tally.tight_time * 2, space.valid.size()) << tally.tight_time << " of " << space.valid.size();
}

// Both bounds on the layouts with expert TP above 1 (its all-gather and reduce-scatter inside or across
// the 4-GPU nodes, the EP group's stride etp, the expert weights split over etp).
TEST(PlanBounds, HoldForExpertTensorParallelLayouts) {
    plan::PlanRequest request = small_moe_request(12, 12);
    request.max_expert_tensor_parallel = std::numeric_limits<std::int64_t>::max();
    const cost::CostModel cost(
        cost::load_hardware_profile("h100-80gb-dgx", testing::source_path("scenarios/hardware")));
    sweep::PointRunner runner(testing::source_path("scenarios/hardware"), {});
    BoundTally tally{0.4};
    for (const config::Scenario& sc : plan::enumerate_layouts(request).valid) {
        if (sc.parallelism.expert_tensor_parallel() > 1 && sc.training.micro_batch_size == 1) {
            tally.check(sc, runner, cost);
        }
    }
    ASSERT_GT(tally.checked, 30u);
    EXPECT_GT(tally.tight_memory * 2, tally.checked) << tally.tight_memory << " of " << tally.checked;
    EXPECT_GT(tally.tight_time * 2, tally.checked) << tally.tight_time << " of " << tally.checked;
}

// The expert-parallel size changes the memory bound as the static bytes change: fewer local experts
// and their state sharded over fewer replicas.
TEST(PlanMemoryBound, FollowsTheExpertParallelSize) {
    std::map<std::int64_t, std::int64_t> bound_of_ep;
    for (const config::Scenario& sc : plan::enumerate_layouts(small_moe_request(12, 12)).valid) {
        if (sc.name.starts_with("t1 p1 d12 v1 b1 none ep") && sc.name.ends_with(" distopt")) {
            bound_of_ep[sc.parallelism.expert_model_parallel_size] = plan::memory_lower_bound(sc).value;
        }
    }
    ASSERT_EQ(bound_of_ep.size(), 4u);
    // ep 1 holds all 6 experts of each of the 3 MoE layers, ep 6 one: the weights and gradients fall
    // faster than the optimizer state, sharded over edp = 12/ep replicas, grows.
    EXPECT_GT(bound_of_ep[1], bound_of_ep[2]);
    EXPECT_GT(bound_of_ep[2], bound_of_ep[6]);
}

// --top N equals --exhaustive on the MoE space.
TEST(Plan, StoppingEarlyGivesTheSameTopAsSimulatingEverythingWithExperts) {
    plan::PlanOptions exact = plan_options();
    exact.top = 4;
    plan::PlanOptions everything = exact;
    everything.exhaustive = true;
    // Micro-batch 1 only: the expert-parallel sizes are what this test is about, and all four still rank
    // (b up to 2 searched 1236 layouts instead of 618: 1.13 -> 0.65 s of CPU unsanitized).
    plan::PlanRequest request = small_moe_request(12, 24);
    request.max_micro_batch = 1;
    const plan::PlanResult fast = plan::run_plan(request, exact);
    const plan::PlanResult all = plan::run_plan(request, everything);
    EXPECT_LT(fast.simulated, all.simulated);
    EXPECT_EQ(fast.failed + all.failed, 0u);
    EXPECT_EQ(fast.skipped_by_time + fast.simulated, all.simulated);
    ASSERT_GE(fast.ranked.size(), 4u);
    std::set<std::int64_t> eps;
    for (const plan::RankedLayout& layout : all.ranked) {
        eps.insert(layout.scenario.parallelism.expert_model_parallel_size);
    }
    EXPECT_EQ(eps.size(), 4u);  // layouts of every ep fit and rank
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(fast.ranked[i].report.iteration_time, all.ranked[i].report.iteration_time) << i;
        EXPECT_EQ(fast.ranked[i].scenario.name, all.ranked[i].scenario.name) << i;
    }
}

TEST(Plan, StoppingEarlyGivesTheSameTopAsSimulatingEverything) {
    plan::PlanOptions exact = plan_options();
    exact.top = 4;
    plan::PlanOptions everything = exact;
    everything.exhaustive = true;
    // Micro-batch 1 only, as with experts: 402 layouts, of which stopping early skips 162 (b up to 4: 1168
    // and 764; 0.92 -> 0.53 s of CPU unsanitized).
    plan::PlanRequest request = small_request(16, 32);
    request.max_micro_batch = 1;
    const plan::PlanResult fast = plan::run_plan(request, exact);
    const plan::PlanResult all = plan::run_plan(request, everything);
    EXPECT_LT(fast.simulated, all.simulated);
    EXPECT_EQ(fast.skipped_by_time + fast.simulated, all.simulated);
    ASSERT_GE(fast.ranked.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(fast.ranked[i].report.iteration_time, all.ranked[i].report.iteration_time) << i;
    }
}

// The per-chunk layer counts a split resolves to, in Megatron's virtual-stage order.
std::vector<std::int64_t> chunk_layers(const plan::PipelineSplit& split, std::int64_t layers) {
    config::Scenario sc = small_request(1, 1).base;
    sc.model.num_layers = layers;
    split.apply_to(sc.parallelism);
    config::resolve_pipeline_split(sc);
    std::vector<std::int64_t> out;
    for (std::int64_t c = 0; c < split.chunks; ++c) {
        for (std::int64_t r = 0; r < split.stages; ++r) {
            out.push_back(sc.chunk_num_layers(r, c));
        }
    }
    return out;
}

// decoder_first/last splits: DeepSeek-V3's published 3 + 14 × 4 + 2 (61 layers, p 16) and Llama 3.1
// 405B's 126 layers on 16 ranks of 2 chunks, 6 or 8 on the ends (7 + 7 is the accounted split, not
// searched twice); and, against every (first, last) Megatron-LM accepts (first, last, mid positive
// multiples of v summing to L, transformer_config.py), exactly the family pipeline_splits.h names: the
// fewest middle layers that leave no end heavier, the ends within v of each other.
TEST(PlanSplits, FirstLastSplitsAreTheBalancedOnesMegatronAccepts) {
    auto first_last = [](std::int64_t layers, std::int64_t p) {
        std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> out;  // (v, first, last)
        for (const plan::PipelineSplit& s : plan::pipeline_splits(layers, p)) {
            if (s.stages == p && s.kind == plan::SplitKind::FirstLast) {
                out.insert({s.chunks, s.first, s.last});
            }
        }
        return out;
    };
    using Set = std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>>;
    EXPECT_EQ(first_last(61, 16), (Set{{1, 3, 2}, {1, 2, 3}}));
    EXPECT_EQ(first_last(126, 16), (Set{{2, 8, 6}, {2, 6, 8}}));
    for (const std::int64_t layers : {10, 11, 12, 61, 126}) {
        SCOPED_TRACE(layers);
        const std::vector<plan::PipelineSplit> splits = plan::pipeline_splits(layers, layers + 2);
        std::set<std::tuple<std::int64_t, std::int64_t, std::vector<std::int64_t>>> seen;  // p, v, chunks
        for (const plan::PipelineSplit& s : splits) {
            const std::vector<std::int64_t> chunks = chunk_layers(s, layers);
            EXPECT_EQ(std::accumulate(chunks.begin(), chunks.end(), std::int64_t{0}), layers);
            EXPECT_TRUE(seen.insert({s.stages, s.chunks, chunks}).second)
                << "p" << s.stages << " v" << s.chunks;  // distinct
        }
        for (std::int64_t p = 3; p <= layers; ++p) {
            Set expected;
            for (std::int64_t v = 1; v <= layers; ++v) {
                // The smallest middle for which some accepted (first, last) within v of each other has
                // no end above it; then those ends.
                for (std::int64_t mid = v; mid * p <= layers + 2 * mid; mid += v) {
                    Set at_mid;
                    for (std::int64_t first = v; first <= mid; first += v) {
                        const std::int64_t last = layers - (p - 2) * mid - first;
                        if (last >= v && last <= mid && last % v == 0 && std::abs(first - last) <= v &&
                            !(first == mid && last == mid) &&
                            !(v == 1 && first == mid - 1 && last == first)) {
                            at_mid.insert({v, first, last});
                        }
                    }
                    bool balanced_exists = false;  // even or accounted ends count as found, and stop
                    for (std::int64_t first = v; first <= mid; first += v) {
                        const std::int64_t last = layers - (p - 2) * mid - first;
                        balanced_exists |=
                            last >= v && last <= mid && last % v == 0 && std::abs(first - last) <= v;
                    }
                    if (balanced_exists) {
                        expected.insert(at_mid.begin(), at_mid.end());
                        break;
                    }
                }
            }
            EXPECT_EQ(first_last(layers, p), expected) << "p " << p;
        }
    }
}

// 10 layers on 12 GPUs: the accounted split's 12 slots fall on p = 3, 4, 6 and 12, and with a batch
// of 24 every such p leaves a micro-batch count the interleaved schedule accepts (a multiple of p).
plan::PlanRequest uneven_request() {
    plan::PlanRequest r = small_request(12, 24);
    r.base.model.num_layers = 10;
    return r;
}

// The accounted split with interleaving, exactly where Megatron-LM accepts it: p > 2 divides L + 2, v
// divides the (L + 2) / p slots of a rank (arguments.py and get_num_layers_to_build in
// megatron/core/transformer/transformer_block.py), with v = 1 at least 2 slots (trainsim's rule), and
// v > 1 where the interleaved schedule runs (m a multiple of p). The first virtual stage (rank 0, chunk
// 0) gives one slot to the embedding and the last (rank p − 1, chunk v − 1) one to the loss.
TEST(PlanSpace, SearchesTheAccountedSplitWithInterleavingWhereMegatronAcceptsIt) {
    const plan::LayoutSpace space = plan::enumerate_layouts(uneven_request());
    std::set<std::pair<std::int64_t, std::int64_t>> searched;  // (p, v) at t 1, b 1
    std::set<std::string> labels;
    for (const config::Scenario& sc : space.valid) {
        const auto& par = sc.parallelism;
        labels.insert(sc.name);
        if (!par.account_for_embedding_in_pipeline_split) {
            continue;
        }
        EXPECT_TRUE(par.account_for_loss_in_pipeline_split) << sc.name;
        EXPECT_NE(sc.name.find(" uneven"), std::string::npos) << sc.name;
        const std::int64_t p = par.pipeline_model_parallel_size;
        const std::int64_t v = par.virtual_pipeline_model_parallel_size;
        EXPECT_EQ(12 % p, 0) << sc.name;
        EXPECT_EQ(12 / p % v, 0) << sc.name;
        if (v > 1) {
            EXPECT_EQ(sc.num_microbatches() % p, 0) << sc.name;
        }
        if (par.tensor_model_parallel_size == 1 && sc.training.micro_batch_size == 1) {
            searched.insert({p, v});
        }
    }
    // t 1, b 1: d = 12 / p and m = 24 / d = 2p, a multiple of p, so every (p, v) Megatron accepts is
    // there: p 3 (4 slots: v 1, 2, 4), p 4 (3: v 1, 3), p 6 (2: v 1, 2); not p 12 (1 slot).
    EXPECT_EQ(searched, (std::set<std::pair<std::int64_t, std::int64_t>>{
                            {3, 1}, {3, 2}, {3, 4}, {4, 1}, {4, 3}, {6, 1}, {6, 2}}));
    // The layers of each virtual stage, in Megatron's order (chunk 0 of ranks 0..p − 1, then chunk 1...).
    const std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::int64_t>> chunks{
        {{3, 2}, {1, 2, 2, 2, 2, 1}},
        {{3, 4}, {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}},
        {{4, 3}, {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}},
        {{6, 2}, {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}}};
    std::size_t checked = 0;
    for (const config::Scenario& sc : space.valid) {
        const auto& par = sc.parallelism;
        const auto expected =
            chunks.find({par.pipeline_model_parallel_size, par.virtual_pipeline_model_parallel_size});
        if (par.account_for_embedding_in_pipeline_split && expected != chunks.end()) {
            EXPECT_EQ(par.layers_per_virtual_stage, expected->second) << sc.name;
            ++checked;
        }
    }
    EXPECT_GT(checked, 100u);
    for (const char* label :
         {"t1 p3 d4 v2 b1 selective uneven distopt", "t1 p3 d4 v4 b1 full uneven",
          "t1 p3 d4 v2 b1 selective first4 last2 distopt", "t1 p3 d4 v2 b1 none first2 last4",
          "t2 p6 d1 v2 b1 none sp uneven", "t1 p4 d3 v3 b2 selective uneven fsdp"}) {
        EXPECT_TRUE(labels.contains(label)) << label;
    }
    // v 2 on p 4 would split 3 slots in 2 (Megatron refuses), and 5 even layers per rank on p 2 do not
    // divide by 2.
    EXPECT_FALSE(labels.contains("t1 p4 d3 v2 b1 selective uneven distopt"));
    EXPECT_FALSE(labels.contains("t1 p2 d6 v2 b1 selective distopt"));
}

// Both bounds on every uneven layout of that grid (chunks of 0, 1 and 2 layers, the embedding and the
// loss on chunks without a layer, ends lighter than the middle ranks; the accounted split and
// decoder_first/last 4 + 4 + 2 on 2 chunks) and of 11 layers on 12 GPUs (decoder_first/last without
// interleaving: 4 + 4 + 3, 3 + 3 + 3 + 2, 2 + 2 + 2 + 2 + 2 + 1 and the mirrors; not 1 + 3 + 3 + 3 + 1:
// 5 stages do not divide the 12 GPUs).
TEST(PlanBounds, HoldForUnevenSplitsWithAndWithoutInterleaving) {
    const cost::CostModel cost = testing::shipped_cost_model();
    sweep::PointRunner runner(testing::source_path("scenarios/hardware"), {});
    // Micro-batch 1 only: the splits are what this test is about, and 426 uneven layouts (204 interleaved,
    // 228 decoder_first/last) are still checked (b up to 4: 1440, 1.08 -> 0.55 s of CPU unsanitized).
    plan::PlanRequest ten = uneven_request();
    ten.max_micro_batch = 1;
    plan::PlanRequest eleven = ten;
    eleven.base.model.num_layers = 11;
    std::size_t interleaved = 0, first_last = 0;
    BoundTally tally{0.5};
    for (const plan::PlanRequest& request : {ten, eleven}) {
        for (const config::Scenario& sc : plan::enumerate_layouts(request).valid) {
            const auto& par = sc.parallelism;
            if (!sc.uneven_split()) {
                continue;
            }
            interleaved += par.virtual_pipeline_model_parallel_size > 1 ? 1 : 0;
            first_last += par.decoder_first_pipeline_num_layers ? 1 : 0;
            tally.check(sc, runner, cost);
        }
    }
    EXPECT_GT(interleaved, 100u);
    EXPECT_GT(first_last, 100u);
    // Not vacuous, as on the even grid.
    EXPECT_GT(tally.tight_memory * 2, tally.checked) << tally.tight_memory << " of " << tally.checked;
    EXPECT_GT(tally.tight_time * 2, tally.checked) << tally.tight_time << " of " << tally.checked;
}

// --top N equals --exhaustive on a space with accounted splits on 3, 4 and 6 interleaved stages.
TEST(Plan, StoppingEarlyGivesTheSameTopAsSimulatingEverythingWithUnevenInterleaving) {
    plan::PlanOptions exact = plan_options();
    exact.top = 4;
    plan::PlanOptions everything = exact;
    everything.exhaustive = true;
    // Micro-batch 1 only: the splits and schedules are what this test is about, and the exhaustive
    // search of all three micro-batch sizes took 31 s under the sanitizers.
    plan::PlanRequest request = uneven_request();
    request.max_micro_batch = 1;
    const plan::PlanResult fast = plan::run_plan(request, exact);
    const plan::PlanResult all = plan::run_plan(request, everything);
    EXPECT_LT(fast.simulated, all.simulated);
    EXPECT_EQ(fast.failed + all.failed, 0u);
    EXPECT_EQ(fast.skipped_by_time + fast.simulated, all.simulated);
    std::size_t uneven_interleaved = 0;
    for (const plan::RankedLayout& layout : all.ranked) {
        const auto& par = layout.scenario.parallelism;
        uneven_interleaved +=
            par.account_for_embedding_in_pipeline_split && par.virtual_pipeline_model_parallel_size > 1;
    }
    EXPECT_GT(uneven_interleaved, 0u);  // such layouts fit and rank
    ASSERT_GE(fast.ranked.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(fast.ranked[i].report.iteration_time, all.ranked[i].report.iteration_time) << i;
        EXPECT_EQ(fast.ranked[i].scenario.name, all.ranked[i].scenario.name) << i;
    }
}

TEST(PlanMemoryBound, CountsTheFirstStagesWarmUpForwards) {
    // 1F1B on 4 stages, 8 micro-batches, no recompute: stage 0 holds 4 micro-batches' activations.
    config::Scenario sc = small_request(4, 8).base;
    sc.parallelism.pipeline_model_parallel_size = 4;
    sc.training.global_batch_size = 8;
    config::validate_scenario(sc);
    const Bytes per_microbatch = plan::forward_saved_bytes(sc, 0, 0);
    EXPECT_GE(plan::memory_lower_bound(sc).value, 4 * per_microbatch.value);
}

TEST(Plan, RanksEveryFittingLayoutByIterationTime) {
    plan::PlanOptions everything = plan_options();
    everything.exhaustive = true;
    // Micro-batch 1 only: 402 layouts to rank instead of 1062 (0.40 -> 0.19 s of CPU unsanitized).
    plan::PlanRequest request = small_request(16, 16);
    request.max_micro_batch = 1;
    const plan::PlanResult r = plan::run_plan(request, everything);
    EXPECT_EQ(r.pruned_by_memory + r.simulated, r.valid);
    EXPECT_EQ(r.skipped_by_time, 0u);
    EXPECT_EQ(r.failed, 0u);
    ASSERT_GE(r.ranked.size(), 2u);
    EXPECT_EQ(r.ranked.size(), r.fit);
    for (std::size_t i = 1; i < r.ranked.size(); ++i) {
        EXPECT_LE(r.ranked[i - 1].report.iteration_time, r.ranked[i].report.iteration_time);
        EXPECT_TRUE(r.ranked[i].report.fits_in_memory);
    }
    // The winner simulated alone gives the same time.
    sweep::PointRunner runner(testing::source_path("scenarios/hardware"), {});
    const sweep::PointOutcome again = runner.simulate(r.ranked[0].scenario);
    ASSERT_TRUE(again.report);
    EXPECT_EQ(again.report->iteration_time, r.ranked[0].report.iteration_time);
    const std::string why = plan::explain_win(r.ranked[0], r.ranked[1]);
    EXPECT_NE(why.find(r.ranked[0].scenario.name + " is "), std::string::npos) << why;
    EXPECT_NE(why.find("faster than " + r.ranked[1].scenario.name), std::string::npos) << why;
}

TEST(Plan, TightMemoryPrunesWithoutSimulating) {
    // The whole 22B model on one GPU: its weights and optimizer state alone are 18 bytes × 22e9.
    plan::PlanRequest request = small_request(1, 4);
    request.base.model.num_layers = 48;
    const plan::PlanResult r = plan::run_plan(request, plan_options());
    EXPECT_GT(r.valid, 0u);
    EXPECT_EQ(r.pruned_by_memory, r.valid);
    EXPECT_EQ(r.simulated, 0u);
    EXPECT_TRUE(r.ranked.empty());
}

// --memory-headroom: a layout fits when its simulated peak is within (1 − h) × the usable memory, and
// the memory bound prunes against that budget, never dropping a layout that would have fit.
TEST(Plan, HeadroomShrinksTheBudgetForFittingAndPruning) {
    plan::PlanOptions full = plan_options();
    full.exhaustive = true;
    full.memory_headroom = 0.0;
    // Micro-batch 1 only: the budget, not the micro-batch size, is what this test is about. All 234 layouts
    // fit the full capacity; at the median peak 118 fit and the bound prunes 109 without simulating them
    // (0.37 -> 0.19 s of CPU unsanitized).
    plan::PlanRequest request = small_request(8, 16);
    request.max_micro_batch = 1;
    const plan::PlanResult all = plan::run_plan(request, full);
    EXPECT_EQ(all.budget, all.capacity);
    ASSERT_GE(all.ranked.size(), 4u);
    // A headroom that puts the budget at the median simulated peak of the full-capacity run.
    std::vector<std::int64_t> peaks;
    for (const plan::RankedLayout& l : all.ranked) {
        peaks.push_back(l.report.peak_memory_bytes.value);
    }
    std::sort(peaks.begin(), peaks.end());
    plan::PlanOptions tight = full;
    tight.memory_headroom =
        1.0 - static_cast<double>(peaks[peaks.size() / 2]) / static_cast<double>(all.capacity.value);
    const plan::PlanResult some = plan::run_plan(request, tight);
    EXPECT_EQ(some.budget.value, static_cast<std::int64_t>(static_cast<double>(some.capacity.value) *
                                                           (1.0 - tight.memory_headroom)));
    EXPECT_GE(some.pruned_by_memory, all.pruned_by_memory);
    EXPECT_LT(some.fit, all.fit);
    EXPECT_GT(some.fit, 0u);
    for (const plan::RankedLayout& l : some.ranked) {
        EXPECT_LE(l.report.peak_memory_bytes, some.budget) << l.scenario.name;
    }
    // Exactly the layouts of the full-capacity run whose peak is within the tighter budget: the memory
    // bound, pruning against the budget, dropped none of them.
    std::size_t within = 0;
    for (const plan::RankedLayout& l : all.ranked) {
        within += l.report.peak_memory_bytes <= some.budget ? 1 : 0;
    }
    EXPECT_EQ(some.fit, within);
    plan::PlanOptions bad = full;
    bad.memory_headroom = 1.0;
    EXPECT_THROW((void)plan::run_plan(request, bad), InputError);
}

TEST(PlanCli, PrintsTheTopLayoutsAndWhy) {
    const auto r = testing::run_trainsim(
        "plan --model gpt-22b --gpus 8 --global-batch 8 --top 3 --jobs 2 --max-micro-batch 2");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("   1  t"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("   3  t"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("   4  t"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("why: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("searched "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("less 10% headroom (the default: "), std::string::npos) << r.out;
    const auto none = testing::run_trainsim(
        "plan --model gpt-22b --gpus 8 --global-batch 8 --top 3 --jobs 2 --max-micro-batch 2 "
        "--memory-headroom 0%");
    EXPECT_EQ(none.status, 0) << none.err;
    EXPECT_NE(none.out.find("less 0% headroom\n"), std::string::npos) << none.out;
}

// An MoE scenario plans end to end: the table and the JSON carry each layout's ep, and
// --max-expert-parallel caps it. Mixtral 8x7B on 16 GPUs, micro-batch 1: a fraction of a second.
TEST(PlanCli, PlansExpertParallelismForAnMoeScenario) {
    // The expert-parallel axis and its cap; expert TP stays 1 (PlanSpace.SearchesExpertTensorParallelism
    // and PlanBounds check that axis), which keeps the search at a third of the layouts.
    const std::string args = "plan --scenario " +
                             testing::source_path("scenarios/moe/mixtral-8x7b-64gpu.json") +
                             " --gpus 16 --global-batch 16 --max-micro-batch 1 --top 3 --jobs 2"
                             " --max-expert-tensor-parallel 1";
    const auto text = testing::run_trainsim(args);
    ASSERT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("   1  t"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find(" ep"), std::string::npos) << text.out;
    std::set<std::int64_t> eps;
    for (const std::string limit : {"", " --max-expert-parallel 2"}) {
        const auto r = testing::run_trainsim(args + limit + " --format json");
        ASSERT_EQ(r.status, 0) << r.err;
        const nlohmann::json j = nlohmann::json::parse(r.out);
        ASSERT_FALSE(j["ranked"].empty()) << r.out;
        for (const nlohmann::json& layout : j["ranked"]) {
            const std::int64_t ep = layout["expert_model_parallel_size"].get<std::int64_t>();
            EXPECT_NE(layout["layout"].get<std::string>().find(" ep" + std::to_string(ep)),
                      std::string::npos);
            if (!limit.empty()) {
                EXPECT_LE(ep, 2) << r.out;
            } else {
                eps.insert(ep);
            }
        }
    }
    EXPECT_GT(*eps.rbegin(), 2);  // uncapped, the top layouts split the experts wider than the cap allows
}

TEST(PlanCli, BadRequestsExitTwoWithOneLine) {
    for (const std::string& args :
         {std::string("plan --model gpt-22b --gpus 0 --global-batch 8"),
          std::string("plan --model gpt-9t --gpus 8 --global-batch 8"),
          std::string("plan --gpus 8 --global-batch 8"), std::string("plan --model gpt-22b --gpus 8"),
          std::string("plan --model gpt-22b --gpus 8 --global-batch 8 --top 0"),
          std::string("plan --model gpt-22b --gpus 8 --global-batch 8 --memory-headroom 100%"),
          std::string("plan --model gpt-22b --gpus 8 --global-batch 8 --memory-headroom ten")}) {
        const auto r = testing::run_trainsim(args);
        EXPECT_EQ(r.status, 2) << args << ": " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
        EXPECT_TRUE(r.out.empty()) << args;
    }
}

}  // namespace
}  // namespace trainsim
