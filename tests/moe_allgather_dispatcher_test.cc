// Megatron-Core's allgather token dispatcher (sim/workload/moe_token_dispatch.h, issue 16): its op list
// and collective bytes written out by hand for 8 experts, top-2, EP 4 at TP 1 and at TP 2 (SP), the
// backward's mirror, the op list it shares with the all-to-all without expert parallelism, and exact
// engine times of its all-gather and reduce-scatter over the EP group inside a node and across nodes,
// under the analytical and the flow network model.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/program/iteration_program.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"
#include "tests/support/layer_op_spans.h"
#include "tests/support/moe_ops.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using config::RecomputeGranularity;
using testing::moe_ops;
using testing::op_names;
using workload::Op;

// Two all-MoE layers: h 1024, 8 heads, s 1024, `experts` gated experts of 1024 (top-2), no biases,
// expert tensor parallelism 1, `dp` data-parallel ranks, SP with TP.
std::string scenario_text(const std::string& dispatcher, std::int64_t tp, std::int64_t ep, std::int64_t dp,
                          std::int64_t experts = 8, const std::string& model_extra = "",
                          const std::string& hardware_extra = "") {
    return R"({"model": {"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8, "seq_length": 1024,
        "moe_ffn_hidden_size": 1024, "padded_vocab_size": 32768, "ffn_hidden_size": 4096, "swiglu": true,
        "normalization": "RMSNorm", "position_embedding_type": "rope", "add_bias_linear": false,
        "num_experts": )" +
           std::to_string(experts) + R"(, "moe_router_topk": 2, "moe_grouped_gemm": true,
        "moe_token_dispatcher_type": ")" +
           dispatcher + "\"" + model_extra + R"(},
      "parallelism": {"tensor_model_parallel_size": )" +
           std::to_string(tp) + R"(, "sequence_parallel": )" + (tp > 1 ? "true" : "false") +
           R"(, "pipeline_model_parallel_size": 1, "data_parallel_size": )" + std::to_string(dp) +
           R"(, "expert_model_parallel_size": )" + std::to_string(ep) +
           R"(, "expert_tensor_parallel_size": 1},
      "training": {"micro_batch_size": 1, "global_batch_size": )" +
           std::to_string(dp) + R"(, "attention_backend": "flash"},
      "hardware": {"profile": "a100-80gb-selene", "gpus_per_node": 8)" +
           hardware_extra + "}}";
}

workload::LayerShape shape(const std::string& dispatcher, std::int64_t tp, std::int64_t ep, std::int64_t dp,
                           const std::string& model_extra = "") {
    return workload::layer_shape_of(
        config::parse_scenario(scenario_text(dispatcher, tp, ep, dp, 8, model_extra), "test"));
}

