// The mixture-of-experts MLP (sim/workload/moe_layer.h, issue 16 step 2): its op list written out by
// hand for a small layer (router, permute, dispatch, grouped expert GEMMs, combine, unpermute and the
// backward's mirror), and exact engine times of the dispatch and combine all-to-all inside a node and
// across nodes (the EP group's node span from Megatron-Core's expert rank order).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/input_error.h"
#include "sim/memory/static_memory.h"
#include "sim/program/iteration_program.h"
#include "sim/program/op_pricing.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_ops.h"
#include "sim/workload/transformer_layer.h"
#include "tests/support/layer_op_spans.h"
#include "tests/support/moe_ops.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using config::RecomputeGranularity;
using testing::moe_ops;
using workload::Op;
using workload::OpKind;

// A small all-MoE model: h 1024, 8 heads, s 1024, 16 gated experts of 1024 (top-2), no biases.
// `large`: Mixtral's layer sizes (h 4096, 32 heads, s 4096, experts of 14336), whose expert GEMMs sit
// on the plateau of the GEMM efficiency curve.
std::string scenario_text(std::int64_t ep, std::int64_t dp, const std::string& model_extra = "",
                          bool large = false) {
    const std::string sizes = large ? R"("hidden_size": 4096, "num_attention_heads": 32, "seq_length": 4096,
        "moe_ffn_hidden_size": 14336)"
                                    : R"("hidden_size": 1024, "num_attention_heads": 8, "seq_length": 1024,
        "moe_ffn_hidden_size": 1024)";
    return R"({"model": {"num_layers": 2, )" + sizes +
           R"(, "padded_vocab_size": 32768, "ffn_hidden_size": 4096, "swiglu": true,
        "normalization": "RMSNorm", "position_embedding_type": "rope", "add_bias_linear": false,
        "num_experts": 16, "moe_router_topk": 2,
        "moe_token_dispatcher_type": "alltoall", "moe_grouped_gemm": true)" +
           model_extra + R"(},
      "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1,
        "data_parallel_size": )" +
           std::to_string(dp) + R"(, "expert_model_parallel_size": )" + std::to_string(ep) + R"(},
      "training": {"micro_batch_size": 1, "global_batch_size": )" +
           std::to_string(dp) + R"(, "attention_backend": "flash"},
      "hardware": {"profile": "h100-80gb-dgx", "gpus_per_node": 8}})";
}

config::Scenario scenario(std::int64_t ep, std::int64_t dp, const std::string& model_extra = "",
                          bool large = false) {
    return config::parse_scenario(scenario_text(ep, dp, model_extra, large), "test");
}

