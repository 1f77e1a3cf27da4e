// FP8 with mixture of experts and multi-latent attention (sim/workload/fp8_layer.h, moe_layer.h,
// mla_attention.h; issues 15 and 16): which GEMMs run in FP8 and which stay BF16, Transformer Engine's
// quantize kernels and their bytes, TEGroupedMLP's row padding, the exact engine time of one FP8 grouped
// GEMM, and the FP8 weight copies in memory, all worked out by hand for small layers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/cost/hardware_profile.h"
#include "sim/memory/static_memory.h"
#include "sim/program/iteration_program.h"
#include "sim/workload/fp8_layer.h"
#include "sim/workload/moe_sizes.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"
#include "tests/support/layer_op_spans.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using config::Fp8Recipe;
using config::RecomputeGranularity;
using cost::GemmPrecision;
using workload::Op;
using workload::OpList;

// Two layers of h 1024, 8 heads, 16 gated experts of 1024 (top-2) and a gated shared expert of 512, no
// biases; TP 2 with SP, EP 4 over DP 4, on H100 nodes. `seq` 1040: each rank routes T = 520 tokens,
// R = 1040 copies, L = 4 local experts of 260 rows, which FP8 pads to 272 (16) or 288 (MXFP8's 32).
std::string moe_text(std::int64_t seq, const std::string& training, const std::string& model_extra = "") {
    return R"({"model": {"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8, "seq_length": )" +
           std::to_string(seq) + R"(,
        "padded_vocab_size": 32768, "ffn_hidden_size": 4096, "swiglu": true, "normalization": "RMSNorm",
        "position_embedding_type": "rope", "add_bias_linear": false, "num_experts": 16,
        "moe_router_topk": 2, "moe_ffn_hidden_size": 1024, "moe_shared_expert_intermediate_size": 512,
        "moe_token_dispatcher_type": "alltoall", "moe_grouped_gemm": true)" +
           model_extra + R"(},
      "parallelism": {"tensor_model_parallel_size": 2, "sequence_parallel": true,
        "pipeline_model_parallel_size": 1, "data_parallel_size": 4, "expert_model_parallel_size": 4,
        "expert_tensor_parallel_size": 1},
      "training": {"micro_batch_size": 1, "global_batch_size": 4, "attention_backend": "flash")" +
           training + R"(},
      "hardware": {"profile": "h100-80gb-dgx", "gpus_per_node": 8}})";
}

config::Scenario moe(std::int64_t seq, const std::string& training, const std::string& model_extra = "") {
    return config::parse_scenario(moe_text(seq, training, model_extra), "test");
}

const std::string kDelayed = R"(, "fp8_format": "hybrid")";

// The MoE MLP's ops: from the router to the shared expert's add (forward), or from the shared expert's
// first backward op to the router's input gradient add (backward).
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

const Op& find(const std::vector<const Op*>& ops, const std::string& name) {
    for (const Op* op : ops) {
        if (op->name == name) {
            return *op;
        }
    }
    throw std::runtime_error("no op " + name);
}

std::vector<std::int64_t> shape(const Op& op) {
    return {op.gemm.m, op.gemm.n, op.gemm.k, op.gemm.batch};
}

constexpr std::int64_t h = 1024, f = 1024, T = 520, R = 1040, L = 4, sb = 1040;
constexpr std::int64_t rows16 = 272, R_pad16 = R + L * (rows16 - 260);  // 1088 padded rows
constexpr std::int64_t shared_local = 256;                              // 512 / TP 2

