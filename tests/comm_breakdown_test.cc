// The time breakdown's lines for context- and expert-parallel communication: what a compute stream waits
// for on those groups is charged to them, not to tensor parallelism, and only their runs print them.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "sim/config/scenario_reader.h"
#include "sim/program/iteration_program.h"
#include "sim/report/iteration_report.h"
#include "sim/report/report_text.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

report::IterationReport simulate(const config::Scenario& sc, const cost::CostModel& cost) {
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    return report::make_iteration_report(sc, cost, prog, program::simulate(prog));
}

std::string text_of(const report::IterationReport& r) {
    std::ostringstream out;
    report::write_text(out, r);
    return out.str();
}

// Every part of one stage's breakdown adds up to the iteration time.
void expect_parts_add_up(const report::IterationReport& r) {
    for (const report::StageReport& s : r.stages) {
        EXPECT_NEAR(s.time.total().value, r.iteration_time.value, 1e-9 * r.iteration_time.value) << s.stage;
    }
}

// Ring attention over 16 ranks on two nodes with 1k-token steps: the KV hops across InfiniBand are
// slower than the steps, so the compute stream waits for them. t = 1: no tensor-parallel collective.
TEST(CommBreakdown, ContextParallelExchangesHaveTheirOwnLine) {
    const config::Scenario sc = config::parse_scenario(
        R"({"model": {"preset": "llama3-8b", "num_layers": 2, "seq_length": 16384},
            "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1,
                            "context_parallel_size": 16},
            "training": {"micro_batch_size": 1, "global_batch_size": 2, "attention_backend": "flash"},
            "hardware": {"profile": "a100-80gb-selene"}})",
        "test");
    const report::IterationReport r = simulate(sc, testing::shipped_cost_model());
    EXPECT_GT(r.breakdown.exposed_cp_comm.value, 0.0);
    EXPECT_EQ(r.breakdown.exposed_tp_comm.value, 0.0);
    EXPECT_EQ(r.breakdown.exposed_ep_comm.value, 0.0);
    expect_parts_add_up(r);
    const std::string text = text_of(r);
    EXPECT_NE(text.find("exposed CP comm"), std::string::npos);
    EXPECT_EQ(text.find("exposed EP comm"), std::string::npos);
}

// Mixtral 8x7B with EP 8: the dispatch and combine all-to-alls block the expert GEMMs.
TEST(CommBreakdown, ExpertDispatchAndCombineHaveTheirOwnLine) {
    const config::Scenario sc = testing::shipped_scenario("moe/mixtral-8x7b-64gpu");
    const cost::CostModel cost(
        cost::load_hardware_profile("h100-80gb-dgx", testing::source_path("scenarios/hardware")));
    const report::IterationReport r = simulate(sc, cost);
    EXPECT_GT(r.breakdown.exposed_ep_comm.value, 0.0);
    EXPECT_EQ(r.breakdown.exposed_cp_comm.value, 0.0);
    expect_parts_add_up(r);
    const std::string text = text_of(r);
    EXPECT_NE(text.find("exposed EP comm"), std::string::npos);
    EXPECT_EQ(text.find("exposed CP comm"), std::string::npos);
}

// A dense run without CP keeps the report it always printed.
TEST(CommBreakdown, DenseRunsPrintNeitherLine) {
    const report::IterationReport r =
        simulate(testing::shipped_scenario("korthikanti-22b"), testing::shipped_cost_model());
    EXPECT_EQ(r.breakdown.exposed_cp_comm.value, 0.0);
    EXPECT_EQ(r.breakdown.exposed_ep_comm.value, 0.0);
    const std::string text = text_of(r);
    EXPECT_EQ(text.find("exposed CP comm"), std::string::npos);
    EXPECT_EQ(text.find("exposed EP comm"), std::string::npos);
}

}  // namespace
}  // namespace trainsim
