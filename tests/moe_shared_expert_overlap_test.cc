// Megatron-Core's moe_shared_expert_overlap (sim/workload/shared_expert.h): the shared expert's pieces on
// their own stream beside the alltoall dispatcher's all-to-alls. Its op lists by hand, exact engine times
// of a small MoE layer on two nodes (EP 16, so the all-to-alls cross the NICs) with and without the key,
// Megatron's refusals, and a shipped scenario it shortens.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "sim/core/input_error.h"
#include "sim/cost/hardware_profile.h"
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
using workload::OpList;

// A small MoE model: h 1024, 8 heads, s 1024, 16 gated experts of 1024 (top-2), a shared expert of 2048.
// Capacity factor 1 with padding: balanced routing keeps every token (C = 1024·2/16 = 128 per rank and
// expert) and the dispatcher never synchronises with the host, so the times below are the streams' alone.
struct Options {
    std::string overlap = "true";
    std::int64_t tp = 1;
    std::int64_t ep = 16;
    std::string dispatcher = "alltoall";
    std::string shared = "2048";
    std::string training = "";     // more training keys
    std::string parallelism = "";  // more parallelism keys
    std::string schedule = "auto";
    std::int64_t micro_batches = 1;  // per data-parallel replica
};

std::string scenario_text(const Options& o) {
    const std::int64_t dp = 16 / o.tp;
    return R"({"model": {"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8, "seq_length": 1024,
        "padded_vocab_size": 32768, "ffn_hidden_size": 4096, "swiglu": true, "normalization": "RMSNorm",
        "position_embedding_type": "rope", "add_bias_linear": false, "num_experts": 16, "moe_router_topk": 2,
        "moe_ffn_hidden_size": 1024, "moe_grouped_gemm": true, "moe_expert_capacity_factor": 1.0,
        "moe_pad_expert_input_to_capacity": true, "moe_shared_expert_intermediate_size": )" +
           o.shared + R"(, "moe_token_dispatcher_type": ")" + o.dispatcher +
           R"(", "moe_shared_expert_overlap": )" + o.overlap + R"(},
      "parallelism": {"tensor_model_parallel_size": )" +
           std::to_string(o.tp) + R"(, "sequence_parallel": )" + (o.tp > 1 ? "true" : "false") +
           R"(, "pipeline_model_parallel_size": 1, "data_parallel_size": )" + std::to_string(dp) +
           R"(, "expert_model_parallel_size": )" + std::to_string(o.ep) + o.parallelism + R"(},
      "training": {"micro_batch_size": 1, "global_batch_size": )" +
           std::to_string(dp * o.micro_batches) + R"(, "attention_backend": "flash")" + o.training + R"(},
      "schedule": ")" +
           o.schedule + R"(", "hardware": {"profile": "h100-80gb-dgx", "gpus_per_node": 8}})";
}

config::Scenario scenario(bool overlap) {
    Options o;
    o.overlap = overlap ? "true" : "false";
    return config::parse_scenario(scenario_text(o), "test");
}

cost::HardwareProfile h100() {
    return cost::load_hardware_profile("h100-80gb-dgx", testing::source_path("scenarios/hardware"));
}

// The H100 profile with collectives that take nothing from the kernels beside them: the overlap's gain
// is then exactly what it hides.
cost::CostModel h100_without_contention() {
    cost::HardwareProfile p = h100();
    p.intra_node.compute_share_while_overlapped = 0.0;
    p.inter_node.compute_share_while_overlapped = 0.0;
    return cost::CostModel(p);
}

std::int32_t index_of(const OpList& ops, const std::string& name) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].name == name) {
            return static_cast<std::int32_t>(i);
        }
    }
    ADD_FAILURE() << "no op " << name;
    return -1;
}

bool waits_for(const OpList& ops, const std::string& op, const std::string& on) {
    const std::vector<std::int32_t>& after = ops[static_cast<std::size_t>(index_of(ops, op))].after;
    return std::find(after.begin(), after.end(), index_of(ops, on)) != after.end();
}