TEST(Fp8Experts, ForwardOpsByHand) {
    const OpList fwd =
        workload::layer_forward(workload::layer_shape_of(moe(1040, kDelayed)), RecomputeGranularity::None);
    const std::vector<const Op*> ops = between(fwd, "router", "moe.shared_add");
    EXPECT_EQ(names(ops), (std::vector<std::string>{"router",
                                                    "router.softmax_topk",
                                                    "moe.dispatch.tokens_per_expert.allgather",
                                                    "moe.permute",
                                                    "moe.dispatch.alltoall",
                                                    "moe.dispatch.probs_alltoall",
                                                    "experts.fp8_padding",
                                                    "fp8.experts.fc1.cast_transpose",
                                                    "experts.fc1",
                                                    "experts.swiglu",
                                                    "fp8.experts.fc2.cast_transpose",
                                                    "experts.fc2",
                                                    "experts.fp8_unpadding",
                                                    "moe.combine.alltoall",
                                                    "moe.unpermute",
                                                    "shared_expert.fc1.allgather",
                                                    "fp8.shared_expert.fc1.cast",
                                                    "shared_expert.fc1",
                                                    "shared_expert.swiglu",
                                                    "fp8.shared_expert.fc2.cast_transpose",
                                                    "shared_expert.fc2",
                                                    "shared_expert.fc2.reducescatter",
                                                    "moe.shared_add"}));
    // The router's GEMM is a torch matmul: BF16.
    EXPECT_EQ(find(ops, "router").gemm_precision, GemmPrecision::Bf16);
    // The all-to-alls move the busiest rank's R BF16 tokens, as without FP8.
    EXPECT_EQ(find(ops, "moe.dispatch.alltoall").collective_bytes.value, R * h * 2);
    EXPECT_EQ(find(ops, "moe.combine.alltoall").collective_bytes.value, R * h * 2);
    // The probs' all-to-all: the R copies' BF16 probs (never quantized).
    EXPECT_EQ(find(ops, "moe.dispatch.probs_alltoall").collective_bytes.value, R * 2);
    // Fp8Padding: read the 1040 rows, write 1088 (4 experts of 272); Fp8Unpadding: read and write 1040.
    EXPECT_EQ(find(ops, "experts.fp8_padding").bytes_moved.value, (R + R_pad16) * h * 2);
    EXPECT_EQ(find(ops, "experts.fp8_unpadding").bytes_moved.value, 2 * R * h * 2);
    // The grouped GEMMs run on the padded rows, in FP8; their inputs quantized with their transposes
    // (read 2, write 1 + 1 bytes an element) over all four experts' rows.
    const Op& fc1 = find(ops, "experts.fc1");
    EXPECT_EQ(shape(fc1), (std::vector<std::int64_t>{rows16, 2 * f, h, L}));
    EXPECT_EQ(fc1.gemm_precision, GemmPrecision::Fp8);
    EXPECT_EQ(fc1.saved_bytes.value, R_pad16 * h);  // kept in FP8
    EXPECT_EQ(find(ops, "fp8.experts.fc1.cast_transpose").bytes_moved.value, R_pad16 * h * 4);
    EXPECT_EQ(find(ops, "experts.swiglu").bytes_moved.value, R_pad16 * 3 * f * 2);
    EXPECT_EQ(shape(find(ops, "experts.fc2")), (std::vector<std::int64_t>{rows16, h, f, L}));
    EXPECT_EQ(find(ops, "experts.fc2").gemm_precision, GemmPrecision::Fp8);
    EXPECT_EQ(find(ops, "fp8.experts.fc2.cast_transpose").bytes_moved.value, R_pad16 * f * 4);
    // The shared expert: its SP gather moves FP8 (s·b·h, 1 byte), cast first on the rank's T tokens
    // (read 2, write 1; the transpose is made in the backward); fc2's input [s·b, 256] cast_transposed.
    EXPECT_EQ(find(ops, "shared_expert.fc1.allgather").collective_bytes.value, sb * h);
    EXPECT_EQ(find(ops, "fp8.shared_expert.fc1.cast").bytes_moved.value, T * h * 3);
    EXPECT_EQ(find(ops, "shared_expert.fc1").gemm_precision, GemmPrecision::Fp8);
    EXPECT_EQ(find(ops, "fp8.shared_expert.fc2.cast_transpose").bytes_moved.value, sb * shared_local * 4);
    EXPECT_EQ(find(ops, "shared_expert.fc2").gemm_precision, GemmPrecision::Fp8);
    // The reduce-scatter of the shared expert's output stays BF16.
    EXPECT_EQ(find(ops, "shared_expert.fc2.reducescatter").collective_bytes.value, sb * h * 2);
}

