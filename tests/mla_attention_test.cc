// Multi-latent attention layers (sim/workload/mla_attention.h, issue 16): the op list of a small MLA layer
// written out by hand (GEMM shapes, collectives, saved bytes) under TP 2 with SP, the backward's mirror,
// the recompute variants, the layer's FLOPs against Megatron-LM's MLA term of num_floating_point_operations
// and its weights against the model's parameter count, and a whole iteration simulated.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/core/input_error.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/plan/planner.h"
#include "sim/program/iteration_program.h"
#include "sim/workload/model_flops.h"
#include "sim/workload/model_parameters.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using config::RecomputeGranularity;
using workload::Op;
using workload::OpKind;
using workload::OpList;

// A small dense MLA model: h 256, 4 heads, s 128, b 2, q_lora_rank 64, kv_lora_rank 32, d_qk 16,
// d_rope 8, d_v 24 (all different, so a mixed-up dimension shows), gated MLP of 512, RMSNorm, no biases.
// `model_extra` and `parallel` add keys; TP 2 with SP unless `parallel` gives its own.
std::string scenario_text(const std::string& model_extra, const std::string& parallel,
                          const std::string& training_extra) {
    // The defaults of the two keys the tests vary, unless `model_extra` gives them.
    std::string defaults;
    for (const char* key : {R"("q_lora_rank": 64)", R"("add_bias_linear": false)"}) {
        const std::string name = std::string(key).substr(0, std::string(key).find(':'));
        if (model_extra.find(name) == std::string::npos) {
            defaults += std::string(", ") + key;
        }
    }
    return R"({"model": {"num_layers": 4, "hidden_size": 256, "num_attention_heads": 4, "seq_length": 128,
        "padded_vocab_size": 1024, "ffn_hidden_size": 512, "swiglu": true, "normalization": "RMSNorm",
        "position_embedding_type": "rope", "untie_embeddings_and_output_weights": true,
        "multi_latent_attention": true, "kv_lora_rank": 32, "qk_head_dim": 16, "qk_pos_emb_head_dim": 8,
        "v_head_dim": 24)" +
           defaults + model_extra + R"(},
      "parallelism": {)" +
           (parallel.empty() ? std::string(R"("tensor_model_parallel_size": 2, "sequence_parallel": true)")
                             : parallel) +
           R"(, "pipeline_model_parallel_size": 1},
      "training": {"micro_batch_size": 2, "global_batch_size": 8)" +
           (training_extra.find("attention_backend") == std::string::npos
                ? R"(, "attention_backend": "flash")"
                : "") +
           training_extra + R"(},
      "hardware": {"profile": "h100-80gb-dgx", "gpus_per_node": 8}})";
}

config::Scenario scenario(const std::string& model_extra = "", const std::string& parallel = "",
                          const std::string& training_extra = "") {
    return config::parse_scenario(scenario_text(model_extra, parallel, training_extra), "test");
}

// Sizes of the TP 2 + SP case: s·b = 256 tokens, 128 on each rank; a/t = 2 heads; Q and K heads of
// 16 + 8 = 24 (48 wide per rank), kv_up_proj 2·(16 + 24) = 80 wide per rank.
constexpr std::int64_t sb = 256, local = 128, h = 256, rq = 64, rkv = 32, rope = 8, q_out = 48, kv_out = 80;
constexpr std::int64_t heads = 2, qk = 24, v = 24, s = 128, b = 2;

// The attention block's ops: from after the input norm up to the output projection (forward), or from
// the output projection's gradient to the input gradients' sum (backward).
std::vector<const Op*> between(const OpList& ops, const std::string& first, const std::string& last) {
    std::vector<const Op*> out;
    bool in = false;
    for (const Op& op : ops) {
        in = in || op.name == first;
        if (in) {
            out.push_back(&op);
        }
        if (in && op.name == last) {
            break;
        }
    }
    return out;
}

std::vector<std::string> names(const std::vector<const Op*>& ops) {
    std::vector<std::string> out;
    for (const Op* op : ops) {
        out.push_back(op->name);
    }
    return out;
}

const Op& find(const OpList& ops, const std::string& name) {
    for (const Op& op : ops) {
        if (op.name == name) {
            return op;
        }
    }
    throw std::runtime_error("no op " + name);
}

