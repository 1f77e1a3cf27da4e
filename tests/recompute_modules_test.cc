// Selective recomputation of named modules (training.recompute_modules, Megatron-Core's
// --recompute-modules): the activation bytes each module no longer keeps in a small MLA + MoE layer,
// counted by hand; the recompute time of a layer equal to its re-run ops' forward times; the default
// (["core_attn"]) equal to today's selective recompute; and the one-line errors.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sim/core/input_error.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/program/layer_program.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"
#include "tests/support/layer_op_spans.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using config::RecomputeGranularity;
using workload::OpKind;
using workload::OpList;

// Two layers on one GPU (TP 1, no SP): h 256, 4 heads, s 128, b 2; MLA with q_lora_rank 64,
// kv_lora_rank 32, d_qk 16, d_rope 8, d_v 24; a gated dense MLP of 512 in layer 0 and, with `moe`,
// 4 gated experts of 128 (top-2) and a shared expert of 128 in layer 1; flash attention.
std::string scenario_text(bool moe, const std::string& training_extra) {
    const std::string experts = moe ? R"(, "num_experts": 4, "moe_router_topk": 2, "moe_ffn_hidden_size": 128,
        "moe_shared_expert_intermediate_size": 128, "moe_layer_freq": [0, 1],
        "moe_token_dispatcher_type": "alltoall", "moe_grouped_gemm": true)"
                                    : "";
    return R"({"model": {"num_layers": 2, "hidden_size": 256, "num_attention_heads": 4, "seq_length": 128,
        "padded_vocab_size": 1024, "ffn_hidden_size": 512, "swiglu": true, "normalization": "RMSNorm",
        "position_embedding_type": "rope", "add_bias_linear": false,
        "multi_latent_attention": true, "q_lora_rank": 64, "kv_lora_rank": 32, "qk_head_dim": 16,
        "qk_pos_emb_head_dim": 8, "v_head_dim": 24)" +
           experts + R"(},
      "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1},
      "training": {"micro_batch_size": 2, "global_batch_size": 2, "attention_backend": "flash",
        "recompute_granularity": "selective")" +
           training_extra + R"(},
      "hardware": {"profile": "h100-80gb-dgx", "gpus_per_node": 8}})";
}

config::Scenario scenario(const std::string& modules, bool moe = true) {
    const std::string extra = modules.empty() ? "" : R"(, "recompute_modules": )" + modules;
    return config::parse_scenario(scenario_text(moe, extra), "test");
}

// Activation bytes layer `layer` keeps under selective recompute of `modules`.
std::int64_t kept(const std::string& modules, std::int64_t layer) {
    return workload::layer_activation_bytes(workload::layer_shape_of(scenario(modules), layer),
                                            RecomputeGranularity::Selective)
        .value;
}

// Hand sizes: s·b = 256 tokens; Q and K of 4 heads × (16 + 8) = 96 wide, V 4 × 24 = 96; the fp32
// log-sum-exp b·a·s·4; 256·2 = 512 routed copies on the one rank holding the 4 experts.
constexpr std::int64_t tokens = 256, h = 256, rq = 64, rkv = 32, copies = 512, f = 128, shared = 128;
constexpr std::int64_t bf16 = 2;
constexpr std::int64_t qkv = (2 * tokens * 96 + tokens * 96) * bf16;
constexpr std::int64_t lse = 2 * 4 * 128 * 4;
constexpr std::int64_t norm_output = tokens * h * bf16;

TEST(RecomputeModules, EmptyListKeepsWhatNoRecomputeKeeps) {
    for (const std::int64_t layer : {0, 1}) {
        const workload::LayerShape x = workload::layer_shape_of(scenario("[]"), layer);
        EXPECT_EQ(workload::layer_activation_bytes(x, RecomputeGranularity::Selective).value,
                  workload::layer_activation_bytes(x, RecomputeGranularity::None).value);
        EXPECT_EQ(workload::layer_backward(x, RecomputeGranularity::Selective).size(),
                  workload::layer_backward(x, RecomputeGranularity::None).size());
    }
}