TEST(Fp8Experts, BackwardOpsByHand) {
    const OpList bwd =
        workload::layer_backward(workload::layer_shape_of(moe(1040, kDelayed)), RecomputeGranularity::None);
    const std::vector<const Op*> ops = between(bwd, "moe.unpermute.bwd", "router.wgrad");
    EXPECT_EQ(names(ops), (std::vector<std::string>{
                              "moe.unpermute.bwd", "moe.combine.alltoall.bwd", "experts.fp8_unpadding.bwd",
                              "fp8.experts.fc2.grad_cast_transpose", "experts.fc2.dgrad", "experts.fc2.wgrad",
                              "experts.swiglu.bwd", "fp8.experts.fc1.grad_cast_transpose",
                              "experts.fc1.dgrad", "experts.fc1.wgrad", "experts.fp8_padding.bwd",
                              "moe.dispatch.probs_alltoall.bwd", "moe.dispatch.alltoall.bwd",
                              "moe.permute.bwd", "router.softmax_topk.bwd", "router.dgrad", "router.wgrad"}));
    // The unpermute's backward: read T·h, write R·h, as without FP8 (BF16, no probs' gradient).
    EXPECT_EQ(find(ops, "moe.unpermute.bwd").bytes_moved.value, (T + R) * h * 2);
    EXPECT_EQ(find(ops, "moe.dispatch.probs_alltoall.bwd").collective_bytes.value, R * 2);
    // The padding's backward ops mirror the forward's: pad the output gradient, drop the padding rows'.
    EXPECT_EQ(find(ops, "experts.fp8_unpadding.bwd").bytes_moved.value, (R + R_pad16) * h * 2);
    EXPECT_EQ(find(ops, "experts.fp8_padding.bwd").bytes_moved.value, 2 * R * h * 2);
    // Output gradients cast with their transposes: fc2's [1088, h], fc1's [1088, 2f].
    EXPECT_EQ(find(ops, "fp8.experts.fc2.grad_cast_transpose").bytes_moved.value, R_pad16 * h * 4);
    EXPECT_EQ(find(ops, "fp8.experts.fc1.grad_cast_transpose").bytes_moved.value, R_pad16 * 2 * f * 4);
    for (const char* gemm :
         {"experts.fc2.dgrad", "experts.fc2.wgrad", "experts.fc1.dgrad", "experts.fc1.wgrad"}) {
        // TE's GroupedLinear runs dgrad and wgrad with its split accumulator, as Linear does.
        EXPECT_EQ(find(ops, gemm).gemm_precision, GemmPrecision::Fp8SplitAccumulator) << gemm;
    }
    EXPECT_EQ(shape(find(ops, "experts.fc1.wgrad")), (std::vector<std::int64_t>{h, 2 * f, rows16, L}));
    EXPECT_EQ(find(ops, "router.dgrad").gemm_precision, GemmPrecision::Bf16);
    EXPECT_EQ(find(ops, "router.wgrad").gemm_precision, GemmPrecision::Bf16);
    EXPECT_EQ(find(ops, "moe.dispatch.alltoall.bwd").collective_bytes.value, R * h * 2);
    // The shared expert's fc1 re-gathers its FP8 input and transposes it for the wgrad (read 1, write 1).
    const std::vector<const Op*> shared =
        between(bwd, "shared_expert.fc2.grad_allgather", "shared_expert.fc1.wgrad");
    EXPECT_EQ(find(shared, "shared_expert.fc1.input_allgather").collective_bytes.value, sb * h);
    EXPECT_EQ(find(shared, "fp8.shared_expert.fc1.input_transpose").bytes_moved.value, sb * h * 2);
}

