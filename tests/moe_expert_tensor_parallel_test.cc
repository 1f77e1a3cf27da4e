// Expert tensor parallelism (parallelism.expert_tensor_parallel_size > 1; issue 16): Megatron-Core's
// TEGroupedMLP split over the expert-TP group (fc1 by columns, fc2 by rows, moe/experts.py) with the
// alltoall dispatcher's all-gather of the received tokens after the all-to-all and reduce-scatter before
// the combine (token_dispatcher.py, dispatch_postprocess and combine_preprocess), the allgather
// dispatcher's gathers over tp_ep; written out by hand for a small layer at ETP 2 against ETP 1, the
// groups' spans from the expert rank order, exact engine times, parameters and memory per rank, the
// rank rules' exit-2 lines, and a shipped scenario run at ETP 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "sim/core/input_error.h"
#include "sim/memory/static_memory.h"
#include "sim/program/iteration_program.h"
#include "sim/program/op_pricing.h"
#include "sim/workload/moe_layer.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"
#include "tests/support/layer_op_spans.h"
#include "tests/support/moe_ops.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using config::RecomputeGranularity;
using workload::CommGroup;
using workload::Op;

// Two all-MoE layers: h 1024, 8 heads, s 1024, 16 gated experts of 1024 (top-2), no biases, TP 1;
// `etp` × `ep` over `dp` ranks of `per_node`-GPU nodes.
std::string scenario_text(std::int64_t etp, std::int64_t ep, std::int64_t dp,
                          const std::string& dispatcher = "alltoall", std::int64_t per_node = 8,
                          const std::string& hardware_extra = "") {
    return R"({"model": {"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8, "seq_length": 1024,
        "moe_ffn_hidden_size": 1024, "padded_vocab_size": 32768, "ffn_hidden_size": 4096, "swiglu": true,
        "normalization": "RMSNorm", "position_embedding_type": "rope", "add_bias_linear": false,
        "num_experts": 16, "moe_router_topk": 2, "moe_grouped_gemm": true,
        "moe_token_dispatcher_type": ")" +
           dispatcher + R"("},
      "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1,
        "data_parallel_size": )" +
           std::to_string(dp) + R"(, "expert_model_parallel_size": )" + std::to_string(ep) +
           R"(, "expert_tensor_parallel_size": )" + std::to_string(etp) + R"(},
      "training": {"micro_batch_size": 1, "global_batch_size": )" +
           std::to_string(dp) + R"(, "attention_backend": "flash"},
      "hardware": {"profile": "h100-80gb-dgx", "gpus_per_node": )" +
           std::to_string(per_node) + hardware_extra + "}}";
}

config::Scenario scenario(std::int64_t etp, std::int64_t ep, std::int64_t dp,
                          const std::string& dispatcher = "alltoall", std::int64_t per_node = 8) {
    return config::parse_scenario(scenario_text(etp, ep, dp, dispatcher, per_node), "test");
}

using testing::moe_ops;
using testing::op_names;

double expert_flops(const workload::OpList& ops) {
    double sum = 0.0;
    for (const Op& op : ops) {
        if (op.name.starts_with("experts.fc")) {
            sum += op.flops().value;
        }
    }
    return sum;
}

constexpr std::int64_t T = 1024, R = 2048, h = 1024, f = 1024, n = 16;

