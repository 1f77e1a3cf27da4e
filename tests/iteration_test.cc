// Whole iterations: folding identical GPUs changes nothing, the breakdown adds up, a single-stage
// iteration is its layers plus the extras, and the memory replay agrees with the formulas.
#include <gtest/gtest.h>

#include "sim/engine/simulator.h"
#include "sim/memory/static_memory.h"
#include "sim/program/iteration_program.h"
#include "sim/program/layer_program.h"
#include "sim/report/iteration_report.h"
#include "sim/report/layer_report.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using config::Override;

report::IterationReport simulate(const config::Scenario& sc, const program::Fold& fold = {}) {
    static const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram prog = program::build_iteration(sc, cost, fold);
    return report::make_iteration_report(sc, cost, prog, program::simulate(prog));
}

// A small 175B-shaped layout that exercises TP, PP (interleaved), DP and SP.
config::Scenario small(std::vector<Override> extra = {}) {
    std::vector<Override> o = {{"model.num_layers", "8"},
                               {"parallelism.tensor_model_parallel_size", "2"},
                               {"parallelism.pipeline_model_parallel_size", "4"},
                               {"parallelism.virtual_pipeline_model_parallel_size", "2"},
                               {"parallelism.data_parallel_size", "2"},
                               {"training.global_batch_size", "16"},
                               {"hardware.gpus_per_node", "4"}};
    o.insert(o.end(), extra.begin(), extra.end());
    return testing::shipped_scenario("korthikanti-175b", o);
}

TEST(Folding, UnfoldedRunGivesTheSameIterationTime) {
    for (const auto& extra : std::vector<std::vector<Override>>{
             {},
             {{"parallelism.sequence_parallel", "false"}, {"training.recompute_granularity", "full"}},
             {{"training.use_distributed_optimizer", "true"}},
             {{"training.overlap_grad_reduce", "true"}, {"training.ddp_bucket_size", "1000000"}},
             {{"training.use_distributed_optimizer", "true"},
              {"training.overlap_grad_reduce", "true"},
              {"training.overlap_param_gather", "true"}},
             {{"parallelism.sequence_parallel", "false"}},  // pipeline scatter/gather
             {{"schedule", "breadth_first"}},
             {{"parallelism.virtual_pipeline_model_parallel_size", "1"}, {"schedule", "1f1b"}}}) {
        const config::Scenario sc = small(extra);
        const report::IterationReport folded = simulate(sc);
        const report::IterationReport unfolded = simulate(sc, {false, false});
        EXPECT_EQ(folded.simulated_gpus, 4);
        EXPECT_EQ(unfolded.simulated_gpus, 16);
        EXPECT_DOUBLE_EQ(folded.iteration_time.value, unfolded.iteration_time.value);
        EXPECT_EQ(folded.peak_memory_bytes, unfolded.peak_memory_bytes);
    }
}

TEST(Folding, ReplicasPlacedDifferentlyOnNodesAreAllSimulated) {
    // t·d = 3 on 8-GPU nodes: replica 2's stages straddle node boundaries where replica 0's do not, so
    // folding data parallelism would miss the slowest replica (review finding; was 26 % fast).
    const config::Scenario sc = testing::shipped_scenario(
        "korthikanti-22b", {{"model.num_layers", "6"},
                            {"model.hidden_size", "2048"},
                            {"model.num_attention_heads", "16"},
                            {"model.ffn_hidden_size", "8192"},
                            {"model.seq_length", "1024"},
                            {"training.micro_batch_size", "1"},
                            {"parallelism.tensor_model_parallel_size", "1"},
                            {"parallelism.data_parallel_size", "3"},
                            {"parallelism.pipeline_model_parallel_size", "3"},
                            {"training.global_batch_size", "12"}});
    const report::IterationReport folded = simulate(sc);
    const report::IterationReport unfolded = simulate(sc, {false, false});
    EXPECT_DOUBLE_EQ(folded.iteration_time.value, unfolded.iteration_time.value);
    EXPECT_EQ(folded.simulated_gpus, 9);
    ASSERT_FALSE(folded.warnings.empty());
    EXPECT_NE(folded.warnings[0].find("placed differently on nodes"), std::string::npos);
}

