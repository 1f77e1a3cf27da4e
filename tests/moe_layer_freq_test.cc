// Mixed dense and MoE layers (model.moe_layer_freq, issue 16): per-stage parameters counted by hand,
// and each pipeline stage's op lists following the kind of the layers it holds (a stage of dense
// layers runs no all-to-all and reduces no expert gradients).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "sim/core/input_error.h"
#include "sim/program/iteration_program.h"
#include "sim/program/op_span_visitor.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_layers.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

// Four layers of h 1024, 8 heads, a gated dense MLP of 4096 and 16 gated experts of 1024 (top-2), no
// biases, RMSNorm, RoPE; EP 2 over DP 2, PP `pp`.
config::Scenario scenario(const std::string& freq, std::int64_t pp, const std::string& extra = "",
                          const std::string& top = "") {
    const std::string text = R"({"model": {"num_layers": 4, "hidden_size": 1024, "num_attention_heads": 8,
        "seq_length": 1024, "padded_vocab_size": 32768, "ffn_hidden_size": 4096, "swiglu": true,
        "normalization": "RMSNorm", "position_embedding_type": "rope", "add_bias_linear": false,
        "num_experts": 16, "moe_router_topk": 2, "moe_ffn_hidden_size": 1024,
        "moe_token_dispatcher_type": "alltoall", "moe_grouped_gemm": true, "moe_layer_freq": )" +
                             freq + R"(},
      "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": )" +
                             std::to_string(pp) +
                             R"(, "data_parallel_size": 2, "expert_model_parallel_size": 2)" + extra + R"(},
      "training": {"micro_batch_size": 1, "global_batch_size": 8, "attention_backend": "flash"},
      "hardware": {"profile": "h100-80gb-dgx", "gpus_per_node": 8})" +
                             top + "}";
    return config::parse_scenario(text, "test");
}

constexpr std::int64_t h = 1024;
// Per rank, by hand: attention Q, K, V and projection (4h²) and two RMSNorms (2h) in every layer; a
// dense layer adds the gated MLP (fc1 h × 2·4h, fc2 4h × h: 12h²); an MoE layer the router (16h) and
// 16/EP = 8 experts of 3·h·h each (24h²).
constexpr std::int64_t kDense = 4 * h * h + 2 * h + 12 * h * h;
constexpr std::int64_t kExperts = 8 * 3 * h * h;
constexpr std::int64_t kMoe = 4 * h * h + 2 * h + 16 * h + kExperts;

TEST(MoeLayerFreq, IntegerFrequencyAlternatesLayersAndStagesCountTheirOwn) {
    // Megatron's --moe-layer-freq 2: layers 0 and 2 are MoE, 1 and 3 dense.
    const config::Scenario sc = scenario("2", 1);
    EXPECT_TRUE(workload::is_moe_layer(sc, 0));
    EXPECT_FALSE(workload::is_moe_layer(sc, 1));
    EXPECT_EQ(workload::layer_shape_of(sc, 0).experts, 16);
    EXPECT_EQ(workload::layer_shape_of(sc, 1).experts, 0);
    const workload::StageParameters one = workload::stage_parameters(sc, 0);
    EXPECT_EQ(one.transformer, 2 * kDense + 2 * kMoe);
    EXPECT_EQ(one.expert, 2 * kExperts);
    // PP 2: each stage holds one MoE layer (0 or 2) and one dense layer (1 or 3).
    const config::Scenario two = scenario("2", 2);
    for (std::int64_t pp = 0; pp < 2; ++pp) {
        EXPECT_EQ(workload::stage_parameters(two, pp).transformer, kDense + kMoe);
        EXPECT_EQ(workload::stage_parameters(two, pp).expert, kExperts);
    }
}

TEST(MoeLayerFreq, ListPutsDenseLayersFirstLikeDeepSeekV3) {
    // first_k_dense_replace 2 as a list: stage 0 of PP 2 is dense only, stage 1 MoE only.
    const config::Scenario sc = scenario("[0, 0, 1, 1]", 2);
    EXPECT_EQ(workload::stage_parameters(sc, 0).transformer, 2 * kDense);
    EXPECT_EQ(workload::stage_parameters(sc, 0).expert, 0);
    EXPECT_EQ(workload::stage_parameters(sc, 1).transformer, 2 * kMoe);
    EXPECT_EQ(workload::stage_parameters(sc, 1).expert, 2 * kExperts);
}

