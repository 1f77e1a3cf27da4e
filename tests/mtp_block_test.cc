// Multi-token prediction depths (model.mtp_num_layers, issue 16; workload/mtp_block.h): the op list of a
// small depth by hand, its parameters against model_parameters' MTP term, its forward GEMM FLOPs against
// model_flops' MTP term, the activation bytes it keeps by hand, the exact time it adds to a one-GPU
// iteration, the embedding copy of the last stage and its gradient all-reduce, and the refusals.
#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <string>

#include "sim/core/input_error.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/plan/planner.h"
#include "sim/program/iteration_program.h"
#include "sim/program/op_span_visitor.h"
#include "sim/workload/element_bytes.h"
#include "sim/workload/model_flops.h"
#include "sim/workload/model_parameters.h"
#include "sim/workload/mtp_block.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/tp_replicated_gradients.h"
#include "sim/workload/transformer_layer.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using workload::MtpRecompute;
using workload::OpKind;
using workload::OpList;

constexpr std::int64_t h = 1024;
constexpr std::int64_t s = 1024;
constexpr std::int64_t V = 32768;

// Two layers of h 1024, 8 heads (GQA 4 groups), a gated MLP of 4096, RMSNorm, RoPE, no biases, untied
// embeddings; `moe` adds 8 gated experts of 1024 (top-2) on every layer.
config::Scenario scenario(const std::string& parallel, const std::string& training = "", bool moe = false,
                          std::int64_t mtp = 1) {
    const std::string experts =
        moe ? R"(, "num_experts": 8, "moe_router_topk": 2, "moe_ffn_hidden_size": 1024,
                 "moe_token_dispatcher_type": "alltoall", "moe_grouped_gemm": true)"
            : "";
    const std::string text =
        R"({"model": {"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8, "num_query_groups": 4,
        "seq_length": 1024, "padded_vocab_size": 32768, "ffn_hidden_size": 4096, "swiglu": true,
        "normalization": "RMSNorm", "position_embedding_type": "rope", "add_bias_linear": false,
        "untie_embeddings_and_output_weights": true, "mtp_num_layers": )" +
        std::to_string(mtp) + experts + R"(},
      "parallelism": {)" +
        parallel + R"(},
      "training": {"micro_batch_size": 1, "global_batch_size": 4, "attention_backend": "flash")" +
        training +
        R"(},
      "hardware": {"profile": "h100-80gb-dgx", "gpus_per_node": 8}})";
    return config::parse_scenario(text, "test");
}

const std::string kOneGpu = R"("tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1,
                                "data_parallel_size": 1)";
const std::string kTp2 = R"("tensor_model_parallel_size": 2, "sequence_parallel": true,
                             "pipeline_model_parallel_size": 1, "data_parallel_size": 1)";

std::vector<std::string> names(const OpList& ops) {
    std::vector<std::string> out;
    for (const workload::Op& op : ops) {
        out.push_back(op.name);
    }
    return out;
}

std::int64_t saved(const OpList& ops) {
    return std::accumulate(ops.begin(), ops.end(), std::int64_t{0},
                           [](std::int64_t a, const workload::Op& op) { return a + op.saved_bytes.value; });
}