std::vector<std::string> shared_and_moe_names(const OpList& ops) {
    std::vector<std::string> names;
    for (const Op& op : ops) {
        if (op.name.starts_with("router") || op.name.starts_with("moe.") || op.name.starts_with("experts.") ||
            op.name.starts_with("shared_expert.")) {
            names.push_back(op.name);
        }
    }
    return names;
}

TEST(SharedExpertOverlap, ForwardPiecesSitBetweenTheDispatchersSteps) {
    const workload::LayerShape x = workload::layer_shape_of(scenario(true));
    EXPECT_TRUE(x.shared_expert_overlap);
    const OpList fwd = workload::layer_forward(x, RecomputeGranularity::None);
    // token_dispatcher.py: fc1 right after the tokens' all-to-all, before the probs' ("tokens A2A ->
    // shared experts fc1 -> probs A2A"), fc2 right after the combine's, the output added after the
    // unpermute (get_output).
    EXPECT_EQ(shared_and_moe_names(fwd),
              (std::vector<std::string>{
                  "router", "router.softmax_topk", "moe.dispatch.tokens_per_expert.allgather", "moe.permute",
                  "moe.dispatch.alltoall", "shared_expert.fc1", "shared_expert.swiglu",
                  "moe.dispatch.probs_alltoall", "experts.fc1", "experts.swiglu", "experts.fc2",
                  "moe.combine.alltoall", "shared_expert.fc2", "moe.unpermute", "moe.shared_add"}));
    const Op& dispatch = fwd[static_cast<std::size_t>(index_of(fwd, "moe.dispatch.alltoall"))];
    const Op& probs = fwd[static_cast<std::size_t>(index_of(fwd, "moe.dispatch.probs_alltoall"))];
    const Op& combine = fwd[static_cast<std::size_t>(index_of(fwd, "moe.combine.alltoall"))];
    // On NCCL's stream: the shared expert does not wait for them, the routed ops after them do.
    EXPECT_FALSE(dispatch.blocking);
    EXPECT_FALSE(probs.blocking);
    EXPECT_FALSE(combine.blocking);
    EXPECT_TRUE(waits_for(fwd, "moe.dispatch.alltoall", "moe.permute"));
    EXPECT_FALSE(waits_for(fwd, "shared_expert.fc1", "moe.dispatch.alltoall"));
    // The probs' all-to-all reads the permute's probs, not the shared expert's output (its own stream).
    EXPECT_TRUE(waits_for(fwd, "moe.dispatch.probs_alltoall", "moe.permute"));
    EXPECT_FALSE(waits_for(fwd, "moe.dispatch.probs_alltoall", "shared_expert.swiglu"));
    EXPECT_TRUE(waits_for(fwd, "experts.fc1", "moe.dispatch.alltoall"));
    EXPECT_TRUE(waits_for(fwd, "experts.fc1", "moe.dispatch.probs_alltoall"));
    EXPECT_FALSE(waits_for(fwd, "shared_expert.fc2", "moe.combine.alltoall"));
    EXPECT_TRUE(waits_for(fwd, "moe.unpermute", "moe.combine.alltoall"));
    // Without the key the list is the serial one: the shared expert after the unpermute, the exchanges
    // synchronous.
    const OpList serial =
        workload::layer_forward(workload::layer_shape_of(scenario(false)), RecomputeGranularity::None);
    EXPECT_EQ(shared_and_moe_names(serial),
              (std::vector<std::string>{
                  "router", "router.softmax_topk", "moe.dispatch.tokens_per_expert.allgather", "moe.permute",
                  "moe.dispatch.alltoall", "moe.dispatch.probs_alltoall", "experts.fc1", "experts.swiglu",
                  "experts.fc2", "moe.combine.alltoall", "moe.unpermute", "shared_expert.fc1",
                  "shared_expert.swiglu", "shared_expert.fc2", "moe.shared_add"}));
    EXPECT_TRUE(serial[static_cast<std::size_t>(index_of(serial, "moe.dispatch.alltoall"))].blocking);
    // The same ops, the same work and the same tensors kept (TP 1: fc1 reads the router's input).
    std::int64_t saved_overlapped = 0, saved_serial = 0;
    double flops_overlapped = 0, flops_serial = 0;
    for (const Op& op : fwd) {
        saved_overlapped += op.saved_bytes.value;
        flops_overlapped += op.flops().value;
    }
    for (const Op& op : serial) {
        saved_serial += op.saved_bytes.value;
        flops_serial += op.flops().value;
    }
    EXPECT_EQ(saved_overlapped, saved_serial);
    EXPECT_DOUBLE_EQ(flops_overlapped, flops_serial);
}