// ETP 2 × EP 4 on 8 ranks: L = 4 local experts, each split in two. The rank's all-to-all receives R = 2048
// copies (balanced); the expert-TP gather makes them the group's 2R, run at width f/2.
TEST(MoeExpertTensorParallel, ForwardOpsByHandAtEtp2Ep4) {
    const workload::OpList fwd =
        workload::layer_forward(workload::layer_shape_of(scenario(2, 4, 8)), RecomputeGranularity::None);
    const std::vector<const Op*> ops = moe_ops(fwd);
    EXPECT_EQ(op_names(ops),
              (std::vector<std::string>{
                  "router", "router.softmax_topk", "moe.dispatch.tokens_per_expert.allgather", "moe.permute",
                  "moe.dispatch.alltoall", "moe.dispatch.probs_alltoall", "moe.dispatch.etp_allgather",
                  "moe.dispatch.etp_probs_allgather", "experts.fc1", "experts.swiglu", "experts.fc2",
                  "moe.combine.etp_reducescatter", "moe.combine.alltoall", "moe.unpermute"}));
    // Tokens per expert over tp_ep: 2·4 ranks of n int64.
    EXPECT_EQ(ops[2]->group, CommGroup::ExpertTensorAndModel);
    EXPECT_EQ(ops[2]->collective_bytes.value, 2 * 4 * n * 8);
    EXPECT_EQ(ops[3]->bytes_moved.value, (T + R) * h * 2);
    // The all-to-all over EP moves what it did at ETP 1.
    EXPECT_EQ(ops[4]->group, CommGroup::Expert);
    EXPECT_EQ(ops[4]->collective_bytes.value, R * h * 2);
    EXPECT_EQ(&fwd[static_cast<std::size_t>(ops[4]->host_waits_for)], ops[2]);  // "before_ep_alltoall"
    // token_dispatch's probs all-to-all over EP: the R received copies' probs, one bf16 each.
    EXPECT_EQ(ops[5]->collective, cost::CollectiveKind::AllToAll);
    EXPECT_EQ(ops[5]->group, CommGroup::Expert);
    EXPECT_EQ(ops[5]->collective_bytes.value, R * 2);
    // The expert-TP all-gather of the received tokens (nccl-tests' S: the gathered 2R rows) and their
    // probs (bf16, one a row).
    for (const std::size_t i : {6u, 7u, 11u}) {
        EXPECT_EQ(ops[i]->group, CommGroup::ExpertTensor) << ops[i]->name;
        EXPECT_TRUE(ops[i]->blocking) << ops[i]->name;
    }
    EXPECT_EQ(ops[6]->collective, cost::CollectiveKind::AllGather);
    EXPECT_EQ(ops[6]->collective_bytes.value, 2 * R * h * 2);
    EXPECT_EQ(ops[7]->collective_bytes.value, 2 * R * 2);
    // fc1 column-parallel: 2R rows over 4 experts, 2f/2 columns; keeps its 2R-row input.
    auto shape = [](const Op* op) {
        return std::vector<std::int64_t>{op->gemm.m, op->gemm.n, op->gemm.k, op->gemm.batch};
    };
    EXPECT_EQ(shape(ops[8]), (std::vector<std::int64_t>{2 * R / 4, 2 * f / 2, h, 4}));
    EXPECT_EQ(ops[8]->saved_bytes.value, 2 * R * h * 2);
    // SwiGLU on 2R rows of f (in) → f/2 (out); keeps its input, the same bytes as at ETP 1 (R rows of 2f),
    // and the permuted probs it weights the 2R rows by (bf16, one a row).
    EXPECT_EQ(ops[9]->bytes_moved.value, 2 * R * (f + f / 2) * 2);
    EXPECT_EQ(ops[9]->saved_bytes.value, R * 2 * f * 2 + 2 * R * 2);
    // fc2 row-parallel: f/2 in, h out (partial sums); keeps its input (2R × f/2).
    EXPECT_EQ(shape(ops[10]), (std::vector<std::int64_t>{2 * R / 4, h, f / 2, 4}));
    EXPECT_EQ(ops[10]->saved_bytes.value, R * f * 2);
    // The partial outputs reduce-scattered back to the rank's R rows (in the probs' dtype, bf16).
    EXPECT_EQ(ops[11]->collective, cost::CollectiveKind::ReduceScatter);
    EXPECT_EQ(ops[11]->collective_bytes.value, 2 * R * h * 2);
    EXPECT_EQ(ops[12]->collective_bytes.value, R * h * 2);
    EXPECT_EQ(ops[13]->bytes_moved.value, (R + T) * h * 2);
}