TEST(Memory, UniformGroupsOfNLayersKeepOneInputPerGroup) {
    // Megatron's uniform method checkpoints the input of each group of N layers: the stored checkpoints
    // shrink as L/N (review finding: every layer kept its input, and the recompute counted it twice).
    auto activations = [](const char* n) {
        return simulate(testing::shipped_scenario("korthikanti-22b", {{"training.recompute_granularity", "full"},
                                                                       {"training.recompute_method", "uniform"},
                                                                       {"training.recompute_num_layers", n}}))
            .stages[0]
            .activation_bytes.value;
    };
    const std::int64_t sbh = 2048 * 4 * 6144;
    const std::int64_t one = activations("1");
    const std::int64_t four = activations("4");
    // The peak is at the first backward: the checkpoints (48 inputs of 2sbh at N = 1, 12 at N = 4) plus
    // the last group's recomputed activations. At N = 1 that is one layer less its input (the checkpoint);
    // at N = 4 it is that plus three whole layers (Table 2's TP row each), whose inputs are new tensors.
    const std::int64_t whole_layer =
        workload::layer_activation_bytes(workload::LayerShape{2048, 4, 6144, 64, 4 * 6144, 51200, 8, false, {}},
                                         config::RecomputeGranularity::None)
            .value;
    EXPECT_EQ(one - four, (48 - 12) * 2 * sbh - 3 * whole_layer);
}

TEST(Breakdown, EveryStageAddsUpToTheIterationTime) {
    for (const char* name : {"korthikanti-22b", "korthikanti-175b"}) {
        const report::IterationReport r = simulate(testing::shipped_scenario(name));
        for (const report::StageReport& s : r.stages) {
            EXPECT_NEAR(s.time.total().value, r.iteration_time.value, 1e-9) << name << " stage " << s.stage;
            for (const Seconds part : {s.time.compute, s.time.recompute, s.time.optimizer, s.time.exposed_tp_comm,
                                       s.time.exposed_pp_comm, s.time.exposed_dp_comm, s.time.bubble}) {
                EXPECT_GE(part.value, 0.0);
            }
        }
    }
}

TEST(SingleStage, IterationIsLayersPlusEmbeddingOutputAndOptimizer) {
    // p = 1, m = 1: the iteration is L × (layer forward + backward) plus work outside the layers, and
    // there is no bubble.
    const config::Scenario sc = testing::shipped_scenario("korthikanti-22b");
    const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram layer = program::build_single_layer(sc, cost);
    const report::LayerReport lr = report::make_layer_report(sc, cost, layer, program::simulate(layer));
    const report::IterationReport r = simulate(sc);
    const double layers = 48 * (lr.forward + lr.backward).value;
    EXPECT_GT(r.iteration_time.value, layers);
    EXPECT_LT(r.iteration_time.value, layers * 1.10);  // embedding, logits, loss and Adam are under 10 %
    EXPECT_LT(r.breakdown.bubble.value, 1e-3);
}

TEST(SingleLayer, ReportNamesTheHostBoundIdleBeforeAnMoeList) {
    // Qwen3-30B-A3B at micro-batch 1 on the B200 profile: after the dispatcher's host sync the CPU is
    // behind the GPU, so the layer's program holds host tasks, which have no op of their own. The report
    // names them as the traces do, with no FLOPs (it crashed on them).
    const config::Scenario sc = testing::shipped_scenario("megatron-bridge/qwen3-30b-a3b-8gpu-b200-mxfp8");
    const cost::CostModel cost(
        cost::load_hardware_profile("b200-dgx", testing::source_path("scenarios/hardware")));
    const program::IterationProgram layer = program::build_single_layer(sc, cost);
    const report::LayerReport lr = report::make_layer_report(sc, cost, layer, program::simulate(layer));
    int host = 0;
    for (const report::LayerOpTiming& op : lr.ops) {
        if (op.category == "host") {
            ++host;
            EXPECT_FALSE(op.name.empty());
            EXPECT_EQ(op.flops.value, 0.0);
            EXPECT_GT(op.duration.value, 0.0);
        }
    }
    EXPECT_GE(host, 1);
}

TEST(Bubble, OneFOneBBubbleShrinksWithMoreMicrobatches) {
    // Narayanan: bubble fraction (p − 1)/m. The simulated bubble includes communication waits, so
    // check the trend and the magnitude rather than the exact formula (tests/schedule_test.cc has
    // the exact oracle on the schedule alone).
    double previous = 1.0;
    for (const char* batch : {"16", "32", "64"}) {
        const config::Scenario sc = testing::shipped_scenario(
            "korthikanti-175b", {{"parallelism.virtual_pipeline_model_parallel_size", "1"},
                                 {"schedule", "1f1b"},
                                 {"training.global_batch_size", batch}});
        const report::IterationReport r = simulate(sc);
        const double fraction = r.breakdown.bubble.value / r.iteration_time.value;
        const double m = std::stod(batch);
        const double formula = 7.0 / m / (1.0 + 7.0 / m);  // bubble share of the iteration
        EXPECT_NEAR(fraction, formula, 0.05) << batch;
        EXPECT_LT(fraction, previous);
        previous = fraction;
    }
}