TEST(SharedExpertOverlap, BackwardRunsFc2BesideTheCombineAndFc1BesideTheDispatch) {
    const OpList bwd =
        workload::layer_backward(workload::layer_shape_of(scenario(true)), RecomputeGranularity::None);
    EXPECT_EQ(shared_and_moe_names(bwd), (std::vector<std::string>{"moe.unpermute.bwd",
                                                                   "moe.combine.alltoall.bwd",
                                                                   "shared_expert.fc2.dgrad",
                                                                   "shared_expert.fc2.wgrad",
                                                                   "experts.fc2.dgrad",
                                                                   "experts.fc2.wgrad",
                                                                   "experts.swiglu.bwd",
                                                                   "experts.fc1.dgrad",
                                                                   "experts.fc1.wgrad",
                                                                   "moe.dispatch.probs_alltoall.bwd",
                                                                   "moe.dispatch.alltoall.bwd",
                                                                   "shared_expert.swiglu.bwd",
                                                                   "shared_expert.fc1.dgrad",
                                                                   "shared_expert.fc1.wgrad",
                                                                   "moe.permute.bwd",
                                                                   "router.softmax_topk.bwd",
                                                                   "router.dgrad",
                                                                   "router.wgrad",
                                                                   "moe.input_grad_add",
                                                                   "moe.shared_input_grad_add"}));
    EXPECT_FALSE(waits_for(bwd, "shared_expert.fc2.dgrad", "moe.combine.alltoall.bwd"));
    EXPECT_TRUE(waits_for(bwd, "experts.fc2.dgrad", "moe.combine.alltoall.bwd"));
    EXPECT_FALSE(waits_for(bwd, "shared_expert.swiglu.bwd", "moe.dispatch.alltoall.bwd"));
    EXPECT_FALSE(waits_for(bwd, "shared_expert.swiglu.bwd", "moe.dispatch.probs_alltoall.bwd"));
    EXPECT_TRUE(waits_for(bwd, "moe.permute.bwd", "moe.dispatch.probs_alltoall.bwd"));
    EXPECT_TRUE(waits_for(bwd, "moe.permute.bwd", "moe.dispatch.alltoall.bwd"));
}

// GPU 0's spans of layer 0, micro-batch 0, in `phase`.
std::map<std::string, program::OpSpan> spans(bool overlap, const cost::CostModel& cost,
                                             program::Phase phase) {
    return testing::simulated_layer_zero_spans(scenario(overlap), cost, phase);
}

SimTime length(const program::OpSpan& s) {
    return s.end - s.start;
}

// From the first of `first` to the end of `last`: the MoE MLP's time in one pass.
SimTime extent(const std::map<std::string, program::OpSpan>& s, const std::vector<std::string>& first,
               const std::string& last) {
    SimTime start = s.at(last).end;
    for (const std::string& name : first) {
        start = std::min(start, s.at(name).start);
    }
    return s.at(last).end - start;
}