TEST(MoeLayer, ForwardOpsByHand) {
    // T = 1024 tokens, k = 2: R = 2048 routed copies; EP 4 holds L = 4 experts of 512 rows each.
    const workload::LayerShape x = workload::layer_shape_of(scenario(4, 4));
    const workload::OpList fwd = workload::layer_forward(x, RecomputeGranularity::None);
    const std::vector<const Op*> ops = moe_ops(fwd);
    const std::int64_t T = 1024, R = 2048, h = 1024, f = 1024, n = 16;
    std::vector<std::string> names;
    for (const Op* op : ops) {
        names.push_back(op->name);
    }
    EXPECT_EQ(names, (std::vector<std::string>{
                         "router", "router.softmax_topk", "moe.dispatch.tokens_per_expert.allgather",
                         "moe.permute", "moe.dispatch.alltoall", "moe.dispatch.probs_alltoall", "experts.fc1",
                         "experts.swiglu", "experts.fc2", "moe.combine.alltoall", "moe.unpermute"}));
    auto shape = [](const Op* op) {
        return std::vector<std::int64_t>{op->gemm.m, op->gemm.n, op->gemm.k, op->gemm.batch};
    };
    EXPECT_EQ(shape(ops[0]), (std::vector<std::int64_t>{T, n, h, 1}));
    // The ranks' tokens per expert (n int64 each) gathered over the tp_ep group (the EP group of 4 at etp 1).
    EXPECT_EQ(ops[2]->collective, cost::CollectiveKind::AllGather);
    EXPECT_EQ(ops[2]->group, workload::CommGroup::ExpertTensorAndModel);
    EXPECT_EQ(ops[2]->collective_bytes.value, 4 * n * 8);
    EXPECT_EQ(ops[3]->bytes_moved.value, (T + R) * h * 2);
    EXPECT_EQ(ops[4]->collective, cost::CollectiveKind::AllToAll);
    EXPECT_EQ(ops[4]->group, workload::CommGroup::Expert);
    EXPECT_EQ(ops[4]->collective_bytes.value, R * h * 2);
    EXPECT_TRUE(ops[4]->blocking);
    // The CPU reads the splits, copied after the gather, before it issues the all-to-all.
    EXPECT_EQ(&fwd[static_cast<std::size_t>(ops[4]->host_waits_for)], ops[2]);
    // token_dispatch's second all-to-all: each routed copy's prob (one bf16) follows its token.
    EXPECT_EQ(ops[5]->collective, cost::CollectiveKind::AllToAll);
    EXPECT_EQ(ops[5]->group, workload::CommGroup::Expert);
    EXPECT_EQ(ops[5]->collective_bytes.value, R * 2);
    EXPECT_TRUE(ops[5]->blocking);
    EXPECT_EQ(shape(ops[6]), (std::vector<std::int64_t>{R / 4, 2 * f, h, 4}));
    EXPECT_EQ(ops[6]->grouped, (cost::GroupedGemm{cost::TokenDim::M, {{R / 4, 4}}}));
    EXPECT_EQ(ops[6]->saved_bytes.value, R * h * 2);
    EXPECT_EQ(ops[7]->bytes_moved.value, R * 3 * f * 2);
    EXPECT_EQ(shape(ops[8]), (std::vector<std::int64_t>{R / 4, h, f, 4}));
    EXPECT_EQ(ops[9]->collective_bytes.value, R * h * 2);
    EXPECT_EQ(ops[10]->bytes_moved.value, (R + T) * h * 2);
    // The experts do k/N of a dense MLP of N·f per token: 2·T·k·3hf FLOPs, whatever EP is.
    EXPECT_DOUBLE_EQ(ops[6]->flops().value + ops[8]->flops().value, 2.0 * T * 2 * 3 * h * f);
    // No tensor-parallel collective around the MoE MLP, and no dense fc1/fc2 left; no other host wait.
    for (const Op& op : fwd) {
        EXPECT_FALSE(op.name == "fc1" || op.name == "fc2") << op.name;
        EXPECT_TRUE(op.host_waits_for < 0 || &op == ops[4]) << op.name;
    }
}

TEST(MoeLayer, BackwardMirrorsTheForward) {
    const workload::LayerShape x = workload::layer_shape_of(scenario(4, 4));
    const workload::OpList bwd = workload::layer_backward(x, RecomputeGranularity::None);
    const std::vector<const Op*> ops = moe_ops(bwd);
    std::vector<std::string> names;
    for (const Op* op : ops) {
        names.push_back(op->name);
    }
    EXPECT_EQ(names, (std::vector<std::string>{
                         "moe.unpermute.bwd", "moe.combine.alltoall.bwd", "experts.fc2.dgrad",
                         "experts.fc2.wgrad", "experts.swiglu.bwd", "experts.fc1.dgrad", "experts.fc1.wgrad",
                         "moe.dispatch.probs_alltoall.bwd", "moe.dispatch.alltoall.bwd", "moe.permute.bwd",
                         "router.softmax_topk.bwd", "router.dgrad", "router.wgrad", "moe.input_grad_add"}));
    // The unpermute's backward copies each token's gradient to its k rows: read T·h, write R·h (no probs:
    // Megatron-Core weights the rows inside the experts' activation).
    EXPECT_EQ(ops[0]->bytes_moved.value, (1024 + 2048) * 1024 * 2);
    // The probs' gradients go back first ("Backward launch order: probs A2A -> tokens A2A"): R bf16.
    EXPECT_EQ(ops[7]->collective_bytes.value, 2048 * 2);
    // dgrad and wgrad each cost what the forward GEMM costs.
    const double fwd = 2.0 * 2048 * 3 * 1024 * 1024;
    EXPECT_DOUBLE_EQ(ops[2]->flops().value + ops[5]->flops().value, fwd);
    EXPECT_DOUBLE_EQ(ops[3]->flops().value + ops[6]->flops().value, fwd);
}