void expect_gemm(const Op& op, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
    ASSERT_EQ(op.kind, OpKind::Gemm) << op.name;
    EXPECT_EQ(op.gemm.m, m) << op.name;
    EXPECT_EQ(op.gemm.n, n) << op.name;
    EXPECT_EQ(op.gemm.k, k) << op.name;
    EXPECT_EQ(op.gemm.batch, batch) << op.name;
}

TEST(MlaAttention, ForwardOpsByHand) {
    const workload::LayerShape x = workload::layer_shape_of(scenario());
    const OpList fwd = workload::layer_forward(x, RecomputeGranularity::None);
    const std::vector<const Op*> ops = between(fwd, "q_down_proj", "proj.reducescatter");
    EXPECT_EQ(names(ops),
              (std::vector<std::string>{"q_down_proj", "kv_down_proj", "k_pos_emb.allgather", "q_norm",
                                        "q_up_proj.allgather", "q_up_proj", "kv_norm", "kv_up_proj.allgather",
                                        "kv_up_proj", "mla.rope_q", "mla.rope_kv", "attn.flash", "proj",
                                        "proj.reducescatter"}));
    // The down projections are duplicated on both TP ranks and run on the rank's 128 tokens.
    expect_gemm(find(fwd, "q_down_proj"), local, rq, h);
    expect_gemm(find(fwd, "kv_down_proj"), local, rkv + rope, h);
    // The column-parallel up projections see all 256 tokens and half the heads.
    expect_gemm(find(fwd, "q_up_proj"), sb, q_out, rq);
    expect_gemm(find(fwd, "kv_up_proj"), sb, kv_out, rkv);
    // Flash: QKᵀ over 24 and attention over V of 24 on b·a/t = 4 heads: k = 24 + 24.
    expect_gemm(find(fwd, "attn.flash"), s, s, qk + v, b * heads);
    EXPECT_DOUBLE_EQ(find(fwd, "attn.flash").flops().value, 2.0 * s * s * (qk + v) * b * heads);
    expect_gemm(find(fwd, "proj"), sb, h, heads * v);
    // SP gathers: the RoPE key (256 × 8), each latent norm's output (256 × 64, 256 × 32), bf16.
    EXPECT_EQ(find(fwd, "k_pos_emb.allgather").collective_bytes.value, sb * rope * 2);
    EXPECT_EQ(find(fwd, "q_up_proj.allgather").collective_bytes.value, sb * rq * 2);
    EXPECT_EQ(find(fwd, "kv_up_proj.allgather").collective_bytes.value, sb * rkv * 2);
    EXPECT_EQ(find(fwd, "proj.reducescatter").collective_bytes.value, sb * h * 2);
    for (const char* gather : {"k_pos_emb.allgather", "q_up_proj.allgather", "kv_up_proj.allgather"}) {
        EXPECT_EQ(find(fwd, gather).collective, cost::CollectiveKind::AllGather);
        EXPECT_EQ(find(fwd, gather).group, workload::CommGroup::Tensor);
        EXPECT_TRUE(find(fwd, gather).blocking);
    }
    // Norms on the rank's tokens; RoPE reads and writes Q, reads kv_up's output and the key, writes K, V.
    EXPECT_EQ(find(fwd, "q_norm").bytes_moved.value, 2 * local * rq * 2);
    EXPECT_EQ(find(fwd, "kv_norm").bytes_moved.value, 2 * local * rkv * 2);
    EXPECT_EQ(find(fwd, "mla.rope_q").bytes_moved.value, 2 * sb * q_out * 2);
    EXPECT_EQ(find(fwd, "mla.rope_kv").bytes_moved.value,
              (sb * kv_out + sb * rope + sb * q_out + sb * heads * v) * 2);
}