TEST(MtpBlock, ForwardOpListByHand) {
    const workload::LayerShape x = workload::mtp_layer_shape(scenario(kTp2));
    const OpList f = workload::mtp_forward(x, MtpRecompute::None);
    const OpList layer = workload::layer_forward(x, config::RecomputeGranularity::None);
    std::vector<std::string> expected = {
        // the embedding of the shifted tokens (vocab-parallel)
        "mtp.embedding.lookup", "mtp.embedding.allreduce", "mtp.embedding.dropout",
        // _concat_embeddings
        "mtp.enorm.rmsnorm", "mtp.hnorm.rmsnorm", "mtp.concat", "mtp.eh_proj.input_allgather", "mtp.eh_proj",
        "mtp.eh_proj.output_allgather", "mtp.eh_proj.output_concat"};
    for (const workload::Op& op : layer) {
        expected.push_back("mtp." + op.name);
    }
    for (const char* name : {"mtp.final_rmsnorm", "mtp.output.input_allgather", "mtp.output.logits",
                             "mtp.loss.cross_entropy", "mtp.loss.allreduce_max", "mtp.loss.allreduce_target",
                             "mtp.loss.allreduce_sum_exp", "mtp.loss.acceptance_argmax",
                             "mtp.loss.acceptance_max_allgather", "mtp.loss.acceptance_argmax_allgather"}) {
        expected.push_back(name);
    }
    EXPECT_EQ(names(f), expected);
    // eh_proj: [e; h] (s·b × 2h, gathered over the sequence) times the h/t columns of this rank, then the
    // h/t-wide outputs gathered (s·b·h·2 bytes) and concatenated along the hidden dimension.
    const workload::Op& proj = f[7];
    EXPECT_EQ(proj.gemm.m, s);
    EXPECT_EQ(proj.gemm.n, h / 2);
    EXPECT_EQ(proj.gemm.k, 2 * h);
    EXPECT_EQ(f[6].collective_bytes.value, s * 2 * h * 2);
    EXPECT_EQ(f[8].collective_bytes.value, s * h * 2);
    EXPECT_EQ(f[9].bytes_moved.value, 2 * s * h * 2);
    // The argmax reads this rank's V/t logits; the gathers move t × s·b maxima (bf16) and indices (int64).
    EXPECT_EQ(f[f.size() - 3].bytes_moved.value, s * V / 2 * 2);
    EXPECT_EQ(f[f.size() - 2].collective_bytes.value, 2 * s * 2);
    EXPECT_EQ(f.back().collective_bytes.value, 2 * s * 8);
    // Dependencies stay inside the list and point backwards.
    for (std::size_t i = 0; i < f.size(); ++i) {
        for (const std::int32_t a : f[i].after) {
            EXPECT_LT(a, static_cast<std::int32_t>(i)) << f[i].name;
        }
    }
}

TEST(MtpBlock, BackwardMirrorsTheForwardAndRecomputesUnderTheCheckpoint) {
    const workload::LayerShape x = workload::mtp_layer_shape(scenario(kTp2));
    const OpList b = workload::mtp_backward(x, MtpRecompute::None);
    const std::vector<std::string> n = names(b);
    const auto at = [&n](const std::string& name) { return std::find(n.begin(), n.end(), name) - n.begin(); };
    // Output layer first, then the layer, eh_proj (its output gradient gathered over the sequence, then
    // split back to h/t columns), the norms, the gradient added into the decoder's output, the embedding.
    EXPECT_EQ(n.front(), "mtp.loss.cross_entropy.bwd");
    EXPECT_LT(at("mtp.final_rmsnorm.bwd"), at("mtp.eh_proj.output_grad_allgather"));
    EXPECT_LT(at("mtp.eh_proj.output_grad_allgather"), at("mtp.eh_proj.output_grad_split"));
    EXPECT_LT(at("mtp.eh_proj.output_grad_split"), at("mtp.eh_proj.dgrad"));
    EXPECT_LT(at("mtp.eh_proj.wgrad"), at("mtp.enorm.rmsnorm.bwd"));
    EXPECT_LT(at("mtp.hidden_grad_accumulate"), at("mtp.embedding.dropout.bwd"));
    // The embedding's dense weight gradient last: its rows scattered, then added into main_grad.
    EXPECT_LT(at("mtp.embedding.grad_accumulate"), at("mtp.embedding.main_grad_add"));
    EXPECT_EQ(n.back(), "mtp.embedding.main_grad_add");
    for (const workload::Op& op : b) {
        EXPECT_FALSE(op.is_recompute) << op.name;
    }
    // Checkpointed: after the logits' backward the projection, the layer and the final norm run again,
    // then the final norm's backward.
    const OpList c = workload::mtp_backward(x, MtpRecompute::Checkpointed);
    const OpList layer = workload::layer_full_recompute(x, false);
    std::int64_t recomputed = 0;
    std::size_t first_recompute = c.size(), last_recompute = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
        if (c[i].is_recompute) {
            ++recomputed;
            first_recompute = std::min(first_recompute, i);
            last_recompute = i;
        }
    }
    // enorm, hnorm, concat, the eh_proj gather, GEMM, gather and concat, the layer, the final norm.
    EXPECT_EQ(recomputed, 7 + static_cast<std::int64_t>(layer.size()) + 1);
    EXPECT_EQ(c[first_recompute - 1].name, "mtp.output.logits.wgrad");
    EXPECT_EQ(c[last_recompute].name, "mtp.final_rmsnorm");
    EXPECT_EQ(c[last_recompute + 1].name, "mtp.final_rmsnorm.bwd");
}