// Forward at T tokens per rank (s·b/t), EP 4, L = 2 local experts: the gather makes G = 4·T tokens; the
// rank's two experts receive 2/8 of G·k = T·2 copies: R = 2T. E = 8, h = 1024, f = 1024, bf16.
void expect_forward_by_hand(std::int64_t tp, std::int64_t dp) {
    SCOPED_TRACE("TP " + std::to_string(tp));
    const workload::OpList fwd =
        workload::layer_forward(shape("allgather", tp, 4, dp), RecomputeGranularity::None);
    const std::vector<const Op*> ops = moe_ops(fwd);
    const std::int64_t T = 1024 / tp, G = 4 * T, R = 2 * T, E = 8, h = 1024, f = 1024;
    EXPECT_EQ(op_names(ops),
              (std::vector<std::string>{"router", "router.softmax_topk", "moe.dispatch.routing_map_allgather",
                                        "moe.dispatch.probs_allgather", "moe.dispatch.allgather",
                                        "moe.permute", "experts.fc1", "experts.swiglu", "experts.fc2",
                                        "moe.unpermute", "moe.combine.reducescatter"}));
    // Routing map (bool), probs (bf16) and hidden states (bf16), each gathered to G rows over tp_ep (the
    // EP group at etp 1).
    for (const std::size_t i : {2u, 3u, 4u, 10u}) {
        EXPECT_EQ(ops[i]->group, workload::CommGroup::ExpertTensorAndModel) << ops[i]->name;
        EXPECT_TRUE(ops[i]->blocking) << ops[i]->name;
    }
    EXPECT_EQ(ops[2]->collective, cost::CollectiveKind::AllGather);
    EXPECT_EQ(ops[2]->collective_bytes.value, G * E * 1);
    EXPECT_EQ(ops[3]->collective_bytes.value, G * E * 2);
    EXPECT_EQ(ops[4]->collective, cost::CollectiveKind::AllGather);
    EXPECT_EQ(ops[4]->collective_bytes.value, G * h * 2);
    // Permute: read the R routed rows of the G gathered ones (R < G here), write R copies. The CPU
    // first reads tokens_per_expert (.cpu()), which needs the gathered map: it waits for the gathers.
    EXPECT_EQ(ops[5]->bytes_moved.value, (R + R) * h * 2);
    // It keeps TE's row_id_map over the G rows and L = 2 local experts ([G, 5] int32) and the masked_select's
    // local probs (bf16) and mask (bool), [2, G] each.
    EXPECT_EQ(ops[5]->saved_bytes.value, G * 5 * 4 + G * 2 * (2 + 1));
    EXPECT_EQ(&fwd[static_cast<std::size_t>(ops[5]->host_waits_for)], ops[4]);
    // Two local experts of R/2 rows each.
    EXPECT_EQ(ops[6]->gemm.m, R / 2);
    EXPECT_EQ(ops[6]->gemm.n, 2 * f);
    EXPECT_EQ(ops[6]->gemm.batch, 2);
    // Unpermute into the gathered shape: read R outputs, write G rows; it keeps nothing (unweighted: the
    // activation applied the probs).
    EXPECT_EQ(ops[9]->bytes_moved.value, (R + G) * h * 2);
    EXPECT_EQ(ops[9]->saved_bytes.value, 0);
    EXPECT_EQ(ops[10]->collective, cost::CollectiveKind::ReduceScatter);
    EXPECT_EQ(ops[10]->collective_bytes.value, G * h * 2);
}

TEST(MoeAllGatherDispatcher, ForwardOpsByHandAtTp1Ep4) {
    expect_forward_by_hand(1, 4);
}

TEST(MoeAllGatherDispatcher, ForwardOpsByHandAtTp2Ep4WithSequenceParallelism) {
    expect_forward_by_hand(2, 2);  // etp 1 · ep 4 divides t·d = 4
}

TEST(MoeAllGatherDispatcher, BackwardMirrorsTheForward) {
    const workload::OpList bwd =
        workload::layer_backward(shape("allgather", 1, 4, 4), RecomputeGranularity::None);
    const std::vector<const Op*> ops = moe_ops(bwd);
    const std::int64_t T = 1024, G = 4 * T, R = 2 * T, E = 8, h = 1024;
    EXPECT_EQ(op_names(ops),
              (std::vector<std::string>{
                  "moe.combine.reducescatter.bwd", "moe.unpermute.bwd", "experts.fc2.dgrad",
                  "experts.fc2.wgrad", "experts.swiglu.bwd", "experts.fc1.dgrad", "experts.fc1.wgrad",
                  "moe.permute.bwd", "moe.dispatch.allgather.bwd", "moe.dispatch.probs_allgather.bwd",
                  "router.softmax_topk.bwd", "router.dgrad", "router.wgrad", "moe.input_grad_add"}));
    // The reduce-scatter's backward gathers the output gradient; the all-gathers' reduce-scatter the
    // hidden and the probs gradients; the routing map has none.
    EXPECT_EQ(ops[0]->collective, cost::CollectiveKind::AllGather);
    EXPECT_EQ(ops[0]->collective_bytes.value, G * h * 2);
    // The unpermute's backward gathers the R local copies' gradient rows and writes them: no probs'
    // gradient to form (Megatron-Core weights the rows inside the experts' activation).
    EXPECT_EQ(ops[1]->bytes_moved.value, (R + R) * h * 2);
    EXPECT_EQ(ops[7]->bytes_moved.value, (R + G) * h * 2);
    EXPECT_EQ(ops[8]->collective, cost::CollectiveKind::ReduceScatter);
    EXPECT_EQ(ops[8]->collective_bytes.value, G * h * 2);
    EXPECT_EQ(ops[9]->collective, cost::CollectiveKind::ReduceScatter);
    EXPECT_EQ(ops[9]->collective_bytes.value, G * E * 2);
}