TEST(MlaAttention, SavedBytesFollowTheRecomputePolicy) {
    const workload::LayerShape x = workload::layer_shape_of(scenario());
    const OpList fwd = workload::layer_forward(x, RecomputeGranularity::None);
    // The norm's output (kept once for both down projections), each latent twice (its norm's input and
    // the up projection's input shard), Q, K, V and the fp32 log-sum-exp (b·a/t·s), the output.
    EXPECT_EQ(find(fwd, "q_down_proj").saved_bytes.value, local * h * 2);
    EXPECT_EQ(find(fwd, "kv_down_proj").saved_bytes.value, 0);
    EXPECT_EQ(find(fwd, "q_norm").saved_bytes.value, local * rq * 2);
    EXPECT_EQ(find(fwd, "q_up_proj").saved_bytes.value, local * rq * 2);
    EXPECT_EQ(find(fwd, "kv_norm").saved_bytes.value, local * rkv * 2);
    EXPECT_EQ(find(fwd, "kv_up_proj").saved_bytes.value, local * rkv * 2);
    const std::int64_t qkv = (2 * sb * q_out + sb * heads * v) * 2;
    const std::int64_t lse = b * heads * s * 4;
    EXPECT_EQ(find(fwd, "attn.flash").saved_bytes.value, qkv + lse);
    EXPECT_EQ(find(fwd, "proj").saved_bytes.value, sb * heads * v * 2);
    // Selective recompute drops the statistics; full keeps only the layer input (the first norm's).
    const OpList selective = workload::layer_forward(x, RecomputeGranularity::Selective);
    EXPECT_EQ(find(selective, "attn.flash").saved_bytes.value, qkv);
    const OpList full = workload::layer_forward(x, RecomputeGranularity::Full);
    EXPECT_EQ(workload::layer_activation_bytes(x, RecomputeGranularity::Full).value, local * h * 2);
    EXPECT_EQ(find(full, "q_up_proj").saved_bytes.value, 0);
    // The selective re-run keeps the statistics until the backward frees them, and nothing else.
    const OpList again = workload::layer_selective_recompute(x);
    ASSERT_EQ(again.size(), 1u);
    expect_gemm(again[0], s, s, qk + v, b * heads);
    EXPECT_TRUE(again[0].is_recompute);
    EXPECT_EQ(again[0].saved_bytes.value, lse);
}

TEST(MlaAttention, BackwardMirrorsTheForward) {
    const workload::LayerShape x = workload::layer_shape_of(scenario());
    const OpList bwd = workload::layer_backward(x, RecomputeGranularity::None);
    const std::vector<const Op*> ops = between(bwd, "attn.flash.bwd", "mla.input_grad_add");
    EXPECT_EQ(names(ops),
              (std::vector<std::string>{
                  "attn.flash.bwd", "mla.rope_kv.bwd", "mla.rope_q.bwd", "kv_up_proj.input_allgather",
                  "kv_up_proj.dgrad", "kv_up_proj.dgrad_reducescatter", "kv_up_proj.wgrad", "kv_norm.bwd",
                  "q_up_proj.input_allgather", "q_up_proj.dgrad", "q_up_proj.dgrad_reducescatter",
                  "q_up_proj.wgrad", "q_norm.bwd", "k_pos_emb.grad_reducescatter", "kv_down_proj.dgrad",
                  "kv_down_proj.wgrad", "q_down_proj.dgrad", "q_down_proj.wgrad", "mla.input_grad_add"}));
    // FA2's backward: QKᵀ, dQ, dK over 24 and dP, dV over 24: 3·24 + 2·24.
    expect_gemm(find(bwd, "attn.flash.bwd"), s, s, 3 * qk + 2 * v, b * heads);
    expect_gemm(find(bwd, "kv_up_proj.dgrad"), sb, rkv, kv_out);
    expect_gemm(find(bwd, "kv_up_proj.wgrad"), kv_out, rkv, sb);
    expect_gemm(find(bwd, "q_up_proj.dgrad"), sb, rq, q_out);
    expect_gemm(find(bwd, "q_down_proj.dgrad"), local, h, rq);
    expect_gemm(find(bwd, "q_down_proj.wgrad"), rq, h, local);
    expect_gemm(find(bwd, "kv_down_proj.dgrad"), local, h, rkv + rope);
    expect_gemm(find(bwd, "kv_down_proj.wgrad"), rkv + rope, h, local);
    EXPECT_EQ(find(bwd, "kv_up_proj.input_allgather").collective_bytes.value, sb * rkv * 2);
    EXPECT_EQ(find(bwd, "kv_up_proj.dgrad_reducescatter").collective_bytes.value, sb * rkv * 2);
    EXPECT_EQ(find(bwd, "k_pos_emb.grad_reducescatter").collective_bytes.value, sb * rope * 2);
    EXPECT_EQ(find(bwd, "k_pos_emb.grad_reducescatter").collective, cost::CollectiveKind::ReduceScatter);
    // Selective: the core attention runs again just before its backward; full: the whole forward first.
    const OpList selective = workload::layer_backward(x, RecomputeGranularity::Selective);
    const Op& rerun = find(selective, "attn.flash");
    EXPECT_TRUE(rerun.is_recompute);
    EXPECT_EQ(&rerun + 1, &find(selective, "attn.flash.bwd"));
    const OpList full = workload::layer_backward(x, RecomputeGranularity::Full);
    EXPECT_TRUE(find(full, "kv_up_proj").is_recompute);
    EXPECT_FALSE(find(full, "kv_up_proj.dgrad").is_recompute);
}