TEST(RecomputeModules, CoreAttnDropsTheLogSumExp) {
    EXPECT_EQ(kept("[]", 0) - kept(R"(["core_attn"])", 0), lse);
    EXPECT_EQ(kept("[]", 1) - kept(R"(["core_attn"])", 1), lse);
}

TEST(RecomputeModules, MlaUpProjDropsTheUpProjectionInputsAndQkv) {
    // The up projections' inputs (the normed latents, 256 × 64 and 256 × 32) and Q, K, V; the latent
    // norms keep their inputs (the checkpoint's).
    const std::int64_t dropped = tokens * (rq + rkv) * bf16 + qkv;
    EXPECT_EQ(kept("[]", 0) - kept(R"(["mla_up_proj"])", 0), dropped);
    EXPECT_EQ(kept("[]", 1) - kept(R"(["mla_up_proj"])", 1), dropped);
    // With core_attn too, the core attention keeps nothing of its own but the statistics it drops.
    EXPECT_EQ(kept("[]", 0) - kept(R"(["mla_up_proj", "core_attn"])", 0), dropped + lse);
}

TEST(RecomputeModules, LayerNormDropsTheOutputsOfTheUnfusedNorms) {
    // The dense layer: the input norm before MLA's down projections (its pre-MLP norm is fused into
    // fc1). The MoE layer: that one, and the pre-MLP norm's output, which the router and the shared
    // expert's fc1 both read and which is kept once.
    EXPECT_EQ(kept("[]", 0) - kept(R"(["layernorm"])", 0), norm_output);
    EXPECT_EQ(kept("[]", 1) - kept(R"(["layernorm"])", 1), 2 * norm_output);
}

TEST(RecomputeModules, MlpCheckpointsTheDenseMlpOnly) {
    // fc1's input (the norm's output), the SwiGLU input (2 × 512 wide) and fc2's input (512 wide).
    EXPECT_EQ(kept("[]", 0) - kept(R"(["mlp"])", 0), tokens * (h + 2 * 512 + 512) * bf16);
    EXPECT_EQ(kept("[]", 1), kept(R"(["mlp"])", 1));
}

TEST(RecomputeModules, MoeActDropsTheExpertActivationOutput) {
    EXPECT_EQ(kept("[]", 1) - kept(R"(["moe_act"])", 1), copies * f * bf16);
    EXPECT_EQ(kept("[]", 0), kept(R"(["moe_act"])", 0));
}

TEST(RecomputeModules, SharedExpertsDropTheSharedExpertTensors) {
    // The SwiGLU input (2 × 128) and fc2's input (128); fc1's input is the norm's output, which the
    // router keeps.
    const std::int64_t shared_tensors = tokens * (2 * shared + shared) * bf16;
    EXPECT_EQ(kept("[]", 1) - kept(R"(["shared_experts"])", 1), shared_tensors);
}

TEST(RecomputeModules, MoeKeepsOnlyTheCheckpointInput) {
    // Everything the MoE MLP keeps but the router's input: the top-k's FP32 scores and bool routing map
    // (256 × 4 each), the permute's row_id_map (256 × 9 int32), the experts' fc1 input (512 × 256),
    // SwiGLU input (512 × 256) and permuted probs (512, bf16), fc2 input (512 × 128), and the shared
    // expert's tensors.
    const std::int64_t routed =
        tokens * 4 * (4 + 1) + tokens * 9 * 4 + copies * (h + 2 * f + f) * bf16 + copies * bf16;
    const std::int64_t shared_tensors = tokens * (2 * shared + shared) * bf16;
    EXPECT_EQ(kept("[]", 1) - kept(R"(["moe"])", 1), routed + shared_tensors);
}

cost::CostModel h100() {
    return cost::CostModel(
        cost::load_hardware_profile("h100-80gb-dgx", testing::source_path("scenarios/hardware")));
}