// Without expert parallelism neither dispatcher exchanges tokens, and the allgather's permute and
// unpermute touch the rank's own T tokens: the two op lists are the same but for what the allgather's
// permute keeps beside the row_id_map: its masked_select's local probs and mask (T·E·(2 + 1) bytes).
TEST(MoeAllGatherDispatcher, WithoutExpertParallelismItIsTheAllToAllsOpList) {
    for (const bool forward : {true, false}) {
        SCOPED_TRACE(forward ? "forward" : "backward");
        auto ops = [forward](const std::string& dispatcher) {
            const workload::LayerShape x = shape(dispatcher, 1, 1, 4);
            return forward ? workload::layer_forward(x, RecomputeGranularity::None)
                           : workload::layer_backward(x, RecomputeGranularity::None);
        };
        const workload::OpList gather = ops("allgather"), a2a = ops("alltoall");
        ASSERT_EQ(gather.size(), a2a.size());
        for (std::size_t i = 0; i < gather.size(); ++i) {
            EXPECT_EQ(gather[i].name, a2a[i].name);
            EXPECT_EQ(gather[i].bytes_moved.value, a2a[i].bytes_moved.value) << gather[i].name;
            const std::int64_t masked_select = gather[i].name == "moe.permute" ? 1024 * 8 * (2 + 1) : 0;
            EXPECT_EQ(gather[i].saved_bytes.value, a2a[i].saved_bytes.value + masked_select)
                << gather[i].name;
            EXPECT_DOUBLE_EQ(gather[i].flops().value, a2a[i].flops().value) << gather[i].name;
        }
    }
}

// A skewed router loads the busiest rank's experts, not the gather: every rank gathers all G tokens.
TEST(MoeAllGatherDispatcher, SkewGrowsTheExpertsNotTheGather) {
    const workload::OpList flat =
        workload::layer_forward(shape("allgather", 1, 4, 4), RecomputeGranularity::None);
    const workload::OpList skewed = workload::layer_forward(
        shape("allgather", 1, 4, 4, R"(, "moe_load_skew": 2)"), RecomputeGranularity::None);
    auto find = [](const workload::OpList& ops, const std::string& name) -> const Op& {
        for (const Op& op : ops) {
            if (op.name == name) {
                return op;
            }
        }
        throw std::runtime_error("no op " + name);
    };
    EXPECT_EQ(find(skewed, "moe.dispatch.allgather").collective_bytes.value,
              find(flat, "moe.dispatch.allgather").collective_bytes.value);
    EXPECT_EQ(find(skewed, "moe.combine.reducescatter").collective_bytes.value,
              find(flat, "moe.combine.reducescatter").collective_bytes.value);
    // Two local experts, one at twice its share: R/2·(1 + 2) = 1.5·R = 3072 rows.
    const Op& fc1 = find(skewed, "experts.fc1");
    EXPECT_EQ(fc1.gemm.m * fc1.gemm.batch, 3072);
}

// GPU 0's layer-0 forward spans of micro-batch 0, by op name.
std::map<std::string, program::OpSpan> forward_spans(const std::string& text) {
    const config::Scenario sc = config::parse_scenario(text, "test");
    const program::IterationProgram prog = program::build_iteration(sc, testing::shipped_cost_model());
    const engine::RunResult run = program::simulate(prog);
    return testing::layer_zero_spans(prog, run, program::Phase::Forward);
}

SimTime length(const program::OpSpan& s) {
    return s.end - s.start;
}

