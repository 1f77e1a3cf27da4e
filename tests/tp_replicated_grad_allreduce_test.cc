// Megatron's finalize_model_grads sums over the TP group the gradients of the parameters every TP rank
// holds whole (_allreduce_non_tensor_model_parallel_grads: with SP the norms, replicated biases, MLA's
// down projections and latent norms, the router; qk_layernorm's norms), once per iteration after the
// data-parallel sync, flattened into one fp32 buffer. Hand counts of those parameters and exact times
// of the flatten, the all-reduce and the copy back on tiny TP 2 cases (dense and MLA + MoE).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sim/program/iteration_program.h"
#include "sim/report/iteration_report.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_ops.h"
#include "sim/workload/tp_replicated_gradients.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

constexpr const char* kFlatten = "tp.replicated_grads_flatten";
constexpr const char* kAllReduce = "tp.replicated_grad_allreduce";
constexpr const char* kCopyBack = "tp.replicated_grads_copy_back";

// GPT-style dense layers (LayerNorm, biases) of h = 1024, 4 layers on p = 2, TP 2 with SP unless
// `parallel` says otherwise.
config::Scenario
dense(const std::string& parallel = R"("tensor_model_parallel_size": 2, "sequence_parallel": true)",
      const std::string& extra = "") {
    return config::parse_scenario(R"({"model": {"preset": "gpt-22b", "num_layers": 4, "seq_length": 2048,
                      "hidden_size": 1024, "num_attention_heads": 8, "ffn_hidden_size": 4096)" +
                                      extra + R"(},
            "parallelism": {)" + parallel +
                                      R"(, "pipeline_model_parallel_size": 2},
            "training": {"micro_batch_size": 1, "global_batch_size": 4},
            "hardware": {"profile": "a100-80gb-selene"}})",
                                  "dense");
}

// MLA (q_lora_rank 64, kv_lora_rank 32, rope 8) with RMSNorm and no biases; the second and later of
// 4 layers are MoE layers of 8 experts (moe_layer_freq [0,1,1,1]); TP 2 + SP, EP 2, p = 1.
config::Scenario mla_moe() {
    return config::parse_scenario(
        R"({"model": {"num_layers": 4, "hidden_size": 256, "num_attention_heads": 4, "seq_length": 128,
            "padded_vocab_size": 1024, "ffn_hidden_size": 512, "swiglu": true, "normalization": "RMSNorm",
            "position_embedding_type": "rope", "untie_embeddings_and_output_weights": true,
            "add_bias_linear": false, "multi_latent_attention": true, "q_lora_rank": 64, "kv_lora_rank": 32,
            "qk_head_dim": 16, "qk_pos_emb_head_dim": 8, "v_head_dim": 24,
            "num_experts": 8, "moe_router_topk": 2, "moe_ffn_hidden_size": 128, "moe_layer_freq": [0, 1, 1, 1],
            "moe_token_dispatcher_type": "alltoall"},
          "parallelism": {"tensor_model_parallel_size": 2, "sequence_parallel": true,
                          "expert_model_parallel_size": 2, "expert_tensor_parallel_size": 1,
                          "pipeline_model_parallel_size": 1},
          "training": {"micro_batch_size": 2, "global_batch_size": 8, "attention_backend": "flash"},
          "hardware": {"profile": "h100-80gb-dgx", "gpus_per_node": 8}})",
        "mla-moe");
}

TEST(TpReplicatedGradients, DenseLayerCountsItsNormsAndRowParallelBiases) {
    // Per layer: two LayerNorms (weight and bias, 2h each) and the projection's and fc2's biases (h each).
    constexpr std::int64_t h = 1024, per_layer = 2 * 2 * h + 2 * h;
    const config::Scenario sc = dense();
    EXPECT_EQ(workload::tp_replicated_parameters(sc, 0).total(), 2 * per_layer);
    // The last stage adds the final LayerNorm.
    EXPECT_EQ(workload::tp_replicated_parameters(sc, 1).total(), 2 * per_layer + 2 * h);
    // RMSNorm without biases: one weight per norm.
    const config::Scenario rms = dense(R"("tensor_model_parallel_size": 2, "sequence_parallel": true)",
                                       R"(, "normalization": "RMSNorm", "add_bias_linear": false)");
    EXPECT_EQ(workload::tp_replicated_parameters(rms, 1).total(), 2 * 2 * h + h);
}

TEST(TpReplicatedGradients, NoneWithoutSequenceParallelismOrAtOneRank) {
    EXPECT_EQ(workload::tp_replicated_parameters(dense(R"("tensor_model_parallel_size": 2)"), 1).total(), 0);
    EXPECT_EQ(workload::tp_replicated_parameters(dense(R"("tensor_model_parallel_size": 1)"), 1).total(), 0);
    // qk_layernorm's norms are summed with or without SP (each rank normalises its own heads): one RMSNorm
    // weight of d = 128 for the queries and one for the keys, per layer.
    const config::Scenario qk =
        dense(R"("tensor_model_parallel_size": 2)", R"(, "normalization": "RMSNorm", "qk_layernorm": true)");
    EXPECT_EQ(workload::tp_replicated_parameters(qk, 0).total(), 2 * 2 * 128);
    EXPECT_EQ(workload::tp_replicated_parameters(
                  dense(R"("tensor_model_parallel_size": 1)", R"(, "qk_layernorm": true)"), 0)
                  .total(),
              0);
}