// One layer's forward and backward simulated (`trainsim layer`'s program): the recompute time is the sum
// of the re-run ops' forward times, and each re-run op takes what it took in the forward.
void expect_recompute_is_the_forward_again(const config::Scenario& sc, const std::string& label) {
    const cost::CostModel cost = h100();
    const program::IterationProgram prog = program::build_single_layer(sc, cost);
    const engine::RunResult run = program::simulate(prog);
    const auto forward = testing::layer_zero_spans(prog, run, program::Phase::Forward);
    SimTime rerun{};
    SimTime recompute{};  // what the reports' recompute line adds up: the recompute tasks' time
    int rerun_ops = 0;
    for (std::size_t t = 0; t < prog.info.size(); ++t) {
        if (prog.info[t].category == program::TaskCategory::Recompute) {
            recompute += run.timings[t].end - run.timings[t].start;
        }
        if (prog.info[t].phase != program::Phase::Backward) {
            continue;
        }
        for (const program::OpSpan& s :
             program::op_spans(prog, engine::TaskId::from_index(t), run.timings[t])) {
            if (s.op == nullptr || !s.op->is_recompute || s.op->kind == OpKind::Collective) {
                continue;
            }
            const auto again = forward.find(s.op->name);
            ASSERT_NE(again, forward.end()) << label << ": " << s.op->name;
            EXPECT_EQ(s.end - s.start, again->second.end - again->second.start)
                << label << ": " << s.op->name;
            rerun += again->second.end - again->second.start;
            ++rerun_ops;
        }
    }
    EXPECT_GT(rerun_ops, 0) << label;
    EXPECT_EQ(recompute, rerun) << label;
}

TEST(RecomputeModules, RecomputeTimeIsTheReRunOpsForwardTime) {
    // The MoE layer (the one `trainsim layer` builds for an MoE model), then the dense MLA layer.
    for (const char* modules :
         {R"(["core_attn"])", R"(["mla_up_proj"])", R"(["layernorm"])", R"(["moe_act"])",
          R"(["shared_experts"])", R"(["moe"])", R"(["layernorm", "mla_up_proj", "moe_act", "core_attn"])"}) {
        expect_recompute_is_the_forward_again(scenario(modules), modules);
    }
    expect_recompute_is_the_forward_again(scenario(R"(["mlp"])", /*moe=*/false), "mlp");
}

TEST(RecomputeModules, ReRunOpsComeBeforeTheirBackward) {
    const OpList bwd = workload::layer_backward(
        workload::layer_shape_of(scenario(R"(["mla_up_proj", "core_attn", "moe_act"])"), 1),
        RecomputeGranularity::Selective);
    std::map<std::string, std::size_t> at;
    for (std::size_t i = 0; i < bwd.size(); ++i) {
        at.emplace(bwd[i].name + (bwd[i].is_recompute ? "@recompute" : ""), i);
    }
    // moe_act before fc2's backward; the up projections after the output projection's backward and
    // before the core attention's recompute, which reads the Q, K, V they rewrite.
    EXPECT_LT(at.at("experts.swiglu@recompute"), at.at("experts.fc2.dgrad"));
    EXPECT_GT(at.at("q_up_proj@recompute"), at.at("proj.dgrad"));
    EXPECT_LT(at.at("mla.rope_kv@recompute"), at.at("attn.flash@recompute"));
    EXPECT_LT(at.at("attn.flash@recompute"), at.at("attn.flash.bwd"));
}

TEST(RecomputeModules, DefaultIsCoreAttentionAsBefore) {
    // Absent and ["core_attn"] are the same scenario: the same op lists and the same simulated iteration.
    const config::Scenario absent = scenario("");
    const config::Scenario listed = scenario(R"(["core_attn"])");
    EXPECT_EQ(absent.training.selective_modules(), listed.training.selective_modules());
    for (const std::int64_t layer : {0, 1}) {
        EXPECT_EQ(kept("", layer), kept(R"(["core_attn"])", layer));
    }
    const cost::CostModel cost = h100();
    const auto a = experiment::simulate_scenario(absent, cost);
    const auto b = experiment::simulate_scenario(listed, cost);
    EXPECT_EQ(a.report.fingerprint, b.report.fingerprint);
    EXPECT_EQ(a.report.hardware_flops_convention, b.report.hardware_flops_convention);
}