TEST(MoeLayer, ExpertParametersSplitOverEp) {
    // Per rank: attention (Q 1024, K and V 2·1024 wide with 8 heads, projection), two RMSNorms, the
    // router (1024 × 16) and 16/EP experts of 3·1024·1024.
    const std::int64_t h = 1024;
    const std::int64_t base = 4 * h * h + 2 * h + h * 16;
    EXPECT_EQ(workload::layer_parameters_per_rank(workload::layer_shape_of(scenario(4, 4))),
              base + 4 * 3 * h * h);
    EXPECT_EQ(workload::layer_parameters_per_rank(workload::layer_shape_of(scenario(16, 16))),
              base + 3 * h * h);
}

// The dispatch and combine in the engine, on GPU 0, micro-batch 0, layer 0's forward.
// What a test reads of one simulated op (the program that owns the op is gone by then).
struct Span {
    SimTime start{}, end{};
    double flops = 0.0;
    std::int64_t bytes = 0;
};

std::map<std::string, Span> moe_spans(const config::Scenario& sc) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    const engine::RunResult run = program::simulate(prog);
    std::map<std::string, Span> spans;
    for (const auto& [name, s] : testing::layer_zero_spans(prog, run, program::Phase::Forward)) {
        spans[name] = Span{s.start, s.end, s.op->flops().value, s.op->collective_bytes.value};
    }
    return spans;
}

void expect_all_to_all_timing(std::int64_t ep, cost::Scope scope, int nodes) {
    SCOPED_TRACE("EP " + std::to_string(ep));
    const cost::CostModel cost = testing::shipped_cost_model();
    const std::map<std::string, Span> spans = moe_spans(scenario(ep, 16));
    const Span dispatch = spans.at("moe.dispatch.alltoall");
    const Span probs = spans.at("moe.dispatch.probs_alltoall");
    const Span combine = spans.at("moe.combine.alltoall");
    // Each rank's S: its 2048 routed tokens of 1024 bf16 elements; the node's 8 GPUs share its NICs.
    const SimTime expected = to_sim_time(cost.collective(
        cost::CollectiveKind::AllToAll, Bytes{2048 * 1024 * 2}, static_cast<int>(ep), scope, nodes, 8));
    EXPECT_EQ(dispatch.end - dispatch.start, expected);
    EXPECT_EQ(combine.end - combine.start, expected);
    // The probs' all-to-all: the 2048 copies' probs, one bf16 each.
    EXPECT_EQ(probs.end - probs.start,
              to_sim_time(cost.collective(cost::CollectiveKind::AllToAll, Bytes{2048 * 2},
                                          static_cast<int>(ep), scope, nodes, 8)));
    // Synchronous: the permute feeds the dispatch, the probs follow the tokens, the experts wait for
    // both, and the combine for them.
    EXPECT_EQ(dispatch.start, spans.at("moe.permute").end);
    EXPECT_EQ(probs.start, dispatch.end);
    EXPECT_EQ(spans.at("experts.fc1").start, probs.end);
    EXPECT_EQ(combine.start, spans.at("experts.fc2").end);
    EXPECT_EQ(spans.at("moe.unpermute").start, combine.end);
}