TEST(MtpBlock, ActivationBytesByHand) {
    const workload::LayerShape x = workload::mtp_layer_shape(scenario(kTp2));
    const std::int64_t E = s * h / 2;              // s·b·h/t with SP
    const std::int64_t mask = E;                   // the embedding's dropout mask
    const std::int64_t logits = E * 2;             // the logits GEMM's input
    const std::int64_t softmax = s * (V / 2) * 4;  // the fp32 softmax of the vocab-parallel loss
    const std::int64_t layer = workload::layer_activation_bytes(x, config::RecomputeGranularity::None).value;
    // None: enorm's input (E·2), eh_proj's input [e; h] (2E·2), the layer, the final norm's input.
    EXPECT_EQ(saved(workload::mtp_forward(x, MtpRecompute::None)),
              mask + E * 2 + 2 * E * 2 + layer + E * 2 + logits + softmax);
    // Checkpointed: the checkpoint's embedding input (the hidden-state input is the main logits'), then
    // only what lies after the checkpoint.
    EXPECT_EQ(saved(workload::mtp_forward(x, MtpRecompute::Checkpointed)), mask + E * 2 + logits + softmax);
    // Selective: the layer keeps what selective recompute keeps.
    EXPECT_EQ(saved(workload::mtp_forward(x, MtpRecompute::Selective)) -
                  saved(workload::mtp_forward(x, MtpRecompute::None)),
              workload::layer_activation_bytes(x, config::RecomputeGranularity::Selective).value - layer);
}

TEST(MtpBlock, ParametersMatchModelParametersMtpTerm) {
    for (const bool moe : {false, true}) {
        SCOPED_TRACE(moe ? "moe" : "dense");
        const config::Scenario sc = scenario(kOneGpu, "", moe, 2);
        const workload::ModelParameters whole = workload::model_parameters(sc.model);
        const workload::LayerShape x = workload::mtp_layer_shape(sc);
        EXPECT_EQ(x.moe(), moe);
        // One GPU holds every weight: two depths of the model's MTP term.
        EXPECT_EQ(2 * workload::mtp_depth_parameters_per_rank(x), whole.mtp);
        const workload::StageParameters stage = workload::stage_parameters(sc, 0);
        EXPECT_EQ(stage.mtp, whole.mtp);
        // By hand: enorm, hnorm, final norm (h each), eh_proj 2h·h, the layer (GQA q, k, v, o and two norms,
        // and the gated MLP or router + 8 experts).
        const std::int64_t attention = h * h + 2 * h * (h / 8 * 4) + h * h + 2 * h;
        const std::int64_t mlp = moe ? h * 8 + 8 * 3 * h * 1024 : 3 * h * 4096;
        EXPECT_EQ(workload::mtp_depth_parameters_per_rank(x), 3 * h + 2 * h * h + attention + mlp);
        EXPECT_EQ(stage.expert, moe ? (2 + 2) * 8 * 3 * h * 1024 : 0);  // two layers and two depths
        // One stage: the embedding is the first stage's own, no copy.
        EXPECT_EQ(workload::mtp_embedding_copy_parameters(sc, 0), 0);
    }
    // TP 2: eh_proj and the layer's GEMMs split, the norms whole.
    const workload::LayerShape x2 = workload::mtp_layer_shape(scenario(kTp2));
    EXPECT_EQ(workload::mtp_depth_parameters_per_rank(x2),
              3 * h + 2 * h * h / 2 + workload::layer_parameters_per_rank(x2));
}