TEST(MlaAttention, FullRankQueriesAndUnfusedAttention) {
    // q_lora_rank null: one column-parallel h → a·(d_qk + d_rope) GEMM after SP's all-gather of the
    // norm's output; unfused core attention: QKᵀ over 24, softmax and dropout on b·(a/t)·s², P·V over 24.
    const workload::LayerShape x = workload::layer_shape_of(
        scenario(R"(, "q_lora_rank": null)", "", R"(, "attention_backend": "unfused")"));
    const OpList fwd = workload::layer_forward(x, RecomputeGranularity::None);
    EXPECT_EQ(names(between(fwd, "q_proj.allgather", "proj")),
              (std::vector<std::string>{"q_proj.allgather", "q_proj", "kv_down_proj", "k_pos_emb.allgather",
                                        "kv_norm", "kv_up_proj.allgather", "kv_up_proj", "mla.rope_q",
                                        "mla.rope_kv", "attn.qk", "attn.softmax", "attn.dropout", "attn.av",
                                        "proj"}));
    expect_gemm(find(fwd, "q_proj"), sb, q_out, h);
    EXPECT_EQ(find(fwd, "q_proj.allgather").collective_bytes.value, sb * h * 2);
    expect_gemm(find(fwd, "attn.qk"), s, s, qk, b * heads);
    expect_gemm(find(fwd, "attn.av"), s, v, s, b * heads);
    const std::int64_t scores = b * heads * s * s;
    EXPECT_EQ(find(fwd, "attn.softmax").saved_bytes.value, scores * 2);
    EXPECT_EQ(find(fwd, "attn.av").saved_bytes.value, scores * 2 + sb * heads * v * 2);
    const OpList bwd = workload::layer_backward(x, RecomputeGranularity::None);
    expect_gemm(find(bwd, "attn.av.dgrad_probs"), s, s, v, b * heads);
    expect_gemm(find(bwd, "attn.qk.dgrad_q"), s, qk, s, b * heads);
    expect_gemm(find(bwd, "q_proj.dgrad"), sb, h, q_out);
    EXPECT_EQ(find(bwd, "q_proj.dgrad_reducescatter").collective_bytes.value, sb * h * 2);
}

TEST(MlaAttention, TensorParallelWithoutSequenceParallel) {
    // Without SP every rank holds all s·b tokens: the duplicated down projections run on all of them
    // (the same work on both ranks), nothing is gathered, and each column-parallel up projection's input
    // gradient is all-reduced under its weight-gradient GEMM.
    const workload::LayerShape x =
        workload::layer_shape_of(scenario("", R"("tensor_model_parallel_size": 2)"));
    const OpList fwd = workload::layer_forward(x, RecomputeGranularity::None);
    expect_gemm(find(fwd, "q_down_proj"), sb, rq, h);
    expect_gemm(find(fwd, "kv_down_proj"), sb, rkv + rope, h);
    for (const Op& op : fwd) {
        EXPECT_EQ(op.name.find("allgather"), std::string::npos) << op.name;
    }
    EXPECT_EQ(find(fwd, "proj.allreduce").collective_bytes.value, sb * h * 2);
    EXPECT_EQ(find(fwd, "q_norm").saved_bytes.value, sb * rq * 2);
    const OpList bwd = workload::layer_backward(x, RecomputeGranularity::None);
    EXPECT_EQ(
        names(between(bwd, "kv_up_proj.dgrad", "kv_up_proj.wgrad")),
        (std::vector<std::string>{"kv_up_proj.dgrad", "kv_up_proj.dgrad_allreduce", "kv_up_proj.wgrad"}));
    EXPECT_EQ(find(bwd, "kv_up_proj.dgrad_allreduce").collective_bytes.value, sb * rkv * 2);
    EXPECT_FALSE(find(bwd, "kv_up_proj.dgrad_allreduce").blocking);
    for (const Op& op : bwd) {
        EXPECT_EQ(op.name.find("k_pos_emb"), std::string::npos) << op.name;
    }
}