TEST(Fp8Experts, AlignedRowsAreNotPaddedAndMxfp8AlignsTo32) {
    // s 1024: 256 rows an expert, a multiple of 16 and 32: TE's Fp8Padding returns its input as it is.
    const OpList aligned =
        workload::layer_forward(workload::layer_shape_of(moe(1024, kDelayed)), RecomputeGranularity::None);
    const std::vector<const Op*> ops = between(aligned, "router", "moe.shared_add");
    for (const Op* op : ops) {
        EXPECT_EQ(op->name.find("padding"), std::string::npos) << op->name;
    }
    EXPECT_EQ(find(ops, "experts.fc1").gemm.m, 256);
    // MXFP8 pads 260 rows to 288; BF16 leaves them at 260, with no FP8 kernel at all.
    workload::LayerShape x = workload::layer_shape_of(moe(1040, kDelayed));
    x.fp8 = Fp8Recipe::Mxfp8;
    EXPECT_EQ(workload::fp8_row_alignment(x), 32);
    EXPECT_EQ(workload::moe_sizes(x).rows, 288);
    EXPECT_EQ(workload::moe_sizes(x).R_pad, R + L * (288 - 260));
    const OpList bf16 =
        workload::layer_forward(workload::layer_shape_of(moe(1040, "")), RecomputeGranularity::None);
    const std::vector<const Op*> plain = between(bf16, "router", "moe.shared_add");
    EXPECT_EQ(find(plain, "experts.fc1").gemm.m, 260);
    EXPECT_EQ(find(plain, "experts.fc1").saved_bytes.value, R * h * 2);
    for (const Op* op : plain) {
        EXPECT_FALSE(op->name.starts_with("fp8.") || op->name.find("padding") != std::string::npos)
            << op->name;
        EXPECT_NE(op->gemm_precision, GemmPrecision::Fp8) << op->name;
    }
}

TEST(Fp8Experts, TensorwiseScalingReadsTheExpertInputsOnceMoreForTheirAmax) {
    const OpList fwd = workload::layer_forward(
        workload::layer_shape_of(moe(1040, R"(, "fp8_format": "hybrid", "fp8_recipe": "tensorwise")")),
        RecomputeGranularity::None);
    const std::vector<const Op*> ops = between(fwd, "router", "moe.shared_add");
    EXPECT_EQ(find(ops, "fp8.experts.fc1.amax").bytes_moved.value, R_pad16 * h * 2);
    EXPECT_EQ(find(ops, "fp8.shared_expert.fc1.amax").bytes_moved.value, T * h * 2);
}

cost::CostModel h100() {
    return cost::CostModel(
        cost::load_hardware_profile("h100-80gb-dgx", testing::source_path("scenarios/hardware")));
}