// A rank's expert GEMMs do the same work at ETP 2 as at ETP 1 (twice the rows at half the width: the
// t·c·d ranks of the stage share the same routed copies either way), and half the work per routed copy.
TEST(MoeExpertTensorParallel, ExpertFlopsPerCopyHalveAndPerRankStay) {
    const workload::OpList etp1 =
        workload::layer_forward(workload::layer_shape_of(scenario(1, 4, 8)), RecomputeGranularity::None);
    const workload::OpList etp2 =
        workload::layer_forward(workload::layer_shape_of(scenario(2, 4, 8)), RecomputeGranularity::None);
    // 2·rows·3hf (fc1 2f wide, fc2 f wide): R rows at ETP 1, 2R rows of f/2 at ETP 2.
    EXPECT_DOUBLE_EQ(expert_flops(etp1), 2.0 * R * 3 * h * f);
    EXPECT_DOUBLE_EQ(expert_flops(etp2), 2.0 * (2 * R) * 3 * h * (f / 2));
    const double per_copy_1 = expert_flops(etp1) / R;
    const double per_copy_2 = expert_flops(etp2) / (2 * R);
    EXPECT_DOUBLE_EQ(per_copy_2, per_copy_1 / 2);
}

TEST(MoeExpertTensorParallel, BackwardMirrorsTheForward) {
    const workload::OpList bwd =
        workload::layer_backward(workload::layer_shape_of(scenario(2, 4, 8)), RecomputeGranularity::None);
    const std::vector<const Op*> ops = moe_ops(bwd);
    EXPECT_EQ(
        op_names(ops),
        (std::vector<std::string>{
            "moe.unpermute.bwd", "moe.combine.alltoall.bwd", "moe.combine.etp_reducescatter.bwd",
            "experts.fc2.dgrad", "experts.fc2.wgrad", "experts.swiglu.bwd", "experts.fc1.dgrad",
            "experts.fc1.wgrad", "moe.dispatch.etp_allgather.bwd", "moe.dispatch.etp_probs_allgather.bwd",
            "moe.dispatch.probs_alltoall.bwd", "moe.dispatch.alltoall.bwd", "moe.permute.bwd",
            "router.softmax_topk.bwd", "router.dgrad", "router.wgrad", "moe.input_grad_add"}));
    // The unpermute's backward: read the T·h output gradient, write its R·h rows (no probs to form).
    EXPECT_EQ(ops[0]->bytes_moved.value, (T + R) * h * 2);
    // The probs' all-to-all's backward: R bf16 gradients, before the tokens'.
    EXPECT_EQ(ops[10]->group, CommGroup::Expert);
    EXPECT_EQ(ops[10]->collective_bytes.value, R * 2);
    // The reduce-scatter's backward gathers the output gradient; the gathers' reduce-scatter the input
    // and the probs gradients.
    EXPECT_EQ(ops[2]->collective, cost::CollectiveKind::AllGather);
    EXPECT_EQ(ops[2]->collective_bytes.value, 2 * R * h * 2);
    EXPECT_EQ(ops[8]->collective, cost::CollectiveKind::ReduceScatter);
    EXPECT_EQ(ops[8]->collective_bytes.value, 2 * R * h * 2);
    EXPECT_EQ(ops[9]->collective, cost::CollectiveKind::ReduceScatter);
    EXPECT_EQ(ops[9]->collective_bytes.value, 2 * R * 2);
    for (const std::size_t i : {2u, 8u, 9u}) {
        EXPECT_EQ(ops[i]->group, CommGroup::ExpertTensor) << ops[i]->name;
    }
    // dgrad of fc2: 2R rows, f/2 out of h; wgrad of fc1 over the 2R rows.
    EXPECT_EQ(ops[3]->gemm.n, f / 2);
    EXPECT_EQ(ops[7]->gemm.k, 2 * R / 4);
}

// With the expert-TP group alone (EP 1) the all-to-all runs on one rank, which Megatron skips; the CPU
// then waits for its splits before the expert-TP all-gather ("before_ep_alltoall" still applies).
TEST(MoeExpertTensorParallel, WithoutExpertParallelismOnlyTheExpertTensorGroupExchanges) {
    const workload::OpList fwd =
        workload::layer_forward(workload::layer_shape_of(scenario(2, 1, 2)), RecomputeGranularity::None);
    const std::vector<const Op*> ops = moe_ops(fwd);
    EXPECT_EQ(op_names(ops),
              (std::vector<std::string>{
                  "router", "router.softmax_topk", "moe.dispatch.tokens_per_expert.allgather", "moe.permute",
                  "moe.dispatch.etp_allgather", "moe.dispatch.etp_probs_allgather", "experts.fc1",
                  "experts.swiglu", "experts.fc2", "moe.combine.etp_reducescatter", "moe.unpermute"}));
    EXPECT_EQ(ops[2]->collective_bytes.value, 2 * n * 8);
    EXPECT_EQ(&fwd[static_cast<std::size_t>(ops[4]->host_waits_for)], ops[2]);
    // 16 local experts, 2R copies among them.
    EXPECT_EQ(ops[6]->gemm.m * ops[6]->gemm.batch, 2 * R);
}