// Megatron-LM's num_floating_point_operations for one dense MLA layer, forward, per token (training.py,
// written out here independently of model_flops.cc): 2·(r_q·(h + a·(d_qk + d_rope) + 1) +
// r_kv·(h + a·(d_qk + d_v) + 1) + h·d_rope + a·d_v·h) + 2·(s·a·(d_qk + d_rope)/2 + s·a·d_v/2), and the
// gated MLP 2·3·h·f.
double megatron_layer_forward_per_token() {
    const double a = 4, mlp = 2.0 * 3 * h * 512;
    const double projections =
        rq * (h + a * qk + 1.0) + rkv * (h + a * (16 + v) + 1.0) + h * rope + a * v * h;
    return 2.0 * projections + 2.0 * (s * a * qk / 2.0 + s * a * v / 2.0) + mlp;
}

TEST(MlaAttention, LayerFlopsAreMegatronsMlaTerm) {
    // The convention, exactly: summed over the t = 2 ranks, the op list's forward GEMM FLOPs with the
    // causal core attention halved (the op lists carry FlashAttention's non-causal count; the cost model
    // halves its time) plus Megatron's "+1" norm terms 2·(r_q + r_kv) per token (not GEMMs) equal
    // Megatron's layer term. With SP each rank's duplicated down projections see s·b/t tokens.
    const config::Scenario sc = scenario();
    const workload::LayerShape x = workload::layer_shape_of(sc);
    double gemm = 0.0;
    for (const Op& op : workload::layer_forward(x, RecomputeGranularity::None)) {
        const bool causal = op.gemm_class == cost::GemmClass::FlashForward;
        gemm += (causal ? 0.5 : 1.0) * op.flops().value;
    }
    const double per_token = (2.0 * gemm + 2.0 * (rq + rkv) * sb) / sb;
    EXPECT_NEAR(per_token / megatron_layer_forward_per_token(), 1.0, 1e-12);
    // And model_flops' MLA-aware count is 3 × those layers over the batch plus the logits' 6·B·s·h·V.
    const double tokens = 8.0 * s;
    EXPECT_NEAR(workload::model_flops_per_iteration(sc).value /
                    (3.0 * 4 * tokens * megatron_layer_forward_per_token() + 6.0 * tokens * h * 1024),
                1.0, 1e-12);
}

TEST(MlaAttention, WeightsAreTheModelsParameters) {
    // TP 1: one rank holds the whole model, so its op lists' weights are model_parameters' count; with
    // and without the query's low-rank pair, with a bias on the output projection only.
    for (const std::string extra : {"", R"(, "q_lora_rank": null)", R"(, "add_bias_linear": true)"}) {
        const config::Scenario sc = scenario(extra, R"("tensor_model_parallel_size": 1)");
        EXPECT_EQ(workload::stage_parameters(sc, 0).total(), workload::model_parameters(sc.model).total)
            << extra;
    }
    // TP 2 by hand: the down projections and the latent norms whole on each rank, the up projections'
    // and the output projection's a/t heads.
    const workload::LayerShape x = workload::layer_shape_of(scenario());
    const std::int64_t attention =
        h * rq + rq + rq * q_out + h * (rkv + rope) + rkv + rkv * kv_out + heads * v * h;
    EXPECT_EQ(workload::layer_parameters_per_rank(x), attention + 2 * h + 3 * h * 512 / 2);
    // Published: DeepSeek-V3's MLA block is 187,107,328 weights (tests/moe_model_test.cc).
    const config::Scenario v3 = config::parse_scenario(
        R"({"model": {"preset": "deepseek-v3", "mtp_num_layers": 0, "moe_token_dispatcher_type": "alltoall"},
            "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1},
            "training": {"micro_batch_size": 1, "global_batch_size": 1, "attention_backend": "flash"},
            "hardware": {"profile": "h100-80gb-dgx"}})",
        "test");
    workload::LayerShape dense = workload::layer_shape_of(v3, 0);
    EXPECT_EQ(workload::layer_parameters_per_rank(dense), 187'107'328 + 2 * 7168 + 3LL * 7168 * 18432);
}