TEST(SharedExpertOverlap, ForwardHidesTheSharedExpertBehindTheAllToAllsExactly) {
    const cost::CostModel cost = h100_without_contention();
    const auto serial = spans(false, cost, program::Phase::Forward);
    const auto overlapped = spans(true, cost, program::Phase::Forward);
    // token_dispatch's two exchanges, back to back on NCCL's stream: the tokens', then the probs'.
    const SimTime dispatch =
        length(serial.at("moe.dispatch.alltoall")) + length(serial.at("moe.dispatch.probs_alltoall"));
    const SimTime combine = length(serial.at("moe.combine.alltoall"));
    const SimTime fc1_and_act = serial.at("shared_expert.swiglu").end - serial.at("shared_expert.fc1").start;
    const SimTime fc2 = length(serial.at("shared_expert.fc2"));
    ASSERT_GT(dispatch, 0_ns);
    // Every op takes what it took serially; the exchanges cross the two nodes' NICs.
    for (const auto& [name, s] : serial) {
        EXPECT_EQ(length(overlapped.at(name)), length(s)) << name;
    }
    // fc1 starts with the tokens' all-to-all, once the permute is done; the probs' follows the tokens' on
    // NCCL's stream whatever fc1 does; the experts wait for the probs and fc1's activation.
    const auto& ov = overlapped;
    EXPECT_EQ(ov.at("shared_expert.fc1").start, ov.at("moe.permute").end);
    EXPECT_EQ(ov.at("moe.dispatch.alltoall").start, ov.at("moe.permute").end);
    EXPECT_EQ(ov.at("moe.dispatch.probs_alltoall").start, ov.at("moe.dispatch.alltoall").end);
    EXPECT_EQ(ov.at("experts.fc1").start,
              std::max(ov.at("moe.dispatch.probs_alltoall").end, ov.at("shared_expert.swiglu").end));
    EXPECT_EQ(ov.at("shared_expert.fc2").start, ov.at("experts.fc2").end);
    EXPECT_EQ(ov.at("moe.combine.alltoall").start, ov.at("experts.fc2").end);
    EXPECT_EQ(ov.at("moe.unpermute").start,
              std::max(ov.at("moe.combine.alltoall").end, ov.at("shared_expert.fc2").end));
    // The MoE MLP's forward is shorter by exactly what each exchange hides: fc1 and its activation hide
    // behind the tokens' and the probs' all-to-alls together, fc2 behind the combine's.
    const SimTime saved = std::min(dispatch, fc1_and_act) + std::min(combine, fc2);
    EXPECT_EQ(extent(serial, {"router"}, "moe.shared_add") - extent(ov, {"router"}, "moe.shared_add"), saved);
    // The exchanges here cross the NICs (2 nodes) and the shared expert is small: it hides entirely.
    EXPECT_EQ(saved, fc1_and_act + fc2);
}

TEST(SharedExpertOverlap, BackwardHidesTheSharedExpertBehindTheAllToAllsExactly) {
    const cost::CostModel cost = h100_without_contention();
    const auto serial = spans(false, cost, program::Phase::Backward);
    const auto ov = spans(true, cost, program::Phase::Backward);
    const SimTime combine = length(serial.at("moe.combine.alltoall.bwd"));
    // The probs' gradients' all-to-all, then the tokens', back to back on NCCL's stream.
    const SimTime dispatch =
        length(serial.at("moe.dispatch.probs_alltoall.bwd")) + length(serial.at("moe.dispatch.alltoall.bwd"));
    const SimTime fc2 = serial.at("shared_expert.fc2.wgrad").end - serial.at("shared_expert.fc2.dgrad").start;
    const SimTime fc1 =
        serial.at("shared_expert.fc1.wgrad").end - serial.at("shared_expert.swiglu.bwd").start;
    EXPECT_EQ(ov.at("shared_expert.fc2.dgrad").start, ov.at("moe.combine.alltoall.bwd").start);
    EXPECT_EQ(ov.at("experts.fc2.dgrad").start,
              std::max(ov.at("moe.combine.alltoall.bwd").end, ov.at("shared_expert.fc2.wgrad").end));
    EXPECT_EQ(ov.at("shared_expert.swiglu.bwd").start, ov.at("moe.dispatch.probs_alltoall.bwd").start);
    EXPECT_EQ(ov.at("moe.dispatch.alltoall.bwd").start, ov.at("moe.dispatch.probs_alltoall.bwd").end);
    EXPECT_EQ(ov.at("moe.permute.bwd").start,
              std::max(ov.at("moe.dispatch.alltoall.bwd").end, ov.at("shared_expert.fc1.wgrad").end));
    const std::vector<std::string> first = {"shared_expert.fc2.dgrad", "moe.unpermute.bwd"};
    EXPECT_EQ(extent(serial, first, "moe.shared_input_grad_add") -
                  extent(ov, first, "moe.shared_input_grad_add"),
              std::min(combine, fc2) + std::min(dispatch, fc1));
}