// The allgather dispatcher gathers over tp_ep (etp·ep ranks): G = 2·4·T tokens; its local experts run
// the group's 2R copies at width f/2.
TEST(MoeExpertTensorParallel, AllGatherDispatcherGathersOverTpEp) {
    const workload::OpList fwd = workload::layer_forward(
        workload::layer_shape_of(scenario(2, 4, 8, "allgather")), RecomputeGranularity::None);
    const std::int64_t G = 2 * 4 * T;
    std::map<std::string, const Op*> by_name;
    for (const Op* op : moe_ops(fwd)) {
        by_name[op->name] = op;
    }
    EXPECT_EQ(by_name.at("moe.dispatch.allgather")->collective_bytes.value, G * h * 2);
    EXPECT_EQ(by_name.at("moe.dispatch.allgather")->group, CommGroup::ExpertTensorAndModel);
    EXPECT_EQ(by_name.at("moe.dispatch.routing_map_allgather")->collective_bytes.value, G * n);
    EXPECT_EQ(by_name.at("moe.combine.reducescatter")->collective_bytes.value, G * h * 2);
    EXPECT_EQ(by_name.at("moe.combine.reducescatter")->group, CommGroup::ExpertTensorAndModel);
    EXPECT_EQ(by_name.at("moe.permute")->bytes_moved.value, (2 * R + 2 * R) * h * 2);
    EXPECT_EQ(by_name.at("experts.fc1")->gemm.m * by_name.at("experts.fc1")->gemm.batch, 2 * R);
    EXPECT_EQ(by_name.at("experts.fc1")->gemm.n, f);
    EXPECT_EQ(by_name.count("moe.dispatch.etp_allgather"), 0U);  // the gather already spans expert TP
}

// The groups' spans from the expert rank order (etp innermost): the expert-TP pair and the tp_ep group of
// 8 inside one 8-GPU node; on 2-GPU nodes the tp_ep group of 8 spans four nodes, the pair one.
TEST(MoeExpertTensorParallel, GroupSpansFollowTheExpertRankOrder) {
    const cost::CostModel cost = testing::shipped_cost_model();
    for (const auto& [per_node, tp_ep_nodes, ep_nodes] :
         {std::tuple{8, 1, 1}, std::tuple{2, 4, 4}, std::tuple{4, 2, 2}}) {
        SCOPED_TRACE("nodes of " + std::to_string(per_node));
        const config::Scenario sc = scenario(2, 4, 16, "alltoall", per_node);
        const parallel::Layout layout(sc);
        const program::OpPricing pricing(cost, layout, sc);
        for (const parallel::Coordinates& at :
             {parallel::Coordinates{0, 0, 0}, parallel::Coordinates{0, 5, 0},
              parallel::Coordinates{0, 15, 0}}) {
            EXPECT_EQ(pricing.group_span(CommGroup::ExpertTensor, at), (parallel::GroupSpan{2, 1}));
            EXPECT_EQ(pricing.group_span(CommGroup::ExpertTensorAndModel, at),
                      (parallel::GroupSpan{8, tp_ep_nodes}));
            // EP: stride 2 over 4 members, ranks {etp, etp+2, etp+4, etp+6} of the 8-rank block.
            EXPECT_EQ(pricing.group_span(CommGroup::Expert, at), (parallel::GroupSpan{4, ep_nodes}));
            // EDP: 16 / 8 = 2 replicas, stride 8.
            EXPECT_EQ(pricing.group_span(CommGroup::ExpertData, at), (parallel::GroupSpan{2, 2}));
        }
    }
}