TEST(MoeLayer, AllToAllInsideANodeIsNvlinkOnly) {
    expect_all_to_all_timing(8, cost::Scope::IntraNode, 1);
}

TEST(MoeLayer, AllToAllAcrossTwoNodesUsesTheNics) {
    expect_all_to_all_timing(16, cost::Scope::InterNode, 2);
    const cost::CostModel cost = testing::shipped_cost_model();
    // Across nodes the same bytes take longer than inside one (the NICs are slower than NVLink).
    EXPECT_GT(cost.collective(cost::CollectiveKind::AllToAll, Bytes{2048 * 1024 * 2}, 16,
                              cost::Scope::InterNode, 2, 8)
                  .value,
              cost.collective(cost::CollectiveKind::AllToAll, Bytes{2048 * 1024 * 2}, 8,
                              cost::Scope::IntraNode, 1, 8)
                  .value);
}

TEST(MoeLayer, ShippedMixtralScenarioRuns) {
    // TP 2 (SP), EP 8, ETP 1, PP 4, DP 8 on H100 nodes: the expert rank order puts EP innermost, so
    // each EP group is the 8 consecutive ranks of one node (NVLink only), whatever TP is beside it.
    const config::Scenario sc = testing::shipped_scenario("moe/mixtral-8x7b-64gpu");
    const cost::CostModel cost(
        cost::load_hardware_profile("h100-80gb-dgx", testing::source_path("scenarios/hardware")));
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    const engine::RunResult run = program::simulate(prog);
    EXPECT_GT(run.makespan, 0_ns);
    const parallel::Layout layout(sc);
    const program::OpPricing pricing(cost, layout, sc);
    EXPECT_EQ(pricing.group_span(workload::CommGroup::Expert, {0, 0, 0}), (parallel::GroupSpan{8, 1}));
    EXPECT_EQ(pricing.group_span(workload::CommGroup::Expert, {1, 3, 2}), (parallel::GroupSpan{8, 1}));
}

TEST(MoeLoadSkew, KeyIsCheckedAgainstItsBounds) {
    EXPECT_DOUBLE_EQ(scenario(16, 16).model.moe->load_skew, 1.0);  // absent: balanced
    EXPECT_DOUBLE_EQ(scenario(16, 16, R"(, "moe_load_skew": 8)").model.moe->load_skew, 8.0);
    for (const char* bad : {"0.5", "8.5", "\"2\""}) {
        try {
            (void)scenario(16, 16, std::string(R"(, "moe_load_skew": )") + bad);
            ADD_FAILURE() << bad;
        } catch (const InputError& e) {
            // E / k = 16 / 2 = 8: the busiest expert then receives every token once.
            EXPECT_NE(
                std::string(e.what()).find("model.moe_load_skew: expected a number from 1 (balanced) to "
                                           "num_experts / moe_router_topk = 8"),
                std::string::npos)
                << e.what();
        }
    }
}