TEST(Memory, FirstStageHoldsPMicrobatchesOfActivations) {
    // Korthikanti §4.2.3: in 1F1B the first stage keeps p micro-batches in flight with L/p layers each,
    // so it holds L layers' worth of Table 2 activations (Eq. 5), plus per micro-batch the embedding
    // dropout mask (§4.3, sbh/t with SP), plus at its peak the one layer's core attention that selective
    // recompute has just rematerialised for its backward (5as²b/t).
    const config::Scenario sc = testing::shipped_scenario("korthikanti-1t", {{"training.global_batch_size", "128"}});
    const report::IterationReport r = simulate(sc);
    const std::int64_t sbh_t = 2048 * 25600 / 8;  // s·b·h/t bytes with b = 1, t = 8
    const std::int64_t per_layer = workload::layer_activation_bytes(
                                       workload::LayerShape{2048, 1, 25600, 160, 4 * 25600, 51200, 8, true, {}},
                                       config::RecomputeGranularity::Selective)
                                       .value;
    ASSERT_EQ(per_layer, 34 * sbh_t);  // Table 2, TP + SP + selective
    const std::int64_t recomputed_attention = 5 * 160 * 2048 / 25600 * sbh_t;
    ASSERT_FALSE(r.stages.empty());
    EXPECT_EQ(r.stages[0].microbatches_in_flight, 64);
    EXPECT_EQ(r.stages[0].activation_bytes.value, 64 * (2 * per_layer + sbh_t) + recomputed_attention);
    EXPECT_EQ(r.stages[1].activation_bytes.value, 63 * 2 * per_layer + recomputed_attention);
    EXPECT_EQ(r.stages[0].static_bytes, memory::static_bytes(sc, 0));
}

TEST(DataParallel, BucketsReduceEveryGradientOnceAndHideBehindTheBackward) {
    const config::Scenario plain = small({{"parallelism.virtual_pipeline_model_parallel_size", "1"},
                                          {"schedule", "1f1b"}});
    const config::Scenario overlapped = small({{"parallelism.virtual_pipeline_model_parallel_size", "1"},
                                               {"schedule", "1f1b"},
                                               {"training.overlap_grad_reduce", "true"},
                                               {"training.ddp_bucket_size", "20000000"}});
    const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram prog = program::build_iteration(overlapped, cost);
    // Every parameter's gradient is in exactly one bucket: the buckets' bytes add up to the stage's
    // parameters × 4 (fp32 gradients), and there is more than one bucket.
    for (std::size_t g = 0; g < prog.gpus.size(); ++g) {
        std::int64_t reduced = 0;
        int buckets = 0;
        for (std::size_t t = 0; t < prog.info.size(); ++t) {
            const program::TaskInfo& info = prog.info[t];
            if (info.gpu != engine::GpuId::from_index(g) || info.priced < 0) {
                continue;
            }
            const workload::Op& op = (*prog.priced[static_cast<std::size_t>(info.priced)].ops)[info.first_op];
            if (op.kind == workload::OpKind::Collective && op.group == workload::CommGroup::Data) {
                reduced += op.collective_bytes.value;
                ++buckets;
            }
        }
        const std::int64_t pp = prog.gpus[g].coordinates.pp;
        EXPECT_EQ(reduced, workload::stage_parameters(overlapped, pp).total() * 4) << "stage " << pp;
        EXPECT_GT(buckets, 1);
    }
    const report::IterationReport a = simulate(plain);
    const report::IterationReport b = simulate(overlapped);
    EXPECT_LT(b.iteration_time.value, a.iteration_time.value);
    EXPECT_LT(b.breakdown.exposed_dp_comm.value, a.breakdown.exposed_dp_comm.value);
}

TEST(Pipeline, ScatterGatherSendsOneTthAcrossNodes) {
    // Without SP, Megatron sends 1/t of each activation per TP rank and all-gathers it over NVLink:
    // across nodes (one stage per node) that is far faster than the whole tensor over one NIC.
    const config::Scenario on = testing::shipped_scenario("korthikanti-530b", {{"parallelism.sequence_parallel", "false"}});
    const config::Scenario off = testing::shipped_scenario(
        "korthikanti-530b",
        {{"parallelism.sequence_parallel", "false"}, {"parallelism.scatter_gather_tensors_in_pipeline", "false"}});
    const report::IterationReport a = simulate(on);
    const report::IterationReport b = simulate(off);
    EXPECT_LT(a.iteration_time.value, b.iteration_time.value);
    EXPECT_LT(a.breakdown.exposed_pp_comm.value, b.breakdown.exposed_pp_comm.value);
}

TEST(Pipeline, BreadthFirstKeepsEveryMicrobatchOfEveryChunkInFlight) {
    const config::Scenario sc = small({{"schedule", "breadth_first"}});
    const report::IterationReport r = simulate(sc);
    ASSERT_FALSE(r.stages.empty());
    EXPECT_EQ(r.stages[0].microbatches_in_flight, sc.num_microbatches() * 2);  // m × v
}

}  // namespace
}  // namespace trainsim