// Exact engine times: the expert-TP all-gather and reduce-scatter inside a node (NVLink), and with ETP 4
// on 2-GPU nodes across two nodes (the NICs), each priced by the collective model on its span; the
// experts wait for the gather, the combine all-to-all for the reduce-scatter.
void expect_expert_tensor_timing(std::int64_t etp, std::int64_t per_node, cost::Scope scope, int nodes) {
    SCOPED_TRACE("ETP " + std::to_string(etp) + " on nodes of " + std::to_string(per_node));
    const cost::CostModel cost = testing::shipped_cost_model();
    const auto spans =
        testing::simulated_layer_zero_spans(scenario(etp, 2, 2 * etp, "alltoall", per_node), cost);
    const Bytes s{etp * R * h * 2};
    const int busy = static_cast<int>(std::min<std::int64_t>(per_node, 2 * etp));
    const auto length = [&spans](const std::string& name) {
        return spans.at(name).end - spans.at(name).start;
    };
    EXPECT_EQ(length("moe.dispatch.etp_allgather"),
              to_sim_time(cost.collective(cost::CollectiveKind::AllGather, s, static_cast<int>(etp), scope,
                                          nodes, busy)));
    EXPECT_EQ(length("moe.combine.etp_reducescatter"),
              to_sim_time(cost.collective(cost::CollectiveKind::ReduceScatter, s, static_cast<int>(etp),
                                          scope, nodes, busy)));
    // token_dispatch's two all-to-alls, then dispatch_postprocess's gathers, one after the other.
    EXPECT_EQ(spans.at("moe.dispatch.probs_alltoall").start, spans.at("moe.dispatch.alltoall").end);
    EXPECT_EQ(spans.at("moe.dispatch.etp_allgather").start, spans.at("moe.dispatch.probs_alltoall").end);
    EXPECT_EQ(spans.at("experts.fc1").start, spans.at("moe.dispatch.etp_probs_allgather").end);
    EXPECT_EQ(spans.at("moe.combine.etp_reducescatter").start, spans.at("experts.fc2").end);
    EXPECT_EQ(spans.at("moe.combine.alltoall").start, spans.at("moe.combine.etp_reducescatter").end);
}

TEST(MoeExpertTensorParallel, GatherInsideANodeIsNvlinkOnly) {
    expect_expert_tensor_timing(2, 8, cost::Scope::IntraNode, 1);
}

TEST(MoeExpertTensorParallel, GatherAcrossNodesUsesTheNics) {
    expect_expert_tensor_timing(4, 2, cost::Scope::InterNode, 2);
}

// The flow model prices the expert-TP gather on the links of its own group: alone on NVLink it takes the
// analytical time.
TEST(MoeExpertTensorParallel, FlowModelGatherAloneTakesTheAnalyticalTime) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const auto spans = testing::simulated_layer_zero_spans(
        config::parse_scenario(scenario_text(2, 1, 2, "alltoall", 8, R"(, "network_model": "flow")"), "test"),
        cost);
    const SimTime expected = to_sim_time(cost.collective(
        cost::CollectiveKind::AllGather, Bytes{2 * R * h * 2}, 2, cost::Scope::IntraNode, 1, 0));
    const program::OpSpan gather = spans.at("moe.dispatch.etp_allgather");
    EXPECT_NEAR(static_cast<double>((gather.end - gather.start).ns()), static_cast<double>(expected.ns()),
                2.0);
}

// Parameters: each rank holds 1/etp of its L = E/ep experts; over the etp·ep ranks of a tp_ep group every
// expert weight once, so the model's total (model_parameters.h) is what the ranks hold.
TEST(MoeExpertTensorParallel, ExpertParametersSplitOverEtp) {
    const workload::LayerShape etp1 = workload::layer_shape_of(scenario(1, 4, 8));
    const workload::LayerShape etp2 = workload::layer_shape_of(scenario(2, 4, 8));
    EXPECT_EQ(workload::moe_expert_parameters_per_rank(etp1), 4 * 3 * h * f);
    EXPECT_EQ(workload::moe_expert_parameters_per_rank(etp2), 4 * 3 * h * f / 2);
    EXPECT_EQ(workload::moe_expert_parameters_per_rank(etp2) * 2 * 4, n * 3 * h * f);
    // The rest of the layer (attention, norms, router) is not split by expert TP.
    EXPECT_EQ(workload::layer_parameters_per_rank(etp1) - workload::moe_expert_parameters_per_rank(etp1),
              workload::layer_parameters_per_rank(etp2) - workload::moe_expert_parameters_per_rank(etp2));
}