TEST(MoeLayerFreq, OnlyAFrequencyThatLeavesDenseLayersMixesKinds) {
    // The planner's bound and the program's op lists both ask this: 1 (every layer MoE) and a list of
    // ones have no dense layer; 2 and a list with zeros do.
    EXPECT_FALSE(workload::mixes_dense_and_moe_layers(scenario("1", 1)));
    EXPECT_FALSE(workload::mixes_dense_and_moe_layers(scenario("[1, 1, 1, 1]", 1)));
    EXPECT_TRUE(workload::mixes_dense_and_moe_layers(scenario("2", 1)));
    EXPECT_TRUE(workload::mixes_dense_and_moe_layers(scenario("[0, 0, 1, 1]", 2)));
}

TEST(MoeLayerFreq, VShapedPlacementFollowsTheMirroredChunk) {
    // ZB-V, PP 2, two chunks of one layer: rank 0 holds stages 0 and 3, rank 1 stages 1 and 2.
    const config::Scenario sc = scenario("[0, 1, 1, 0]", 2, R"(, "virtual_pipeline_model_parallel_size": 2)",
                                         R"(, "schedule": "zb-v")");
    EXPECT_EQ(workload::stage_layers(sc, 0), (std::vector<std::int64_t>{0, 3}));
    EXPECT_EQ(workload::stage_layers(sc, 1), (std::vector<std::int64_t>{1, 2}));
    EXPECT_EQ(workload::stage_parameters(sc, 0).expert, 0);
    EXPECT_EQ(workload::stage_parameters(sc, 1).expert, 2 * kExperts);
}

// The op names each global layer's forward and backward tasks run, and each stage's end of iteration.
struct ProgramOps {
    std::map<std::int32_t, std::set<std::string>> by_layer;
    std::map<std::int64_t, std::set<std::string>> iteration_by_stage;
};

ProgramOps program_ops(const config::Scenario& sc) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    const engine::RunResult run = program::simulate(prog);
    EXPECT_GT(run.makespan, 0_ns);
    ProgramOps out;
    for (std::size_t t = 0; t < prog.info.size(); ++t) {
        const program::TaskInfo task = prog.info[t];
        if (task.priced < 0) {
            continue;
        }
        for (const program::OpSpan& s :
             program::op_spans(prog, engine::TaskId::from_index(t), run.timings[t])) {
            if (s.op == nullptr) {
                continue;
            }
            if (task.layer >= 0) {
                out.by_layer[task.layer].insert(s.op->name);
            } else if (task.phase == program::Phase::Iteration) {
                out.iteration_by_stage[prog.gpus[task.gpu.index()].coordinates.pp].insert(s.op->name);
            }
        }
    }
    return out;
}

TEST(MoeLayerFreq, StageOfDenseLayersRunsNoAllToAll) {
    const ProgramOps ops = program_ops(scenario("[0, 0, 1, 1]", 2));
    ASSERT_EQ(ops.by_layer.size(), 4u);
    for (std::int32_t layer = 0; layer < 4; ++layer) {
        SCOPED_TRACE("layer " + std::to_string(layer));
        const std::set<std::string>& names = ops.by_layer.at(layer);
        const bool moe = layer >= 2;
        EXPECT_EQ(names.contains("moe.dispatch.alltoall"), moe);
        EXPECT_EQ(names.contains("moe.combine.alltoall.bwd"), moe);
        EXPECT_EQ(names.contains("experts.fc1"), moe);
        EXPECT_EQ(names.contains("router"), moe);
        EXPECT_EQ(names.contains("fc1"), !moe);  // the dense MLP
    }
    // Expert gradients are reduced over expert data parallelism only where there are experts; the
    // dense stage reduces its weights over DP 2 as a dense model does.
    EXPECT_FALSE(ops.iteration_by_stage.at(0).contains("expert_dp.grad_allreduce"));
    EXPECT_TRUE(ops.iteration_by_stage.at(0).contains("dp.grad_allreduce"));
    EXPECT_TRUE(ops.iteration_by_stage.at(1).contains("dp.grad_allreduce"));
}

TEST(MoeLayerFreq, RulesNameTheKey) {
    EXPECT_THROW(
        {
            try {
                (void)scenario("[0, 1, 1]", 1);
            } catch (const InputError& e) {
                EXPECT_NE(std::string(e.what()).find("model.moe_layer_freq"), std::string::npos) << e.what();
                throw;
            }
        },
        InputError);
}

}  // namespace
}  // namespace trainsim
