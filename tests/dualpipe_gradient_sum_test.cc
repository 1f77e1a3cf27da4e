// DualPipe's sum of its two model copies' gradients: rank r holds stage r of copy 0 and stage p − 1 − r
// of copy 1, rank p − 1 − r the same two stages the other way round, and the pair all-reduces its
// gradients before the gradient norm and the optimizer step (deepseek-ai/DualPipe
// examples/example_dualpipe.py). Exact times on a 4-rank case, within a node and across nodes.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sim/parallel/layout.h"
#include "sim/program/iteration_program.h"
#include "sim/program/op_pricing.h"
#include "sim/report/iteration_report.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_ops.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

constexpr const char* kSum = "dualpipe.copy_grad_allreduce";

// Four layers of 1024 on p = 4 (one layer a stage, two a rank), 8 micro-batches (m ≥ 2p).
// (The V schedules place 2p stages: 8 layers.)
config::Scenario scenario(const std::string& schedule, const std::string& hardware = "", int layers = 4) {
    return config::parse_scenario(R"({"schedule": ")" + schedule + R"(",
            "model": {"preset": "gpt-22b", "num_layers": )" +
                                      std::to_string(layers) + R"(, "seq_length": 2048, "hidden_size": 1024,
                      "num_attention_heads": 8, "ffn_hidden_size": 4096},
            "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 4,
                            "virtual_pipeline_model_parallel_size": 2},
            "training": {"micro_batch_size": 1, "global_batch_size": 8},
            "hardware": {"profile": "a100-80gb-selene")" +
                                      hardware + "}}",
                                  "dualpipe");
}

// The simulated interval of the copies' gradient sum on each pipeline rank.
std::map<std::int64_t, program::OpSpan> sums_by_rank(const program::IterationProgram& prog,
                                                     const engine::RunResult& run) {
    std::map<std::int64_t, program::OpSpan> out;
    for (std::size_t t = 0; t < prog.info.size(); ++t) {
        if (prog.info[t].priced < 0) {
            continue;
        }
        for (const program::OpSpan& s :
             program::op_spans(prog, engine::TaskId::from_index(t), run.timings[t])) {
            if (s.op != nullptr && s.op->name == kSum) {
                const std::int64_t rank = prog.gpus[prog.info[t].gpu.index()].coordinates.pp;
                EXPECT_TRUE(out.emplace(rank, s).second) << "rank " << rank << " sums twice";
            }
        }
    }
    return out;
}

// The copies' gradient sum of each pipeline rank, simulated.
std::map<std::int64_t, program::OpSpan> simulated_sums(const config::Scenario& sc,
                                                       const cost::CostModel& cost) {
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    return sums_by_rank(prog, program::simulate(prog));
}

void expect_pairs_sum(const std::string& hardware, cost::Scope scope, std::int64_t nodes,
                      int ranks_per_node) {
    const config::Scenario sc = scenario("dualpipe", hardware);
    const cost::CostModel cost = testing::shipped_cost_model();
    const std::map<std::int64_t, program::OpSpan> sums = simulated_sums(sc, cost);
    ASSERT_EQ(sums.size(), 4u);
    for (std::int64_t r = 0; r < 4; ++r) {
        SCOPED_TRACE(r);
        // Both ranks of a pair hold the same parameters: stages r and 3 − r.
        const std::int64_t parameters = workload::stage_parameters(sc, r).total();
        EXPECT_EQ(parameters, workload::stage_parameters(sc, 3 - r).total());
        // An fp32 gradient per parameter, all-reduced between the two GPUs.
        const SimTime expected = to_sim_time(cost.collective(cost::CollectiveKind::AllReduce,
                                                             Bytes{parameters * workload::kGradientBytes}, 2,
                                                             scope, static_cast<int>(nodes), ranks_per_node));
        const program::OpSpan& mine = sums.at(r);
        const program::OpSpan& partner = sums.at(3 - r);
        EXPECT_EQ(mine.end - mine.start, expected);
        // One collective of the pair: it starts when both have arrived.
        EXPECT_EQ(mine.start, partner.start);
        EXPECT_EQ(mine.end, partner.end);
    }
    // The end (0 and 3: embedding and output layer) and middle (1 and 2) pairs move different sizes.
    EXPECT_GT(sums.at(0).end - sums.at(0).start, sums.at(1).end - sums.at(1).start);
}

