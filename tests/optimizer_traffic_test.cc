// The optimizer step's memory traffic beyond the fused Adam estimate (issue 19), each knob off by
// default: the fp32 → 16-bit parameter copy as a pass of its own (training.optimizer_param_copy) and the
// gradient buffer's memset at the start of the iteration (training.zero_grad_buffer). Exact on one GPU,
// where nothing overlaps them: the iteration grows by exactly the passes' prices.
#include <gtest/gtest.h>

#include <vector>

#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"
#include "sim/report/iteration_report.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_ops.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using config::Override;
using cost::MemoryBoundKind;

const cost::CostModel& cost_model() {
    static const cost::CostModel cost = testing::shipped_cost_model();
    return cost;
}

struct Simulated {
    SimTime makespan{};
    report::IterationReport report;
};

Simulated simulate(const config::Scenario& sc) {
    const program::IterationProgram prog = program::build_iteration(sc, cost_model(), {});
    const engine::RunResult run = program::simulate(prog);
    return {run.makespan, report::make_iteration_report(sc, cost_model(), prog, run)};
}

config::Scenario one_gpu(std::vector<Override> extra = {}) {
    return testing::one_gpu_175b_layers(std::move(extra));
}

SimTime price(std::int64_t bytes, MemoryBoundKind kind) {
    return to_sim_time(cost_model().memory_bound(Bytes{bytes}, kind));
}

TEST(OptimizerTraffic, ParamCopyIsAPassOfSixBytesAParameterAndAdamLosesItsTwoByteWrite) {
    const config::Scenario off = one_gpu();
    const config::Scenario on = one_gpu({{"training.optimizer_param_copy", "true"}});
    const std::int64_t n = workload::stage_parameters(off, 0).total();
    const Simulated a = simulate(off);
    const Simulated b = simulate(on);
    const SimTime copy = price(n * 6, MemoryBoundKind::Generic);
    const SimTime added =
        copy + price(n * 32, MemoryBoundKind::Optimizer) - price(n * 34, MemoryBoundKind::Optimizer);
    EXPECT_GT(added, 0_ns);
    EXPECT_EQ(b.makespan - a.makespan, added);
    EXPECT_NEAR(b.report.breakdown.param_copy.value, to_seconds(copy).value, 1e-12);
    EXPECT_EQ(a.report.breakdown.param_copy.value, 0.0);
    EXPECT_NEAR(b.report.breakdown.total().value, b.report.iteration_time.value, 1e-9);
}

TEST(OptimizerTraffic, ZeroingTheGradientBufferWritesFourBytesAParameterAtTheStart) {
    const config::Scenario off = one_gpu();
    const config::Scenario on = one_gpu({{"training.zero_grad_buffer", "true"}});
    const std::int64_t n = workload::stage_parameters(off, 0).total();
    const Simulated a = simulate(off);
    const Simulated b = simulate(on);
    const SimTime memset = price(n * workload::kGradientBytes, MemoryBoundKind::Generic);
    EXPECT_GT(memset, 0_ns);
    EXPECT_EQ(b.makespan - a.makespan, memset);
    EXPECT_NEAR(b.report.breakdown.grad_zeroing.value, to_seconds(memset).value, 1e-12);
    EXPECT_EQ(a.report.breakdown.grad_zeroing.value, 0.0);
    // The optimizer line keeps only the Adam step.
    EXPECT_NEAR(b.report.breakdown.optimizer.value, a.report.breakdown.optimizer.value, 1e-12);
}

TEST(OptimizerTraffic, TheDistributedOptimizerCopiesOnlyItsShard) {
    const std::vector<Override> dp = {{"parallelism.data_parallel_size", "4"},
                                      {"training.global_batch_size", "8"},
                                      {"training.use_distributed_optimizer", "true"}};
    std::vector<Override> with_copy = dp;
    with_copy.push_back({"training.optimizer_param_copy", "true"});
    const config::Scenario on = one_gpu(with_copy);
    const std::int64_t owned = workload::stage_parameters(on, 0).total() / 4;
    const Simulated b = simulate(on);
    EXPECT_NEAR(b.report.breakdown.param_copy.value,
                to_seconds(price(owned * 6, MemoryBoundKind::Generic)).value, 1e-12);
}

}  // namespace
}  // namespace trainsim