TEST(TpReplicatedGradients, MlaCountsItsDownProjectionsAndLatentNormsAndMoeItsRouter) {
    constexpr std::int64_t h = 256, rq = 64, rkv = 32, rope = 8, experts = 8;
    // Two RMSNorms, q_down_proj h·r_q with its latent norm r_q, kv_down_proj h·(r_kv + rope) with r_kv.
    constexpr std::int64_t mla = 2 * h + h * rq + rq + h * (rkv + rope) + rkv;
    const config::Scenario sc = mla_moe();
    const workload::TpReplicatedParameters r = workload::tp_replicated_parameters(sc, 0);
    EXPECT_EQ(r.layers, 4 * mla + 3 * h * experts);  // three MoE layers' routers
    EXPECT_EQ(r.final_norm, h);
}

// DeepSeek-V3 at TP 2: eight of its MoE layers (MLA, 256 experts) sum 121.3 M fp32 gradients, the
// ~0.5 GB per stage the MLA work estimated (plus the routers, 14.7 M).
TEST(TpReplicatedGradients, DeepSeekV3LayerMatchesItsShape) {
    const config::Scenario v3 = config::parse_scenario(
        R"({"model": {"preset": "deepseek-v3", "mtp_num_layers": 0, "moe_token_dispatcher_type": "alltoall"},
            "parallelism": {"tensor_model_parallel_size": 2, "sequence_parallel": true,
                            "expert_model_parallel_size": 2, "expert_tensor_parallel_size": 1,
                            "pipeline_model_parallel_size": 1},
            "training": {"micro_batch_size": 1, "global_batch_size": 16, "attention_backend": "flash"},
            "hardware": {"profile": "h100-80gb-dgx"}})",
        "test");
    const std::int64_t moe_layer =
        workload::tp_replicated_layer_parameters(workload::layer_shape_of(v3, 3), false);
    EXPECT_EQ(moe_layer, 2 * 7168 + 7168 * 1536 + 1536 + 7168 * (512 + 64) + 512 + 7168 * 256);
    EXPECT_NEAR(8.0 * static_cast<double>(moe_layer) * workload::kGradientBytes / 1e9, 0.544, 0.001);
}

struct Spans {
    program::OpSpan flatten, allreduce, copy_back;
};

// The three ops' simulated intervals on each GPU.
std::map<engine::GpuId, Spans> spans_by_gpu(const program::IterationProgram& prog,
                                            const engine::RunResult& run) {
    std::map<engine::GpuId, Spans> out;
    for (std::size_t t = 0; t < prog.info.size(); ++t) {
        if (prog.info[t].priced < 0) {
            continue;
        }
        for (const program::OpSpan& s :
             program::op_spans(prog, engine::TaskId::from_index(t), run.timings[t])) {
            if (s.op == nullptr) {
                continue;
            }
            const auto gpu = prog.info[t].gpu;
            if (s.op->name == kFlatten) {
                out[gpu].flatten = s;
            } else if (s.op->name == kAllReduce) {
                out[gpu].allreduce = s;
            } else if (s.op->name == kCopyBack) {
                out[gpu].copy_back = s;
            }
        }
    }
    return out;
}

void expect_exact_times(const config::Scenario& sc) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    const engine::RunResult run = program::simulate(prog);
    const std::map<engine::GpuId, Spans> spans = spans_by_gpu(prog, run);
    ASSERT_EQ(spans.size(), prog.gpus.size());
    const std::vector<report::Breakdown> parts = report::breakdowns(prog, run);
    for (const auto& [gpu, s] : spans) {
        SCOPED_TRACE(gpu);
        const parallel::Coordinates& at = prog.gpus[gpu.index()].coordinates;
        const std::int64_t bytes =
            workload::tp_replicated_parameters(sc, at.pp).total() * workload::kGradientBytes;
        const SimTime copy = to_sim_time(cost.memory_bound(Bytes{2 * bytes}, cost::MemoryBoundKind::Generic));
        EXPECT_EQ(s.flatten.end - s.flatten.start, copy);
        EXPECT_EQ(s.copy_back.end - s.copy_back.start, copy);
        // Two GPUs of one node (TP 2 on NVLink).
        EXPECT_EQ(s.allreduce.end - s.allreduce.start,
                  to_sim_time(cost.collective(cost::CollectiveKind::AllReduce, Bytes{bytes}, 2,
                                              cost::Scope::IntraNode)));
        EXPECT_GE(s.allreduce.start, s.flatten.end);
        EXPECT_EQ(s.copy_back.start, s.allreduce.end);
        // A blocking TP collective: the compute stream waits for it, in the TP comm line.
        EXPECT_GE(to_sim_time(parts[gpu.index()].exposed_tp_comm), s.allreduce.end - s.allreduce.start);
    }
}

TEST(TpReplicatedGradients, DenseTp2ExactTimes) {
    expect_exact_times(dense());
}

TEST(TpReplicatedGradients, MlaMoeTp2ExactTimes) {
    expect_exact_times(mla_moe());
}

// The knob removes it, and the iteration is shorter by at least the all-reduce.
TEST(TpReplicatedGradients, KnobTurnsItOff) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const config::Scenario on = dense();
    config::Scenario off = on;
    off.training.tp_replicated_grad_allreduce = false;
    const program::IterationProgram p_on = program::build_iteration(on, cost);
    const program::IterationProgram p_off = program::build_iteration(off, cost);
    const engine::RunResult r_on = program::simulate(p_on);
    const engine::RunResult r_off = program::simulate(p_off);
    EXPECT_TRUE(spans_by_gpu(p_off, r_off).empty());
    const SimTime allreduce = to_sim_time(
        cost.collective(cost::CollectiveKind::AllReduce,
                        Bytes{workload::tp_replicated_parameters(on, 1).total() * workload::kGradientBytes},
                        2, cost::Scope::IntraNode));
    EXPECT_GE(r_on.makespan - r_off.makespan, allreduce);
}

}  // namespace
}  // namespace trainsim