TEST(MoeLoadSkew, TwiceTheMeanOnOneExpertDoublesTheExpertPhase) {
    // EP 16, one expert per rank: the busiest expert's rank receives 2·R tokens; dropless, the combine
    // waits for it. Its grouped GEMMs do twice the work, and the dispatch and combine carry twice the
    // bytes to it.
    const std::map<std::string, Span> flat = moe_spans(scenario(16, 16, "", /*large=*/true));
    const std::map<std::string, Span> skewed =
        moe_spans(scenario(16, 16, R"(, "moe_load_skew": 2)", /*large=*/true));
    auto phase = [](const std::map<std::string, Span>& s) {
        return s.at("experts.fc2").end - s.at("experts.fc1").start;
    };
    EXPECT_DOUBLE_EQ(skewed.at("experts.fc1").flops, 2.0 * flat.at("experts.fc1").flops);
    EXPECT_DOUBLE_EQ(skewed.at("experts.fc2").flops, 2.0 * flat.at("experts.fc2").flops);
    EXPECT_EQ(skewed.at("moe.dispatch.alltoall").bytes, 2 * flat.at("moe.dispatch.alltoall").bytes);
    // Twice the work; the time is within 2 % of twice (the GEMM efficiency curve is read at twice the
    // FLOPs, and the activation kernel's at twice the bytes).
    const double ratio = static_cast<double>(phase(skewed).ns()) / static_cast<double>(phase(flat).ns());
    EXPECT_NEAR(ratio, 2.0, 0.04) << ratio;
    // With 4 local experts (EP 4) only one of them doubles: R/4·(3 + 2) = 1.25·R on the busiest rank.
    const workload::OpList fwd = workload::layer_forward(
        workload::layer_shape_of(scenario(4, 4, R"(, "moe_load_skew": 2)")), RecomputeGranularity::None);
    for (const Op& op : fwd) {
        if (op.name == "experts.fc1") {
            EXPECT_EQ(op.gemm.m * op.gemm.batch, 2048 * 5 / 4);
        }
    }
}

// Token dropping (Megatron-Core's topk_softmax_with_capacity): each rank keeps at most
// C = ⌈T·k/E · factor⌉ of its tokens per expert. Here T·k/E = 1024·2/16 = 128 per rank and expert, and
// EP 4 puts L = 4 experts on a rank, which receives R = 2048 copies when balanced.
std::int64_t expert_rows(const std::string& extra) {
    for (const Op& op : workload::layer_forward(workload::layer_shape_of(scenario(4, 4, extra)),
                                                RecomputeGranularity::None)) {
        if (op.name == "experts.fc1") {
            return op.gemm.m * op.gemm.batch;
        }
    }
    return -1;
}

TEST(MoeCapacity, DroppingCapsTheBusiestExpertAndPaddingFillsEveryOne) {
    // Factor 1: the busiest expert's 2× share is cut to C = 128 per rank: balanced work, 2048 rows.
    EXPECT_EQ(expert_rows(R"(, "moe_load_skew": 2, "moe_expert_capacity_factor": 1.0)"), 2048);
    // Factor 1.5: C = 192, the busiest keeps 1.5× its share: 2048/4·(3 + 1.5) = 2304.
    EXPECT_EQ(expert_rows(R"(, "moe_load_skew": 2, "moe_expert_capacity_factor": 1.5)"), 2304);
    // Factor 0.5 drops half of every expert's tokens even when balanced.
    EXPECT_EQ(expert_rows(R"(, "moe_expert_capacity_factor": 0.5)"), 1024);
    // Padded to C = ⌈128 · 1.1⌉ = 141 per rank and expert: 4 experts · 4 ranks · 141 = 2256 rows.
    const std::string padded =
        R"(, "moe_expert_capacity_factor": 1.1, "moe_pad_expert_input_to_capacity": true)";
    EXPECT_EQ(expert_rows(padded), 2256);
    for (const Op& op : workload::layer_forward(workload::layer_shape_of(scenario(4, 4, padded)),
                                                RecomputeGranularity::None)) {
        if (op.name == "moe.dispatch.alltoall") {
            EXPECT_EQ(op.collective_bytes.value, 2256 * 1024 * 2);  // the rows of h bf16 elements
        }
    }
    // Without a factor the padding has nothing to pad to: refused, naming both keys.
    try {
        (void)scenario(4, 4, R"(, "moe_pad_expert_input_to_capacity": true)");
        ADD_FAILURE() << "padding without a capacity factor was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("model.moe_pad_expert_input_to_capacity=true requires "
                                             "model.moe_expert_capacity_factor"),
                  std::string::npos)
            << e.what();
    }
}

