// Per-launch kernel jitter (variability.kernel_jitter, issue 19): seeded factors with the profile's
// spread, exact on one GPU (the iteration grows by exactly the jitter its kernels drew), equal to the
// run without it at zero spread, and never cheaper than no jitter when stages wait on each other.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sim/core/input_error.h"
#include "sim/engine/simulator.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/program/iteration_program.h"
#include "sim/program/variability.h"
#include "sim/report/iteration_report.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using config::Override;

const cost::CostModel& cost_model() {
    static const cost::CostModel cost = testing::shipped_cost_model();
    return cost;
}

// The shipped profile with another kernel-jitter spread.
cost::CostModel with_jitter_stddev(double stddev) {
    cost::HardwareProfile p = cost_model().profile();
    p.variability->kernel_jitter_stddev = stddev;
    return cost::CostModel(std::move(p));
}

struct Simulated {
    program::IterationProgram prog;
    engine::RunResult run;
    report::IterationReport report;
};

Simulated simulate(const config::Scenario& sc, const cost::CostModel& cost, const program::Fold& fold) {
    program::IterationProgram prog = program::build_iteration(sc, cost, fold);
    engine::RunResult run = program::simulate(prog);
    report::IterationReport rep = report::make_iteration_report(sc, cost, prog, run);
    return {std::move(prog), std::move(run), std::move(rep)};
}

constexpr program::Fold kNoFold{false, false};

// Two 175B-sized layers on one GPU, variability sampled.
config::Scenario one_gpu(std::vector<Override> extra = {}) {
    extra.insert(extra.begin(), {"variability.mode", "sampled"});
    return testing::one_gpu_175b_layers(std::move(extra));
}

// Eight 175B-sized layers on a 4-stage 1F1B pipeline (TP 2, DP 2), eight micro-batches per pipeline.
config::Scenario pipeline(std::vector<Override> extra = {}) {
    std::vector<Override> o = {{"model.num_layers", "8"},
                               {"parallelism.tensor_model_parallel_size", "2"},
                               {"parallelism.pipeline_model_parallel_size", "4"},
                               {"parallelism.virtual_pipeline_model_parallel_size", "1"},
                               {"parallelism.data_parallel_size", "2"},
                               {"training.global_batch_size", "16"},
                               {"hardware.gpus_per_node", "4"},
                               {"variability.mode", "sampled"}};
    o.insert(o.end(), extra.begin(), extra.end());
    return testing::shipped_scenario("korthikanti-175b", o);
}

TEST(KernelJitter, FactorsAreSeededWithMeanOneAndTheProfilesSpread) {
    EXPECT_EQ(program::kernel_jitter_factor(0.011, 7, 3, 5, 2),
              program::kernel_jitter_factor(0.011, 7, 3, 5, 2));
    EXPECT_NE(program::kernel_jitter_factor(0.011, 7, 3, 5, 2),
              program::kernel_jitter_factor(0.011, 8, 3, 5, 2));
    EXPECT_NE(program::kernel_jitter_factor(0.011, 7, 3, 5, 2),
              program::kernel_jitter_factor(0.011, 7, 3, 2, 5));
    EXPECT_EQ(program::kernel_jitter_factor(0.0, 7, 3, 5, 2), 1.0);
    // 200,000 launches: the sample mean is within 4 standard errors (4·0.011/√n = 1e-4) of 1 and the
    // sample standard deviation within 1 % of 0.011.
    const int n = 200000;
    double sum = 0.0, sum_sq = 0.0;
    for (int i = 0; i < n; ++i) {
        const double f = program::kernel_jitter_factor(0.011, 1, i % 64, i / 64 % 50, i / 3200);
        sum += f;
        sum_sq += f * f;
    }
    const double mean = sum / n;
    EXPECT_NEAR(mean, 1.0, 1e-4);
    EXPECT_NEAR(std::sqrt(sum_sq / n - mean * mean), 0.011, 0.011 * 0.01);
}