// Each bad scenario fails with one line naming the key and the rule.
void expect_error(const std::string& text, const std::string& part) {
    try {
        (void)config::parse_scenario(text, "test");
        ADD_FAILURE() << "no InputError for " << part;
    } catch (const InputError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find(part), std::string::npos) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
}

TEST(RecomputeModules, Errors) {
    expect_error(scenario_text(true, R"(, "recompute_modules": ["moe_ac"])"),
                 R"(training.recompute_modules[0]: expected one of "core_attn", )");
    expect_error(scenario_text(true, R"(, "recompute_modules": ["core_attn", "moe_ac"])"),
                 R"(got "moe_ac" (did you mean "moe_act"?))");
    expect_error(scenario_text(true, R"(, "recompute_modules": "core_attn")"),
                 R"(training.recompute_modules: expected a list of names, got "core_attn")");
    expect_error(scenario_text(true, R"(, "recompute_modules": ["mhc"])"),
                 R"(training.recompute_modules[0]: "mhc" recomputes part of a Megatron-Core layer)");
    expect_error(scenario_text(false, R"(, "recompute_modules": ["moe_act"])"),
                 R"(training.recompute_modules: "moe_act" requires MoE layers (model.num_experts))");
    expect_error(scenario_text(false, R"(, "recompute_modules": ["shared_experts"])"),
                 R"("shared_experts" requires model.moe_shared_expert_intermediate_size)");
    expect_error(R"({"model": {"preset": "gpt3-1.3b"}, "parallelism": {"tensor_model_parallel_size": 1,
        "pipeline_model_parallel_size": 1}, "training": {"micro_batch_size": 1, "global_batch_size": 1,
        "recompute_granularity": "selective", "recompute_modules": ["core_attn", "mla_up_proj"]},
        "hardware": {"profile": "h100-80gb-dgx"}})",
                 R"(training.recompute_modules: "mla_up_proj" requires model.multi_latent_attention)");
    expect_error(R"({"model": {"preset": "gpt3-1.3b"}, "parallelism": {"tensor_model_parallel_size": 1,
        "pipeline_model_parallel_size": 1}, "training": {"micro_batch_size": 1, "global_batch_size": 1,
        "recompute_granularity": "selective", "recompute_modules": ["layernorm"]},
        "hardware": {"profile": "h100-80gb-dgx"}})",
                 R"("layernorm" has no norm to recompute)");
    std::string all_moe = scenario_text(true, R"(, "recompute_modules": ["mlp"])");
    all_moe.replace(all_moe.find("[0, 1]"), 6, "1");
    expect_error(all_moe, R"("mlp" recomputes dense MLPs and every layer of the model is MoE)");
    std::string full = scenario_text(true, R"(, "recompute_modules": ["core_attn"])");
    full.replace(full.find(R"("selective")"), 11, R"("full")");
    expect_error(
        full,
        R"(training.recompute_modules requires training.recompute_granularity="selective", got "full")");
}

TEST(RecomputeModules, CliRefusesWithStatus2AndOneLine) {
    const std::string k22b = testing::source_path("scenarios/korthikanti-22b.json");
    const std::string selective = " --set training.recompute_granularity=selective";
    for (
        const auto& [set, message] : std::map<std::string, std::string>{
            {R"( --set 'training.recompute_modules=["core_attn"]')",
             R"(training.recompute_modules requires training.recompute_granularity="selective", got "none")"},
            {selective + R"( --set 'training.recompute_modules=["core_atn"]')",
             R"(did you mean "core_attn"?)"},
            {selective + R"( --set 'training.recompute_modules=["moe_act"]')",
             R"("moe_act" requires MoE layers)"}}) {
        const auto r = testing::run_trainsim("run " + k22b + set);
        EXPECT_EQ(r.status, 2) << set << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
        EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
        EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    }
}

}  // namespace
}  // namespace trainsim