TEST(MoeLayer, SharedExpertIsATensorParallelMlpAfterTheRoutedOnes) {
    // TP 2 with SP, EP 2 (etp 1 · ep 2 divides t·d = 4), a shared expert of 2048: each rank gathers the
    // s·b tokens, runs fc1 (2·1024 wide: gated, 2048/2 per rank) and fc2, and reduce-scatters.
    const config::Scenario sc = config::parse_scenario(
        R"({"model": {"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8, "seq_length": 1024,
            "padded_vocab_size": 32768, "ffn_hidden_size": 4096, "swiglu": true, "add_bias_linear": false,
            "num_experts": 16, "moe_router_topk": 2, "moe_ffn_hidden_size": 1024,
            "moe_shared_expert_intermediate_size": 2048, "moe_token_dispatcher_type": "alltoall"},
          "parallelism": {"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 1,
            "data_parallel_size": 2, "sequence_parallel": true, "expert_model_parallel_size": 2,
            "expert_tensor_parallel_size": 1},
          "training": {"micro_batch_size": 1, "global_batch_size": 2, "attention_backend": "flash"},
          "hardware": {"profile": "h100-80gb-dgx", "gpus_per_node": 8}})",
        "test");
    const workload::LayerShape x = workload::layer_shape_of(sc);
    const workload::OpList fwd = workload::layer_forward(x, RecomputeGranularity::None);
    std::vector<std::string> names;
    bool after_unpermute = false;
    for (const Op& op : fwd) {
        after_unpermute = after_unpermute || op.name == "moe.unpermute";
        if (after_unpermute && op.name != "mlp.dropout_add") {
            names.push_back(op.name);
        }
        if (op.name == "shared_expert.fc1") {
            EXPECT_EQ(op.gemm.m, 1024);
            EXPECT_EQ(op.gemm.n, 2048);  // 2 · 2048 / 2
            EXPECT_EQ(op.gemm.k, 1024);
        }
        if (op.name == "moe.dispatch.alltoall") {
            // The router sees the rank's s·b/t = 512 tokens: 1024 routed copies.
            EXPECT_EQ(op.collective_bytes.value, 1024 * 1024 * 2);
        }
    }
    EXPECT_EQ(names,
              (std::vector<std::string>{"moe.unpermute", "shared_expert.fc1.allgather", "shared_expert.fc1",
                                        "shared_expert.swiglu", "shared_expert.fc2",
                                        "shared_expert.fc2.reducescatter", "moe.shared_add"}));
    // Parameters per rank: attention 4h²/2, norms, router h·16, the shared expert 3·h·2048/2, 8 local
    // experts of 3·h·1024.
    const std::int64_t h = 1024;
    EXPECT_EQ(workload::layer_parameters_per_rank(x),
              4 * h * h / 2 + 2 * 2 * h + h * 16 + 3 * h * 1024 + 8 * 3 * h * 1024);
}

// Mixtral 8x7B, TP 2, EP 8, ETP 1, PP 4, DP 8: expert data parallelism is 2·8/8 = 2.
config::Scenario mixtral() {
    return testing::shipped_scenario("moe/mixtral-8x7b-64gpu");
}