TEST(KernelJitter, TheShippedProfileGivesTheMeasuredSpread) {
    ASSERT_TRUE(cost_model().profile().variability->kernel_jitter_stddev);
    EXPECT_EQ(*cost_model().profile().variability->kernel_jitter_stddev, 0.011);
}

TEST(KernelJitter, EachLaunchTakesItsOwnFactorOnItsPrice) {
    const Simulated r = simulate(one_gpu({{"variability.kernel_jitter", "true"}, {"variability.seed", "4"}}),
                                 cost_model(), kNoFold);
    const double sigma = *cost_model().profile().variability->kernel_jitter_stddev;
    // The first list GPU 0 lowered: its jittered copy follows the shared price of the same list.
    const program::TaskInfo first_task = r.prog.info[0];
    ASSERT_GE(first_task.priced, 1);
    const program::PricedOps& jittered = r.prog.priced[static_cast<std::size_t>(first_task.priced)];
    const program::PricedOps* base = nullptr;
    for (const program::PricedOps& p : r.prog.priced) {
        if (p.ops == jittered.ops) {
            base = &p;
            break;
        }
    }
    ASSERT_NE(base, &jittered);
    const std::int64_t rank = 0;
    int checked = 0;
    for (std::size_t i = 0; i < jittered.ops->size(); ++i) {
        if ((*jittered.ops)[i].kind == workload::OpKind::Collective) {
            continue;
        }
        const double f = program::kernel_jitter_factor(sigma, 4, rank, 0, static_cast<std::int64_t>(i));
        EXPECT_EQ(jittered.durations[i],
                  SimTime{std::llround(static_cast<double>(base->durations[i].ns()) * f)})
            << i;
        ++checked;
    }
    EXPECT_GT(checked, 0);
}

TEST(KernelJitter, OnOneGpuTheIterationGrowsByExactlyTheJitterItsKernelsDrew) {
    const Simulated off = simulate(one_gpu({{"variability.seed", "9"}}), cost_model(), kNoFold);
    const Simulated on = simulate(one_gpu({{"variability.seed", "9"}, {"variability.kernel_jitter", "true"}}),
                                  cost_model(), kNoFold);
    ASSERT_EQ(on.prog.gpus.size(), 1u);
    const SimTime drawn = on.prog.gpus[0].kernel_jitter;
    EXPECT_NE(drawn, 0_ns);
    EXPECT_EQ(on.run.makespan - off.run.makespan, drawn);
    // The breakdown moves exactly that out of the kernel time, and its parts still add up.
    EXPECT_NEAR(on.report.breakdown.kernel_jitter.value, to_seconds(drawn).value, 1e-12);
    EXPECT_NEAR(on.report.breakdown.busy().value, off.report.breakdown.busy().value + to_seconds(drawn).value,
                1e-9);
    EXPECT_EQ(off.report.breakdown.kernel_jitter.value, 0.0);
}

TEST(KernelJitter, ZeroSpreadIsExactlyTheRunWithoutIt) {
    const cost::CostModel zero = with_jitter_stddev(0.0);
    const config::Scenario off = pipeline({{"variability.seed", "2"}});
    const config::Scenario on = pipeline({{"variability.seed", "2"}, {"variability.kernel_jitter", "true"}});
    const Simulated a = simulate(off, zero, kNoFold);
    const Simulated b = simulate(on, zero, kNoFold);
    EXPECT_EQ(a.run.makespan, b.run.makespan);
    EXPECT_EQ(a.report.fingerprint, b.report.fingerprint);
    EXPECT_EQ(b.report.breakdown.kernel_jitter.value, 0.0);
}