TEST(SharedExpertOverlap, KernelsBesideTheAllToAllShareTheGpuWithNccl) {
    // The shipped profile: an inter-node collective holds 2 % of the GPU (Calculon's processor_usage), so
    // fc1 beside the dispatch runs 1/0.98 as slow for the time they overlap (op_lowering.cc price()).
    const cost::CostModel cost(h100());
    const auto serial = spans(false, cost, program::Phase::Forward);
    const auto ov = spans(true, cost, program::Phase::Forward);
    const SimTime fc1 = length(serial.at("shared_expert.fc1"));
    const SimTime dispatch = length(serial.at("moe.dispatch.alltoall"));
    const double slowdown = cost.compute_slowdown_while_overlapped(cost::Scope::InterNode);
    EXPECT_DOUBLE_EQ(slowdown, 1.0 / 0.98);
    EXPECT_EQ(
        length(ov.at("shared_expert.fc1")),
        fc1 + SimTime{std::llround(static_cast<double>(std::min(fc1, dispatch).ns()) * (slowdown - 1.0))});
    EXPECT_GT(length(ov.at("shared_expert.fc1")), fc1);
}

TEST(SharedExpertOverlap, TensorParallelCollectivesRunOnTheSharedExpertsStream) {
    // TP 2 with SP, EP 8 (both nodes' GPUs: etp·ep = 8 divides t·d = 16): the shared expert's gather
    // (before the permute) and reduce-scatter (after fc2) are Megatron's BF16 ones on its own stream.
    Options o;
    o.tp = 2;
    o.ep = 8;
    const config::Scenario sc = config::parse_scenario(scenario_text(o), "test");
    Options off = o;
    off.overlap = "false";
    const workload::LayerShape x = workload::layer_shape_of(sc);
    const OpList fwd = workload::layer_forward(x, RecomputeGranularity::None);
    const std::vector<std::string> names = shared_and_moe_names(fwd);
    const auto pos = [&](const std::string& n) {
        return std::find(names.begin(), names.end(), n) - names.begin();
    };
    EXPECT_LT(pos("shared_expert.pre_forward_comm.allgather"), pos("moe.permute"));
    EXPECT_LT(pos("shared_expert.fc2"), pos("shared_expert.post_forward_comm.reducescatter"));
    EXPECT_LT(pos("shared_expert.post_forward_comm.reducescatter"), pos("moe.unpermute"));
    const Op& gather =
        fwd[static_cast<std::size_t>(index_of(fwd, "shared_expert.pre_forward_comm.allgather"))];
    EXPECT_EQ(gather.stream, workload::OpStream::SharedExpertComm);
    EXPECT_EQ(gather.collective_bytes.value, 1024 * 1024 * 2);  // the gathered [s·b, h] in BF16
    EXPECT_TRUE(waits_for(fwd, "shared_expert.fc1", "shared_expert.pre_forward_comm.allgather"));
    EXPECT_TRUE(waits_for(fwd, "moe.shared_add", "shared_expert.post_forward_comm.reducescatter"));
    // fc1 keeps the gathered input (its TE Linear does no gather of its own): s·b·h·2 bytes more than the
    // serial shared expert, whose column-parallel fc1 re-gathers the router's shard in the backward.
    const OpList serial =
        workload::layer_forward(workload::layer_shape_of(config::parse_scenario(scenario_text(off), "test")),
                                RecomputeGranularity::None);
    std::int64_t extra = 0;
    for (const Op& op : fwd) {
        extra += op.saved_bytes.value;
    }
    for (const Op& op : serial) {
        extra -= op.saved_bytes.value;
    }
    EXPECT_EQ(extra, 1024 * 1024 * 2);
    // The backward: the output gradient's gather first, the input gradient's reduce-scatter last, both on
    // the shared expert's stream; no re-gather of fc1's input.
    const OpList bwd = workload::layer_backward(x, RecomputeGranularity::None);
    const std::vector<std::string> bnames = shared_and_moe_names(bwd);
    EXPECT_EQ(bnames.front(), "shared_expert.post_forward_comm.reducescatter.bwd");
    EXPECT_EQ(std::count(bnames.begin(), bnames.end(), "shared_expert.fc1.input_allgather"), 0);
    EXPECT_TRUE(waits_for(bwd, "moe.shared_input_grad_add", "shared_expert.pre_forward_comm.allgather.bwd"));
    // It simulates, the stream included, and the layer is no slower than the serial one.
    const cost::CostModel cost = h100_without_contention();
    const auto ov = testing::simulated_layer_zero_spans(sc, cost);
    const auto se =
        testing::simulated_layer_zero_spans(config::parse_scenario(scenario_text(off), "test"), cost);
    EXPECT_LT(extent(ov, {"router"}, "moe.shared_add"), extent(se, {"router"}, "moe.shared_add"));
}