// Memory per rank (Mixtral's shipped layout at ETP 2: edp = 16 / (2·8) = 1): the expert weights and
// gradients halve, their Adam state is no longer sharded (expert DP 1).
TEST(MoeExpertTensorParallel, StaticMemoryOfMixtralAtEtp2) {
    const config::Scenario sc = testing::shipped_scenario("moe/mixtral-8x7b-64gpu",
                                                          {{"parallelism.expert_tensor_parallel_size", "2"}});
    ASSERT_EQ(sc.parallelism.expert_data_parallel_size(), 1);
    const workload::StageParameters stage = workload::stage_parameters(sc, 1);
    EXPECT_EQ(stage.expert, 8 * 3 * 4096 * 14336 / 2);
    const double dense = static_cast<double>(stage.total() - stage.expert) * (6.0 + 12.0 / 8);
    const double experts = static_cast<double>(stage.expert) * (6.0 + 12.0 / 1);
    EXPECT_EQ(memory::static_bytes(sc, 1).value, static_cast<std::int64_t>(std::ceil(dense + experts)));
}

// The rank rules, each one line with exit status 2 naming the key.
TEST(MoeExpertTensorParallel, InvalidSizesExitTwoWithOneLine) {
    const std::string mixtral = testing::source_path("scenarios/moe/mixtral-8x7b-64gpu.json");
    for (const auto& [set, message] :
         {std::pair<std::string, std::string>{"--set parallelism.expert_tensor_parallel_size=3",
                                              "parallelism.expert_tensor_parallel_size=3 × "
                                              "parallelism.expert_model_parallel_size=8 = 24 must "
                                              "divide tensor × context × data parallel = 16"},
          {"--set parallelism.expert_tensor_parallel_size=4",
           "parallelism.expert_tensor_parallel_size=4 × parallelism.expert_model_parallel_size=8 = 32 must "
           "divide tensor × context × data parallel = 16"},
          {"--set parallelism.expert_tensor_parallel_size=2 --set model.moe_ffn_hidden_size=14335",
           "parallelism.expert_tensor_parallel_size=2 must divide model.moe_ffn_hidden_size=14335"}}) {
        const auto r = testing::run_trainsim("run " + mixtral + " " + set);
        EXPECT_EQ(r.status, 2) << set << ": " << r.err;
        EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_TRUE(r.out.empty()) << set;
    }
}

// Refused before (exit 2, "expert tensor parallelism above 1 is not simulated yet"), the shipped Mixtral
// layout at ETP 2 (etp·ep = 16 ranks: each expert-TP pair inside a node, each EP group of 8 across two)
// runs end to end; its expert-TP collectives are EP communication in the breakdown.
TEST(MoeExpertTensorParallel, MixtralRunsAtEtp2) {
    const std::string mixtral = testing::source_path("scenarios/moe/mixtral-8x7b-64gpu.json");
    const auto etp1 = testing::run_trainsim("run " + mixtral + " --format json");
    const auto etp2 = testing::run_trainsim("run " + mixtral +
                                            " --format json --set parallelism.expert_tensor_parallel_size=2");
    ASSERT_EQ(etp1.status, 0) << etp1.err;
    ASSERT_EQ(etp2.status, 0) << etp2.err;
    const auto a = nlohmann::json::parse(etp1.out), b = nlohmann::json::parse(etp2.out);
    EXPECT_GT(b["iteration_time_s"].get<double>(), 0.0);
    // The extra gather and reduce-scatter, and the EP group now spanning two nodes: more exposed EP comm.
    EXPECT_GT(b["breakdown"]["exposed_ep_comm_s"].get<double>(),
              a["breakdown"]["exposed_ep_comm_s"].get<double>());
    // Half the expert weights per rank, their optimizer state unsharded (expert DP 1 instead of 2).
    EXPECT_NE(b["peak_memory_bytes"], a["peak_memory_bytes"]);
}

}  // namespace
}  // namespace trainsim