TEST(MoeLayer, ExpertGradientsReduceOverExpertDataParallelism) {
    const config::Scenario sc = mixtral();
    ASSERT_EQ(sc.parallelism.expert_data_parallel_size(), 2);
    const workload::StageParameters stage = workload::stage_parameters(sc, 1);
    // 8 layers of one local expert each (gated: 4096·2·14336 + 14336·4096).
    EXPECT_EQ(stage.expert, 8 * 3 * 4096 * 14336);
    const workload::OpList ops = workload::end_of_iteration(sc, stage.total(), 0, false, 0, stage.expert);
    std::map<std::string, const workload::Op*> by_name;
    for (const workload::Op& op : ops) {
        by_name[op.name] = &op;
    }
    const workload::Op* dense = by_name.at("dp.grad_reducescatter");
    const workload::Op* experts = by_name.at("expert_dp.grad_reducescatter");
    EXPECT_EQ(dense->group, workload::CommGroup::Data);
    EXPECT_EQ(dense->collective_bytes.value, (stage.total() - stage.expert) * 4);
    EXPECT_EQ(experts->group, workload::CommGroup::ExpertData);
    EXPECT_EQ(experts->collective_bytes.value, stage.expert * 4);
    EXPECT_EQ(by_name.at("expert_dp.param_allgather")->collective_bytes.value, stage.expert * 2);
    // The expert-DP group of rank 0 is ranks 0 and 8 (stride ETP·EP = 8): two nodes.
    const cost::CostModel cost = testing::shipped_cost_model();
    const parallel::Layout layout(sc);
    const program::OpPricing pricing(cost, layout, sc);
    EXPECT_EQ(pricing.group_span(workload::CommGroup::ExpertData, {0, 0, 0}), (parallel::GroupSpan{2, 2}));
}

TEST(MoeLayer, ExpertOptimizerStateShardedOverExpertDataParallelism) {
    const config::Scenario sc = mixtral();
    const workload::StageParameters stage = workload::stage_parameters(sc, 1);
    // Distributed optimizer: 2-byte weights and 4-byte gradients everywhere; 12 bytes of Adam state over
    // d·c = 8 for the dense weights, over expert DP = 2 for the experts.
    const double dense = static_cast<double>(stage.total() - stage.expert) * (6.0 + 12.0 / 8);
    const double experts = static_cast<double>(stage.expert) * (6.0 + 12.0 / 2);
    EXPECT_EQ(memory::static_bytes(sc, 1).value, static_cast<std::int64_t>(std::ceil(dense + experts)));
}

// --- Grouped GEMMs per expert and the dispatcher's host synchronisation --------------------------------

const Op& forward_op(const std::string& extra, std::int64_t ep, const std::string& name) {
    static std::map<std::string, workload::OpList> lists;  // the ops outlive the call
    const std::string key = extra + "/" + std::to_string(ep);
    auto [it, added] = lists.try_emplace(key);
    if (added) {
        it->second = workload::layer_forward(workload::layer_shape_of(scenario(ep, 4, extra)),
                                             RecomputeGranularity::None);
    }
    for (const Op& op : it->second) {
        if (op.name == name) {
            return op;
        }
    }
    throw std::logic_error("no op " + name);
}

TEST(MoeLayer, GroupedGemmsRunEachExpertOnItsOwnRows) {
    using cost::TokenDim;
    // EP 4, 2× skew: the busiest expert takes 2·R/4 = 1024 of its rank's 2560 rows, the other three
    // 512 each; the weight gradients carry the rows in k.
    const std::string skew = R"(, "moe_load_skew": 2)";
    const std::vector<cost::ExpertGemms> rows{{1024, 1}, {512, 3}};
    EXPECT_EQ(forward_op(skew, 4, "experts.fc1").grouped, (cost::GroupedGemm{TokenDim::M, rows}));
    EXPECT_EQ(forward_op(skew, 4, "experts.fc2").grouped, (cost::GroupedGemm{TokenDim::M, rows}));
    const workload::OpList bwd =
        workload::layer_backward(workload::layer_shape_of(scenario(4, 4, skew)), RecomputeGranularity::None);
    for (const Op& op : bwd) {
        if (op.name.starts_with("experts.fc")) {
            EXPECT_EQ(op.grouped.tokens_in, op.name.ends_with("wgrad") ? TokenDim::K : TokenDim::M)
                << op.name;
            EXPECT_EQ(op.grouped.experts, rows) << op.name;
        }
    }
    // Its price is the sum of the four experts' GEMMs: {1024, 2048, 1024} once, {512, 2048, 1024} three
    // times (fc1: h 1024 in, 2f = 2048 out).
    const cost::CostModel cost = testing::shipped_cost_model();
    const config::Scenario sc = scenario(4, 4, skew);
    const parallel::Layout layout(sc);
    const program::OpPricing pricing(cost, layout);
    EXPECT_DOUBLE_EQ(pricing.duration(forward_op(skew, 4, "experts.fc1"), {0, 0, 0}).value,
                     cost.gemm({1024, 2048, 1024}).value + 3 * cost.gemm({512, 2048, 1024}).value);
}