TEST(MtpBlock, LastStageHoldsAnEmbeddingCopyAndReducesItsGradient) {
    const std::string pp2 = R"("tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 2,
                               "data_parallel_size": 1)";
    const config::Scenario with = scenario(pp2);
    const config::Scenario without = scenario(pp2, "", false, 0);
    EXPECT_EQ(workload::stage_parameters(with, 0).total(), workload::stage_parameters(without, 0).total());
    // Untied: the last stage has its output layer and, for MTP, the word embedding (gpt_model.py).
    EXPECT_EQ(workload::stage_parameters(with, 1).embedding -
                  workload::stage_parameters(without, 1).embedding,
              V * h);
    EXPECT_FALSE(workload::holds_tied_embedding_copy(without, 1));
    EXPECT_TRUE(workload::holds_tied_embedding_copy(with, 0));
    EXPECT_TRUE(workload::holds_tied_embedding_copy(with, 1));
    const program::IterationProgram prog = program::build_iteration(with, testing::shipped_cost_model());
    const engine::RunResult run = program::simulate(prog);
    std::set<std::pair<std::int64_t, std::string>> iteration_ops;
    for (std::size_t t = 0; t < prog.info.size(); ++t) {
        const program::TaskInfo task = prog.info[t];
        if (task.priced < 0 || task.phase != program::Phase::Iteration) {
            continue;
        }
        for (const program::OpSpan& sp :
             program::op_spans(prog, engine::TaskId::from_index(t), run.timings[t])) {
            if (sp.op != nullptr && sp.op->name == "embedding.grad_allreduce") {
                EXPECT_EQ(sp.op->collective_bytes.value, V * h * 4);
                iteration_ops.insert({prog.gpus[task.gpu.index()].coordinates.pp, sp.op->name});
            }
        }
    }
    EXPECT_EQ(iteration_ops.size(), 2u);  // both stages
}

TEST(MtpBlock, TiedEmbeddingsKeepTheOutputWeightBesideTheCopy) {
    // Tied, without MTP the last stage's output weight is the embedding's copy; with MTP Megatron builds
    // the embedding there as well and still allocates the output layer's weight (gpt_model.py skips it
    // only on the first stage), so the stage holds two V·h matrices; one all-reduce either way.
    const std::string pp2 = R"("tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 2,
                               "data_parallel_size": 1)";
    auto tied = [&pp2](std::int64_t mtp) {
        config::Scenario sc = scenario(pp2, "", false, mtp);
        sc.model.untie_embeddings_and_output_weights = false;
        return sc;
    };
    EXPECT_EQ(workload::stage_parameters(tied(0), 1).embedding, V * h);
    EXPECT_EQ(workload::stage_parameters(tied(1), 1).embedding, 2 * V * h);
    EXPECT_TRUE(workload::holds_tied_embedding_copy(tied(1), 1));
}

TEST(MtpBlock, SequenceParallelNormsJoinTheTpReplicatedSum) {
    // With SP the depth's enorm, hnorm and final norm and its layer's two norms see 1/t of the tokens:
    // their gradients are summed over TP with the layers' (5h here; no biases, no qk norms).
    const config::Scenario with = scenario(kTp2);
    const config::Scenario without = scenario(kTp2, "", false, 0);
    EXPECT_EQ(workload::tp_replicated_parameters(with, 0).layers -
                  workload::tp_replicated_parameters(without, 0).layers,
              5 * h);
}