// EP `ep` over `ep` GPUs (TP 1, DP ep, one expert per rank... or more): the hidden all-gather's S is
// G = ep·1024 tokens of 1024 bf16 elements, priced on the EP group's span of 8-GPU nodes.
void expect_gather_timing(std::int64_t ep, std::int64_t experts, cost::Scope scope, int nodes) {
    SCOPED_TRACE("EP " + std::to_string(ep));
    const cost::CostModel cost = testing::shipped_cost_model();
    const auto spans = forward_spans(scenario_text("allgather", 1, ep, ep, experts));
    const Bytes s{ep * 1024 * 1024 * 2};
    const SimTime gather = to_sim_time(
        cost.collective(cost::CollectiveKind::AllGather, s, static_cast<int>(ep), scope, nodes, 8));
    const SimTime scatter = to_sim_time(
        cost.collective(cost::CollectiveKind::ReduceScatter, s, static_cast<int>(ep), scope, nodes, 8));
    EXPECT_EQ(length(spans.at("moe.dispatch.allgather")), gather);
    EXPECT_EQ(length(spans.at("moe.combine.reducescatter")), scatter);
    // One stream, in issue order: map, probs, hidden; the permute waits for the hidden states, the
    // reduce-scatter for the unpermute.
    EXPECT_EQ(spans.at("moe.dispatch.probs_allgather").start,
              spans.at("moe.dispatch.routing_map_allgather").end);
    EXPECT_EQ(spans.at("moe.dispatch.allgather").start, spans.at("moe.dispatch.probs_allgather").end);
    EXPECT_EQ(spans.at("moe.permute").start, spans.at("moe.dispatch.allgather").end);
    EXPECT_EQ(spans.at("moe.combine.reducescatter").start, spans.at("moe.unpermute").end);
}

TEST(MoeAllGatherDispatcher, GatherInsideANodeIsNvlinkOnly) {
    expect_gather_timing(4, 8, cost::Scope::IntraNode, 1);
}

TEST(MoeAllGatherDispatcher, GatherAcrossTwoNodesUsesTheNics) {
    expect_gather_timing(16, 16, cost::Scope::InterNode, 2);
}

// The flow model: alone on the network the EP group's all-gather inside a node takes the measured
// NVLink curve's time, as the analytical model prices it.
TEST(MoeAllGatherDispatcher, FlowModelGatherAloneTakesTheAnalyticalTime) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const auto spans =
        forward_spans(scenario_text("allgather", 1, 4, 4, 8, "", R"(, "network_model": "flow")"));
    const Bytes s{4 * 1024 * 1024 * 2};
    const SimTime expected =
        to_sim_time(cost.collective(cost::CollectiveKind::AllGather, s, 4, cost::Scope::IntraNode, 1, 0));
    EXPECT_NEAR(static_cast<double>(length(spans.at("moe.dispatch.allgather")).ns()),
                static_cast<double>(expected.ns()), 2.0);
}

// The shipped Mixtral 8x7B scenario (TP 2, EP 8 inside a node) with the dispatcher switched from the
// command line: it runs, and the iteration is slower than with the all-to-all (each rank gathers
// EP/k = 4× the bytes the all-to-all sends it, and reduce-scatters them back).
TEST(MoeAllGatherDispatcher, CliRunsMixtralWithTheAllGatherDispatcher) {
    const std::string mixtral = testing::source_path("scenarios/moe/mixtral-8x7b-64gpu.json");
    const auto a2a = testing::run_trainsim("run " + mixtral + " --format json");
    const auto gather = testing::run_trainsim(
        "run " + mixtral + " --format json --set model.moe_token_dispatcher_type=allgather");
    ASSERT_EQ(a2a.status, 0) << a2a.err;
    ASSERT_EQ(gather.status, 0) << gather.err;
    const auto a = nlohmann::json::parse(a2a.out), g = nlohmann::json::parse(gather.out);
    EXPECT_GT(g["iteration_time_s"].get<double>(), a["iteration_time_s"].get<double>());
    EXPECT_GT(g["breakdown"]["exposed_ep_comm_s"].get<double>(),
              a["breakdown"]["exposed_ep_comm_s"].get<double>());
}

}  // namespace
}  // namespace trainsim