void expect_refused(const config::Scenario& sc, const std::string& message) {
    try {
        (void)workload::layer_shape_of(sc);
        ADD_FAILURE() << "no InputError for " << message;
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
}

TEST(MlaAttention, RefusesWhatItDoesNotModel) {
    expect_refused(scenario("", R"("tensor_model_parallel_size": 2, "sequence_parallel": true,
                   "context_parallel_size": 2)"),
                   "parallelism.context_parallel_size: context parallelism with multi-latent attention");
    expect_refused(scenario("", R"("tensor_model_parallel_size": 2, "sequence_parallel": true,
                   "tp_comm_overlap": true)"),
                   "parallelism.tp_comm_overlap: TE userbuffers overlap with multi-latent attention");
}

TEST(MlaAttention, IterationRunsWithTheMlaOps) {
    const config::Scenario sc = scenario();
    const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    const engine::RunResult run = program::simulate(prog);
    EXPECT_GT(run.makespan, 0_ns);
    // Selective recompute runs MLA's core attention again before its backward: a longer iteration.
    const config::Scenario selective = scenario("", "", R"(, "recompute_granularity": "selective")");
    const engine::RunResult again = program::simulate(program::build_iteration(selective, cost));
    EXPECT_GT(again.makespan, run.makespan);
}

TEST(MlaAttention, PlannerSearchesFp8LayoutsBesideBf16) {
    // On an FP8-capable profile the planner searches FP8 beside BF16, MLA models included: every FP8
    // candidate simulates (none fails), and a base scenario that chose FP8 searches FP8 only, half as many.
    plan::PlanRequest request;
    request.base = scenario();
    request.gpus = 8;
    request.global_batch = 8;
    request.max_micro_batch = 2;
    plan::PlanOptions options;
    options.profile_directory = testing::source_path("scenarios/hardware");
    const plan::PlanResult both = plan::run_plan(request, options);
    EXPECT_EQ(both.failed, 0u);
    request.base = scenario("", "", R"(, "fp8_format": "hybrid")");
    const plan::PlanResult fp8 = plan::run_plan(request, options);
    EXPECT_EQ(fp8.failed, 0u) << (fp8.errors.empty() ? "" : fp8.errors.front());
    EXPECT_EQ(both.valid, 2 * fp8.valid);
    ASSERT_FALSE(fp8.ranked.empty());
    for (const plan::RankedLayout& layout : fp8.ranked) {
        EXPECT_TRUE(layout.scenario.training.fp8_format);
    }
}

TEST(MlaAttention, DeepSeekV3ScenarioFitsWithTheAllToAllExposed) {
    // scenarios/moe/deepseek-v3-2048gpu.json: PP 16, EP 64, DP 128, full recompute. It fits, its stages
    // hold the layers decoder_first/last give them, and with synchronous all-to-alls across 8 nodes the
    // exposed EP communication is the largest part of the iteration (scenarios/README.md).
    const config::Scenario sc = testing::shipped_scenario("moe/deepseek-v3-2048gpu");
    EXPECT_EQ(sc.num_gpus(), 2048);
    const experiment::Simulation sim = experiment::simulate_scenario(sc, testing::shipped_cost_model());
    const report::IterationReport& r = sim.report;
    EXPECT_TRUE(r.fits_in_memory);
    ASSERT_EQ(r.stages.size(), 16u);
    EXPECT_EQ(r.stages.front().layers, 3);
    EXPECT_EQ(r.stages[1].layers, 4);
    EXPECT_EQ(r.stages.back().layers, 2);
    const report::Breakdown& t = r.breakdown;
    EXPECT_GT(t.exposed_ep_comm, t.compute);
    EXPECT_GT(t.exposed_ep_comm, t.bubble);
    // DeepSeek-V3 trained with one MTP module (§2.2): on the last stage its MoE layer and second logits
    // make two layers plus MTP the busiest stage, and its memory the highest (the embedding copy too).
    EXPECT_EQ(sc.model.mtp_num_layers, 1);
    EXPECT_GT(r.stages.back().time.busy().value, r.stages[1].time.busy().value);
    EXPECT_GT(r.stages.back().static_bytes.value, r.stages.front().static_bytes.value);
}

}  // namespace
}  // namespace trainsim