TEST(Fp8Experts, GroupedGemmTakesItsFp8CostInTheEngine) {
    const cost::CostModel cost = h100();
    const config::Scenario sc = moe(1040, kDelayed);
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    const engine::RunResult run = program::simulate(prog);
    const auto spans = testing::layer_zero_spans(prog, run, program::Phase::Forward);
    const program::OpSpan& fc1 = spans.at("experts.fc1");
    // Four experts of 272 padded rows, each its own {272, 2048, 1024} GEMM at the H100's FP8 curve: at
    // 1.1e9 FLOPs each is launch-bound, the 5 µs kernel floor, 20 µs in all.
    const cost::GroupedGemm experts{cost::TokenDim::M, {{rows16, L}}};
    const SimTime expected =
        to_sim_time(cost.grouped_gemm({rows16, 2 * f, h, L}, experts, GemmPrecision::Fp8));
    EXPECT_EQ(expected,
              4 * to_sim_time(cost.gemm({rows16, 2 * f, h}, cost::GemmClass::Dense, GemmPrecision::Fp8)));
    EXPECT_EQ(expected, 20'000_ns);
    EXPECT_EQ(fc1.end - fc1.start, expected);
    // Its input's cast runs just before it on the compute stream, for its own streaming time.
    const program::OpSpan& cast = spans.at("fp8.experts.fc1.cast_transpose");
    EXPECT_EQ(cast.end, fc1.start);
    EXPECT_EQ(cast.end - cast.start,
              to_sim_time(cost.memory_bound(Bytes{R_pad16 * h * 4}, cost::MemoryBoundKind::Generic)));
    // And FP8 is faster than the same GEMM in BF16 on this profile.
    EXPECT_LT(expected, to_sim_time(cost.grouped_gemm({rows16, 2 * f, h, L}, experts)));
}

TEST(Fp8Experts, WeightCopiesCoverTheExpertsButNotTheRouter) {
    // Per rank and layer: Q, K, V (1024 × 1536) and the projection (512 × 1024), two RMSNorms, the shared
    // expert (1024 × 512 and 256 × 1024) and 4 experts of 3·1024·1024; the router's 1024 × 16 left out.
    const std::int64_t moe_layer = h * 1536 + 512 * h + 2 * h + h * 512 + shared_local * h + L * 3 * h * f;
    const config::Scenario fp8 = moe(1024, kDelayed);
    EXPECT_EQ(workload::fp8_weight_parameters(fp8, 0), 2 * moe_layer);
    EXPECT_EQ(memory::static_bytes(fp8, 0).value - memory::static_bytes(moe(1024, ""), 0).value,
              2 * 2 * moe_layer);
    // With moe_layer_freq the dense first layer counts its own MLP (gated, 4096 / TP 2).
    const std::int64_t dense_layer = h * 1536 + 512 * h + 2 * h + h * 2 * 2048 + 2048 * h;
    EXPECT_EQ(workload::fp8_weight_parameters(moe(1024, kDelayed, R"(, "moe_layer_freq": [0, 1])"), 0),
              dense_layer + moe_layer);
    const OpList casts =
        workload::fp8_weight_casts(workload::fp8_weight_parameters(fp8, 0), Fp8Recipe::Delayed);
    ASSERT_EQ(casts.size(), 1u);
    EXPECT_EQ(casts.front().bytes_moved.value, 4 * 2 * moe_layer);
}

TEST(Fp8Experts, MixtralRunsInFp8AndReportsItsFp8Time) {
    const testing::CommandResult fp8 = testing::run_trainsim(
        "run " + testing::source_path("scenarios/moe/mixtral-8x7b-64gpu.json") +
        " --set training.fp8_format=hybrid --set hardware.profile=h100-80gb-dgx --format json");
    ASSERT_EQ(fp8.status, 0) << fp8.err;
    EXPECT_NE(fp8.out.find("\"fp8_gemm_s\""), std::string::npos);
}

// MLA (TP 2, SP): h 256, 4 heads, s 128, b 2, q_lora_rank 64, kv_lora_rank 32, d_qk 16, d_rope 8, d_v 24.
config::Scenario mla(const std::string& training) {
    return config::parse_scenario(
        R"({"model": {"num_layers": 4, "hidden_size": 256, "num_attention_heads": 4, "seq_length": 128,
        "padded_vocab_size": 1024, "ffn_hidden_size": 512, "swiglu": true, "normalization": "RMSNorm",
        "position_embedding_type": "rope", "untie_embeddings_and_output_weights": true,
        "add_bias_linear": false, "multi_latent_attention": true, "q_lora_rank": 64, "kv_lora_rank": 32,
        "qk_head_dim": 16, "qk_pos_emb_head_dim": 8, "v_head_dim": 24},
      "parallelism": {"tensor_model_parallel_size": 2, "sequence_parallel": true,
        "pipeline_model_parallel_size": 1},
      "training": {"micro_batch_size": 2, "global_batch_size": 8, "attention_backend": "flash")" +
            training + R"(},
      "hardware": {"profile": "h100-80gb-dgx", "gpus_per_node": 8}})",
        "test");
}