TEST(MtpBlock, ForwardFlopsMatchModelFlopsMtpTerm) {
    // model_flops' MTP term per token and depth, forward: the layer of the last layer's kind, eh_proj
    // 2·2h², the logits 2hV, and 2·3h for the three norms, which trainsim runs as memory-bound kernels
    // (no GEMM FLOPs); Megatron's formula leaves out the router's GEMM (2hE), which the op list runs.
    // MoE keeps both formulas MoE-aware.
    for (const std::string& parallel : {kOneGpu, kTp2 + R"(, "expert_tensor_parallel_size": 1)"}) {
        SCOPED_TRACE(parallel);
        const config::Scenario with = scenario(parallel, "", true, 1);
        const config::Scenario without = scenario(parallel, "", true, 0);
        const double term = (workload::model_flops_per_iteration(with).value -
                             workload::model_flops_per_iteration(without).value) /
                            3.0;
        const workload::LayerShape x = workload::mtp_layer_shape(with);
        double gemm = 0.0;
        for (const workload::Op& op : workload::mtp_forward(x, MtpRecompute::None)) {
            gemm += op.flops().value;
        }
        const double tokens = 4.0 * s;  // the global batch
        const double t = static_cast<double>(x.tp);
        const double router = 2.0 * h * 8 * tokens;
        EXPECT_NEAR(gemm * t * (tokens / static_cast<double>(s)) - router, term - 2.0 * 3.0 * h * tokens,
                    term * 1e-12);
    }
}

TEST(MtpBlock, OneGpuIterationAddsExactlyTheDepthsAndTheirOptimizerWork) {
    // One GPU, four micro-batches, nothing else to wait for: the iteration grows by four forwards and
    // backwards of the depth (priced as the program prices them) and by the end of iteration's work on
    // its extra parameters.
    const cost::CostModel cost = testing::shipped_cost_model();
    const config::Scenario with = scenario(kOneGpu);
    const config::Scenario without = scenario(kOneGpu, "", false, 0);
    const program::IterationProgram a = program::build_iteration(with, cost);
    const program::IterationProgram b = program::build_iteration(without, cost);
    const engine::RunResult ra = program::simulate(a);
    const engine::RunResult rb = program::simulate(b);
    SimTime mtp{}, end_a{}, end_b{};
    std::set<std::int32_t> microbatches;
    for (std::size_t t = 0; t < a.info.size(); ++t) {
        const SimTime d = ra.timings[t].end - ra.timings[t].start;
        if (a.info[t].layer == 2) {  // num_layers + depth 0
            mtp += d;
            microbatches.insert(a.info[t].microbatch);
        } else if (a.info[t].phase == program::Phase::Iteration) {
            end_a += d;
        }
    }
    for (std::size_t t = 0; t < b.info.size(); ++t) {
        if (b.info[t].phase == program::Phase::Iteration) {
            end_b += rb.timings[t].end - rb.timings[t].start;
        }
    }
    EXPECT_EQ(microbatches.size(), 4u);
    // The depth's priced lists, summed: what each micro-batch's forward and backward take.
    SimTime per_microbatch{};
    for (const program::PricedOps& p : a.priced) {
        if (!p.ops->empty() && p.ops->front().name.starts_with("mtp.")) {
            per_microbatch += std::accumulate(p.durations.begin(), p.durations.end(), SimTime{0});
        }
    }
    EXPECT_GT(per_microbatch, 0_ns);
    EXPECT_EQ(mtp, 4 * per_microbatch);
    EXPECT_GT(end_a, end_b);  // Adam over the depth's weights
    EXPECT_EQ(ra.makespan - rb.makespan, mtp + (end_a - end_b));
}