TEST(SharedExpertOverlap, ShortensTheShippedDeepSeekV3B200Run) {
    // Megatron-Bridge's DeepSeek-V3 B200 config keeps the provider's moe_shared_expert_overlap (alltoall,
    // no EP overlap): the shipped scenario sets it; turning it off lengthens the iteration.
    const std::string name = "megatron-bridge/deepseek-v3-256gpu-b200-mxfp8";
    const config::Scenario on = testing::shipped_scenario(name);
    ASSERT_TRUE(on.model.moe->shared_expert_overlap);
    const config::Scenario off =
        testing::shipped_scenario(name, {{"model.moe_shared_expert_overlap", "false"}});
    const cost::CostModel cost(
        cost::load_hardware_profile("b200-dgx", testing::source_path("scenarios/hardware")));
    const SimTime with = program::simulate(program::build_iteration(on, cost)).makespan;
    const SimTime without = program::simulate(program::build_iteration(off, cost)).makespan;
    EXPECT_LT(with, without);
}

TEST(SharedExpertOverlap, Fp8QuantizesTheGatheredTokensWhole) {
    // TP 2 with SP, FP8 tensorwise: serially TE's column-parallel fc1 casts the rank's 512 tokens and
    // gathers FP8, transposing the gathered copy for the wgrad; overlapped its TE Linear (parallel_mode
    // None) gets Megatron's BF16-gathered 1024 tokens and casts and transposes them whole.
    auto kernels = [](const std::string& overlap) {
        Options o;
        o.overlap = overlap;
        o.tp = 2;
        o.ep = 8;
        o.training = R"(, "fp8_format": "e4m3", "fp8_recipe": "tensorwise")";
        const workload::LayerShape x =
            workload::layer_shape_of(config::parse_scenario(scenario_text(o), "test"));
        std::map<std::string, std::int64_t> bytes;
        for (const OpList& ops : {workload::layer_forward(x, RecomputeGranularity::None),
                                  workload::layer_backward(x, RecomputeGranularity::None)}) {
            for (const Op& op : ops) {
                if (op.name.starts_with("fp8.shared_expert.fc1.")) {
                    bytes[op.name] += op.bytes_moved.value;
                }
            }
        }
        return bytes;
    };
    const std::int64_t h = 1024, sb = 1024;
    const std::map<std::string, std::int64_t> serial = kernels("false");
    EXPECT_EQ(serial.at("fp8.shared_expert.fc1.amax"), sb / 2 * h * 2);
    EXPECT_EQ(serial.at("fp8.shared_expert.fc1.cast"), sb / 2 * h * 3);
    EXPECT_EQ(serial.at("fp8.shared_expert.fc1.input_transpose"), sb * h * 2);
    const std::map<std::string, std::int64_t> overlapped = kernels("true");
    EXPECT_EQ(overlapped.at("fp8.shared_expert.fc1.amax"), sb * h * 2);
    EXPECT_EQ(overlapped.at("fp8.shared_expert.fc1.cast_transpose"), sb * h * 4);
    EXPECT_EQ(overlapped.count("fp8.shared_expert.fc1.input_transpose"), 0u);
}