TEST(MoeHostSync, TheAllToAllDispatchersSyncPointFollowsMegatron) {
    const auto waits_for = [](const std::string& extra, std::int64_t ep, const std::string& name) {
        const Op& op = forward_op(extra, ep, name);
        return op.host_waits_for;
    };
    // EP 4, dropless: before the all-to-all, for the gathered tokens per expert (ForwardOpsByHand).
    EXPECT_GE(waits_for("", 4, "moe.dispatch.alltoall"), 0);
    EXPECT_LT(waits_for("", 4, "moe.permute"), 0);
    // Dropping (a capacity factor): before permutation 1, for num_out_tokens.
    const std::string drop = R"(, "moe_expert_capacity_factor": 1.0)";
    EXPECT_GE(waits_for(drop, 4, "moe.permute"), 0);
    EXPECT_LT(waits_for(drop, 4, "moe.dispatch.alltoall"), 0);
    // Drop and pad: every split is the capacity, known on the host: no wait anywhere.
    const std::string pad =
        R"(, "moe_expert_capacity_factor": 1.0, "moe_pad_expert_input_to_capacity": true)";
    for (const Op& op :
         workload::layer_forward(workload::layer_shape_of(scenario(4, 4, pad)), RecomputeGranularity::None)) {
        EXPECT_LT(op.host_waits_for, 0) << op.name;
    }
    // No EP: before the experts, for tokens_per_expert; the copy follows the router's top-k.
    const workload::OpList no_ep =
        workload::layer_forward(workload::layer_shape_of(scenario(1, 4)), RecomputeGranularity::None);
    const Op& fc1 = forward_op("", 1, "experts.fc1");
    EXPECT_EQ(no_ep[static_cast<std::size_t>(fc1.host_waits_for)].name, "router.softmax_topk");
}

SimTime host_time(const config::Scenario& sc, const cost::CostModel& cost) {
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    const engine::RunResult run = program::simulate(prog);
    SimTime host{};
    for (std::size_t t = 0; t < prog.program.size(); ++t) {
        if (prog.info.category(t) == program::TaskCategory::Host && prog.info[t].gpu == engine::GpuId{0}) {
            host += run.timings[t].end - run.timings[t].start;
        }
    }
    return host;
}

TEST(MoeHostSync, TheGpuIdlesAfterEachSyncUnlessTheSplitsAreKnown) {
    const cost::CostModel cost = testing::shipped_cost_model();
    // EP 8 inside a node: each MoE layer's forward leaves the GPU idle after the sync (here the
    // all-to-all follows the permute, which is shorter than the CPU's 6.7 + 25 µs to launch it).
    EXPECT_GT(host_time(scenario(8, 16), cost), 0_ns);
    // Drop and pad synchronises nothing: no host task.
    EXPECT_EQ(host_time(scenario(8, 16, R"(, "moe_expert_capacity_factor": 1.0,
        "moe_pad_expert_input_to_capacity": true)"),
                        cost),
              0_ns);
    // A profile without host costs cannot price the sync: one line naming the key and the section.
    cost::HardwareProfile bare = cost.profile();
    bare.host.reset();
    try {
        (void)program::build_iteration(scenario(8, 16), cost::CostModel(bare));
        ADD_FAILURE() << "a syncing dispatcher ran without host costs";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("model.moe_token_dispatcher_type=\"alltoall\" synchronises the "
                                             "host with the GPU in every MoE layer, which needs the host "
                                             "section of profile"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace trainsim