TEST(Fp8Mla, ProjectionsRunInFp8AndAttentionStaysBf16) {
    constexpr std::int64_t msb = 256, local = 128, mh = 256, rq = 64, rkv = 32, rope = 8;
    const OpList fwd =
        workload::layer_forward(workload::layer_shape_of(mla(kDelayed)), RecomputeGranularity::None);
    const std::vector<const Op*> ops = between(fwd, "fp8.q_down_proj.cast_transpose", "proj");
    EXPECT_EQ(names(ops),
              (std::vector<std::string>{"fp8.q_down_proj.cast_transpose", "q_down_proj",
                                        "fp8.kv_down_proj.cast_transpose", "kv_down_proj",
                                        "k_pos_emb.allgather", "q_norm", "q_up_proj.allgather", "q_up_proj",
                                        "kv_norm", "kv_up_proj.allgather", "kv_up_proj", "mla.rope_q",
                                        "mla.rope_kv", "attn.flash", "fp8.proj.cast_transpose", "proj"}));
    // Each down projection (TELinear) quantizes the norm's output on the rank's 128 tokens and keeps its
    // own FP8 copy of it.
    EXPECT_EQ(find(ops, "fp8.q_down_proj.cast_transpose").bytes_moved.value, local * mh * 4);
    EXPECT_EQ(find(ops, "fp8.kv_down_proj.cast_transpose").bytes_moved.value, local * mh * 4);
    EXPECT_EQ(find(ops, "q_down_proj").saved_bytes.value, local * mh);
    EXPECT_EQ(find(ops, "kv_down_proj").saved_bytes.value, local * mh);
    // The latents' norms are fused into the up projections (delayed scaling casts in the norm); their SP
    // gathers move FP8; the RoPE key's gather (a BF16 GEMM output) does not.
    EXPECT_EQ(find(ops, "q_up_proj.allgather").collective_bytes.value, msb * rq);
    EXPECT_EQ(find(ops, "kv_up_proj.allgather").collective_bytes.value, msb * rkv);
    EXPECT_EQ(find(ops, "k_pos_emb.allgather").collective_bytes.value, msb * rope * 2);
    for (const char* gemm : {"q_down_proj", "kv_down_proj", "q_up_proj", "kv_up_proj", "proj"}) {
        EXPECT_EQ(find(ops, gemm).gemm_precision, GemmPrecision::Fp8) << gemm;
    }
    EXPECT_EQ(find(ops, "attn.flash").gemm_precision, GemmPrecision::Bf16);
    // The backward transposes the re-gathered FP8 latent for the up projections' wgrad (read 1, write 1).
    const OpList bwd =
        workload::layer_backward(workload::layer_shape_of(mla(kDelayed)), RecomputeGranularity::None);
    const std::vector<const Op*> back = between(bwd, "kv_up_proj.input_allgather", "q_down_proj.wgrad");
    EXPECT_EQ(find(back, "kv_up_proj.input_allgather").collective_bytes.value, msb * rkv);
    EXPECT_EQ(find(back, "fp8.kv_up_proj.input_transpose").bytes_moved.value, msb * rkv * 2);
    EXPECT_EQ(find(back, "fp8.q_down_proj.grad_cast_transpose").bytes_moved.value, local * rq * 4);
    // BF16: one saved copy of the norm's output, no FP8 kernel.
    const OpList bf16 =
        workload::layer_forward(workload::layer_shape_of(mla("")), RecomputeGranularity::None);
    for (const Op& op : bf16) {
        EXPECT_FALSE(op.name.starts_with("fp8.")) << op.name;
        if (op.name == "kv_down_proj") {
            EXPECT_EQ(op.saved_bytes.value, 0);
        }
    }
}

TEST(Fp8Mla, IterationRuns) {
    const cost::CostModel cost = h100();
    const engine::RunResult bf16 = program::simulate(program::build_iteration(mla(""), cost));
    const engine::RunResult fp8 = program::simulate(program::build_iteration(mla(kDelayed), cost));
    EXPECT_GT(fp8.makespan, 0_ns);
    EXPECT_NE(fp8.makespan, bf16.makespan);
}

}  // namespace
}  // namespace trainsim