TEST(KernelJitter, SameSeedSameRunOtherSeedOtherRun) {
    const Simulated a1 = simulate(
        pipeline({{"variability.seed", "11"}, {"variability.kernel_jitter", "true"}}), cost_model(), kNoFold);
    const Simulated a2 = simulate(
        pipeline({{"variability.seed", "11"}, {"variability.kernel_jitter", "true"}}), cost_model(), kNoFold);
    const Simulated b = simulate(
        pipeline({{"variability.seed", "12"}, {"variability.kernel_jitter", "true"}}), cost_model(), kNoFold);
    EXPECT_EQ(a1.report.fingerprint, a2.report.fingerprint);
    EXPECT_EQ(a1.run.makespan, a2.run.makespan);
    EXPECT_NE(a1.report.fingerprint, b.report.fingerprint);
}

// A synchronous pipeline's iteration is a maximum over paths of sums of kernel times: mean-one jitter
// leaves each sum's expectation where it was, and the expected maximum of the jittered sums is at least
// the deterministic maximum (Jensen). With 16 GPUs whose stages tie on many paths, each of these seeds
// (a fixed, reproducible set) lands above it.
TEST(KernelJitter, ASynchronousPipelineNeverGetsFasterWithJitter) {
    // A larger spread than the profile's so that the effect stands well above the engine's rounding.
    const cost::CostModel wide = with_jitter_stddev(0.05);
    for (const char* seed : {"1", "2", "3", "4", "5"}) {
        const Simulated off = simulate(pipeline({{"variability.seed", seed}}), wide, kNoFold);
        const Simulated on = simulate(
            pipeline({{"variability.seed", seed}, {"variability.kernel_jitter", "true"}}), wide, kNoFold);
        EXPECT_GT(on.run.makespan, off.run.makespan) << "seed " << seed;
        // The GPUs' own kernel time moved by much less than the iteration did: the cost is the waits.
        double mean_drawn = 0.0;
        for (const program::SimulatedGpu& g : on.prog.gpus) {
            mean_drawn += to_seconds(g.kernel_jitter).value / static_cast<double>(on.prog.gpus.size());
        }
        EXPECT_LT(std::fabs(mean_drawn), to_seconds(on.run.makespan - off.run.makespan).value)
            << "seed " << seed;
    }
}

TEST(KernelJitter, TheReportStatesWhatThisSeedsJitterCost) {
    const config::Scenario sc = pipeline({{"variability.seed", "3"}, {"variability.kernel_jitter", "true"}});
    experiment::SimulationOptions options;
    options.fold = kNoFold;
    const experiment::Simulation with = experiment::simulate_scenario(sc, cost_model(), options);
    const experiment::Simulation without =
        experiment::simulate_scenario(pipeline({{"variability.seed", "3"}}), cost_model(), options);
    ASSERT_TRUE(with.report.kernel_jitter_cost);
    EXPECT_FALSE(without.report.kernel_jitter_cost);
    EXPECT_DOUBLE_EQ(with.report.kernel_jitter_cost->value,
                     with.report.iteration_time.value - without.report.iteration_time.value);
}

TEST(KernelJitter, NeedsSampledModeAndTheProfilesSpread) {
    try {
        (void)pipeline({{"variability.mode", "expected"}, {"variability.kernel_jitter", "true"}});
        FAIL() << "expected mode with kernel jitter was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(
                      "variability.kernel_jitter=true requires variability.mode=\"sampled\""),
                  std::string::npos)
            << e.what();
    }
    cost::HardwareProfile p = cost_model().profile();
    p.variability->kernel_jitter_stddev.reset();
    const cost::CostModel none(std::move(p));
    try {
        (void)program::build_iteration(pipeline({{"variability.kernel_jitter", "true"}}), none, kNoFold);
        FAIL() << "a profile without kernel_jitter_stddev was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("needs variability.kernel_jitter_stddev in profile"),
                  std::string::npos)
            << e.what();
    }
}

TEST(KernelJitter, FoldedRunsSayTheyMissThePeersWaits) {
    const Simulated r = simulate(pipeline({{"variability.kernel_jitter", "true"}}), cost_model(), {});
    bool warned = false;
    for (const std::string& w : r.report.warnings) {
        warned = warned || w.find("variability.kernel_jitter: a folded GPU") != std::string::npos;
    }
    EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace trainsim