TEST(MtpBlock, OneGpuMemoryGrowsByTheDepthsWeightsAndOneMicroBatchOfItsActivations) {
    // One GPU, 1F1B over one stage: each micro-batch's backward follows its forward, so the peak holds one
    // micro-batch's activations, the depth's included. Weights, fp32 gradients and Adam state (2 + 4 + 12
    // bytes, no distributed optimizer) of the depth's parameters; no embedding copy on a single stage.
    const cost::CostModel cost = testing::shipped_cost_model();
    const experiment::Simulation with = experiment::simulate_scenario(scenario(kOneGpu), cost);
    const experiment::Simulation without =
        experiment::simulate_scenario(scenario(kOneGpu, "", false, 0), cost);
    const workload::LayerShape x = workload::mtp_layer_shape(scenario(kOneGpu));
    ASSERT_EQ(with.report.stages.size(), 1u);
    const report::StageReport& a = with.report.stages.front();
    const report::StageReport& b = without.report.stages.front();
    EXPECT_EQ(a.static_bytes.value - b.static_bytes.value, 18 * workload::mtp_depth_parameters_per_rank(x));
    // By hand at t = 1 (E = s·h): the embedding's mask E, enorm's input 2E, [e; h] 4E, the layer, the final
    // norm's and the logits' inputs 2E each, the fp32 softmax 4·s·V.
    const std::int64_t E = s * h;
    const std::int64_t layer = workload::layer_activation_bytes(x, config::RecomputeGranularity::None).value;
    EXPECT_EQ(a.activation_bytes.value - b.activation_bytes.value,
              E + 2 * E + 4 * E + layer + 4 * E + 4 * s * V);
}

TEST(MtpBlock, PlannerSearchesOnlyWhatMtpIsSimulatedWith) {
    // On an FP8-capable profile the planner would search FP8 and FSDP layouts, both refused with MTP: it
    // leaves them out and every candidate simulates.
    plan::PlanRequest request;
    request.base = scenario(kOneGpu);
    request.gpus = 4;
    request.global_batch = 4;
    request.max_micro_batch = 1;
    plan::PlanOptions options;
    options.profile_directory = testing::source_path("scenarios/hardware");
    const plan::PlanResult result = plan::run_plan(request, options);
    EXPECT_EQ(result.failed, 0u);
    ASSERT_FALSE(result.ranked.empty());
    for (const plan::RankedLayout& layout : result.ranked) {
        EXPECT_FALSE(layout.scenario.training.fp8_format);
        EXPECT_NE(layout.scenario.parallelism.data_parallel_sharding_strategy,
                  config::DataParallelSharding::OptimGradsParams);
    }
}

void expect_refused(const config::Scenario& sc, const std::string& message) {
    try {
        (void)workload::layer_shape_of(sc);
        ADD_FAILURE() << "no InputError for " << message;
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
}

TEST(MtpBlock, RecomputePolicyFollowsMegatronAndRefusesWhatItDoesNotModel) {
    EXPECT_EQ(workload::mtp_recompute(scenario(kOneGpu)), MtpRecompute::None);
    EXPECT_EQ(workload::mtp_recompute(scenario(kOneGpu, R"(, "recompute_granularity": "selective")")),
              MtpRecompute::Selective);
    EXPECT_EQ(workload::mtp_recompute(
                  scenario(kOneGpu, R"(, "recompute_granularity": "full", "recompute_method": "uniform")")),
              MtpRecompute::Checkpointed);
    // Megatron skips MTP recompute with the block method (it warns).
    EXPECT_EQ(workload::mtp_recompute(scenario(kOneGpu, R"(, "recompute_granularity": "full",
                  "recompute_method": "block", "recompute_num_layers": 1)")),
              MtpRecompute::None);
    expect_refused(scenario(kOneGpu, R"(, "recompute_granularity": "full", "recompute_method": "uniform",
                   "recompute_num_layers": 2)"),
                   "training.recompute_num_layers: must be 1 with recompute_method=uniform and "
                   "model.mtp_num_layers > 0");
    expect_refused(scenario(R"("tensor_model_parallel_size": 2, "sequence_parallel": true,
                   "context_parallel_size": 2, "pipeline_model_parallel_size": 1, "data_parallel_size": 1)"),
                   "parallelism.context_parallel_size: context parallelism (roll_tensor's exchange) is not "
                   "simulated yet with model.mtp_num_layers > 0");
    expect_refused(scenario(kOneGpu, R"(, "fp8_format": "hybrid")"),
                   "training.fp8_format: FP8 is not simulated yet with model.mtp_num_layers > 0");
}

}  // namespace
}  // namespace trainsim