TEST(DualPipeGradientSum, AllReducesEachPairOverNvlinkWithinANode) {
    expect_pairs_sum("", cost::Scope::IntraNode, 1, 4);  // 4 GPUs on one 8-GPU node
}

TEST(DualPipeGradientSum, AllReducesEachPairOverTheNicsAcrossNodes) {
    // Two GPUs a node: ranks 0, 1 on node 0, ranks 2, 3 on node 1, so both pairs cross.
    expect_pairs_sum(R"(, "gpus_per_node": 2)", cost::Scope::InterNode, 2, 2);
}

// The sum is exposed on the compute stream (the norm and the step wait for it) and counted with the
// data-parallel and gradient reductions; no other schedule has it.
TEST(DualPipeGradientSum, IsInTheGradientLineAndOnlyUnderDualPipe) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const config::Scenario sc = scenario("dualpipe");
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    const engine::RunResult run = program::simulate(prog);
    const std::map<std::int64_t, program::OpSpan> sums = sums_by_rank(prog, run);
    const std::vector<report::Breakdown> parts = report::breakdowns(prog, run);
    for (std::size_t g = 0; g < prog.gpus.size(); ++g) {
        const program::OpSpan& sum = sums.at(prog.gpus[g].coordinates.pp);
        EXPECT_GE(to_sim_time(parts[g].exposed_dp_comm), sum.end - sum.start) << g;
    }
    for (const char* other : {"dualpipev", "zb-v"}) {
        EXPECT_TRUE(simulated_sums(scenario(other, "", 8), cost).empty()) << other;
    }
}

// Under the flow network model the pair's all-reduce runs on the links between its two GPUs.
// The pair is part of a GPU's placement (the key under which GPUs share priced op lists) only under
// DualPipe: otherwise ranks whose mirrors sit on different nodes would price identical lists twice.
TEST(DualPipeGradientSum, ThePairIsPartOfAPlacementOnlyUnderDualPipe) {
    const cost::CostModel cost = testing::shipped_cost_model();
    for (const char* schedule : {"dualpipe", "dualpipev", "zb-v"}) {
        SCOPED_TRACE(schedule);
        const bool dualpipe = std::string(schedule) == "dualpipe";
        const config::Scenario sc = scenario(schedule, R"(, "gpus_per_node": 2)", dualpipe ? 4 : 8);
        const parallel::Layout layout(sc);
        const program::OpPricing pricing(cost, layout, sc);
        EXPECT_EQ(pricing.placement({0, 0, 1}).stage_copies,
                  dualpipe ? (parallel::GroupSpan{2, 2}) : parallel::GroupSpan{});
    }
}

TEST(DualPipeGradientSum, RunsUnderTheFlowNetworkModel) {
    const config::Scenario sc = scenario("dualpipe", R"(, "gpus_per_node": 2, "network_model": "flow")");
    const std::map<std::int64_t, program::OpSpan> sums = simulated_sums(sc, testing::shipped_cost_model());
    ASSERT_EQ(sums.size(), 4u);
    for (std::int64_t r = 0; r < 4; ++r) {
        SCOPED_TRACE(r);
        EXPECT_EQ(sums.at(r).start, sums.at(3 - r).start);
        EXPECT_EQ(sums.at(r).end, sums.at(3 - r).end);
        // Each pair's GPUs have NICs of their own, so the flows meet no other traffic: a 2-GPU ring
        // all-reduce sends S over each NIC once (2(n-1)/n = 1) at the A100 profile's 23.5 GB/s, plus
        // NCCL's latency of a two-step ring across nodes (under 60 us). (The analytical price is slower here:
        // it applies the measured efficiency of a message of this size, which the flow model's NCCL rates do
        // not.)
        const double bytes =
            static_cast<double>(workload::stage_parameters(sc, r).total() * workload::kGradientBytes);
        const double expected = static_cast<double>(to_sim_time(Seconds{bytes / 23.5e9}).ns());
        const double length = static_cast<double>((sums.at(r).end - sums.at(r).start).ns());
        EXPECT_GE(length, expected);
        EXPECT_LT(length, expected + static_cast<double>(to_sim_time(Seconds{60e-6}).ns()));
    }
}

}  // namespace
}  // namespace trainsim