void expect_refused(const std::string& text, const std::string& message) {
    try {
        (void)config::parse_scenario(text, "test");
        ADD_FAILURE() << "accepted: " << message;
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
}

TEST(SharedExpertOverlap, MegatronsRulesAreRefused) {
    Options allgather;
    allgather.dispatcher = "allgather";
    expect_refused(scenario_text(allgather),
                   "model.moe_shared_expert_overlap=true needs model.moe_token_dispatcher_type=\"alltoall\"");
    Options recompute;
    recompute.training = R"(, "recompute_granularity": "selective", "recompute_modules": ["shared_experts"])";
    expect_refused(scenario_text(recompute), "model.moe_shared_expert_overlap=true is not possible with "
                                             "\"shared_experts\" in training.recompute_modules");
    // Megatron asserts it off beside the combined 1F1B, shared expert or not.
    Options combined;
    combined.shared = "null";
    combined.parallelism = R"(, "overlap_moe_expert_parallel_comm": true)";
    expect_refused(scenario_text(combined), "model.moe_shared_expert_overlap=true is not possible with "
                                            "parallelism.overlap_moe_expert_parallel_comm=true");
    // trainsim's own: DualPipe's overlapped pairs already interleave two chunks at the all-to-alls.
    Options dualpipe;
    dualpipe.schedule = "dualpipev";
    dualpipe.parallelism = R"(, "virtual_pipeline_model_parallel_size": 2)";
    dualpipe.micro_batches = 2;
    expect_refused(
        scenario_text(dualpipe),
        "model.moe_shared_expert_overlap=true is not modelled with DualPipe's overlapped F&B pairs");
    // A dense model has no MoE keys.
    expect_refused(R"({"model": {"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
        "seq_length": 1024, "padded_vocab_size": 32768, "moe_shared_expert_overlap": true},
      "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1},
      "training": {"micro_batch_size": 1, "global_batch_size": 1},
      "hardware": {"profile": "h100-80gb-dgx"}})",
                   "model.moe_shared_expert_overlap: applies only to a mixture-of-experts model");
    // Without a shared expert the key has no effect, as in Megatron ("only effective when
    // moe-shared-expert-intermediate-size is set"), whatever the dispatcher.
    Options none = allgather;
    none.shared = "null";
    EXPECT_FALSE(
        workload::layer_shape_of(config::parse_scenario(scenario_text(none), "test")).shared_expert_overlap);
    // The CLI: one line naming the key and the rule, exit status 2, nothing on stdout.
    const testing::CommandResult r = testing::run_trainsim(
        "run " + testing::source_path("scenarios/megatron-bridge/deepseek-v3-256gpu-b200-mxfp8.json") +
        " --set model.moe_token_dispatcher_type=allgather --set model.moe_shared_expert_overlap=true");
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("model.moe_shared_expert_overlap=true needs model.moe_token_dispatcher_type"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace
}  // namespace trainsim
