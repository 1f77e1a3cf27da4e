// A GPU's compute as an engine resource (sim/engine/gpu_compute.h, hardware.compute_contention=engine):
// compute tasks progress at the rate the running communication of their GPU leaves them, repriced when
// it starts or ends. Exact times on hand-checkable programs, then through the lowering (a collective of
// one op list slowing the compute of the next, which price() cannot see) and end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "sim/engine/fingerprint.h"
#include "sim/engine/gpu_compute.h"
#include "sim/engine/simulator.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/program/op_lowering.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using engine::Program;
using engine::RendezvousId;
using engine::RunResult;
using engine::StreamId;
using engine::TaskId;

constexpr SimTime kUs{1000};

// GPU `gpu`'s communication stream: idle for `start`, then a one-member collective of `duration` that
// leaves compute `rate` of the GPU while it runs.
TaskId collective_at(Program& p, std::int32_t gpu, SimTime start, SimTime duration, double rate) {
    const StreamId comm = p.add_stream(engine::GpuId{gpu}, "comm" + std::to_string(p.streams().size()));
    const StreamId lead = p.add_stream(engine::GpuId{gpu}, "lead" + std::to_string(p.streams().size()));
    const TaskId wait = p.add_task(lead, start, "wait");
    const RendezvousId r = p.add_rendezvous(1, duration, "collective");
    p.set_compute_share(r, rate);
    const std::vector<TaskId> after{wait};
    return p.add_rendezvous_task(comm, r, "collective", after);
}

StreamId compute_stream(Program& p, std::int32_t gpu) {
    const StreamId s = p.add_stream(engine::GpuId{gpu}, "compute");
    p.set_compute_stream(s);
    return s;
}

TEST(GpuCompute, ComputeAloneTakesItsDuration) {
    Program p;
    const TaskId k = p.add_task(compute_stream(p, 0), 10 * kUs, "kernel");
    (void)collective_at(p, 1, SimTime{}, 4 * kUs, 0.5);  // shares held, but on another GPU
    const RunResult run = engine::simulate(p);
    EXPECT_EQ(run.timings[k.index()].start, 0_ns);
    EXPECT_EQ(run.timings[k.index()].end, 10 * kUs);
}

TEST(GpuCompute, ACollectiveBesideTheKernelSlowsItByItsShare) {
    // 10 µs of compute; a 4 µs collective from t = 2 µs at share 0.5: 2 µs at rate 1, 4 µs at 0.5 (2 µs of
    // work), the last 6 µs at rate 1: 10 + 4 · (1 − 0.5) = 12 µs.
    Program p;
    const TaskId k = p.add_task(compute_stream(p, 0), 10 * kUs, "kernel");
    const TaskId c = collective_at(p, 0, 2 * kUs, 4 * kUs, 0.5);
    const RunResult run = engine::simulate(p);
    EXPECT_EQ(run.timings[c.index()].start, 2 * kUs);
    EXPECT_EQ(run.timings[c.index()].end, 6 * kUs);  // the collective keeps its own time
    EXPECT_EQ(run.timings[k.index()].end, 12 * kUs);
}

TEST(GpuCompute, ACollectiveOnAnotherGpuDoesNotSlowIt) {
    Program p;
    const TaskId k = p.add_task(compute_stream(p, 0), 10 * kUs, "kernel");
    (void)collective_at(p, 1, 2 * kUs, 4 * kUs, 0.5);
    const TaskId other = p.add_task(compute_stream(p, 1), 10 * kUs, "kernel on gpu 1");
    const RunResult run = engine::simulate(p);
    EXPECT_EQ(run.timings[k.index()].end, 10 * kUs);
    EXPECT_EQ(run.timings[other.index()].end, 12 * kUs);
}

TEST(GpuCompute, OverlappingCollectivesLeaveTheLowestRateNotTheProduct) {
    // Shares 0.5 over [2, 6) µs and 0.8 over [4, 8) µs: rate 1 to 2 µs (2 µs of work), 0.5 to 6 µs (2),
    // 0.8 to 8 µs (1.6), then 4.4 µs at rate 1: ends at 12.4 µs.
    Program p;
    const TaskId k = p.add_task(compute_stream(p, 0), 10 * kUs, "kernel");
    (void)collective_at(p, 0, 2 * kUs, 4 * kUs, 0.5);
    (void)collective_at(p, 0, 4 * kUs, 4 * kUs, 0.8);
    const RunResult run = engine::simulate(p);
    EXPECT_EQ(run.timings[k.index()].end, 12400_ns);
}

TEST(GpuCompute, SegmentsAfterTheFirstStartAtTheRateOfTheirTime) {
    // Two kernels back to back (4 then 6 µs) beside a collective over [2, 6) µs at 0.5: the first does 2 µs
    // of work by 2 µs and the other 2 by 6 µs; the second starts at 6 µs at rate 1 and ends at 12 µs.
    Program p;
    const StreamId s = compute_stream(p, 0);
    const TaskId a = p.add_task(s, 4 * kUs, "a");
    const TaskId b = p.add_task(s, 6 * kUs, "b");
    (void)collective_at(p, 0, 2 * kUs, 4 * kUs, 0.5);
    const RunResult run = engine::simulate(p);
    EXPECT_EQ(run.timings[a.index()].end, 6 * kUs);
    EXPECT_EQ(run.timings[b.index()].start, 6 * kUs);
    EXPECT_EQ(run.timings[b.index()].end, 12 * kUs);
}

TEST(GpuCompute, AHostWaitOnTheComputeStreamHoldsNoCompute) {
    // The CPU catching up (a host task) runs its 10 µs whatever the collective holds; the kernel after it
    // starts when the collective has ended and runs alone.
    Program p;
    const StreamId s = compute_stream(p, 0);
    const TaskId host = p.add_task(s, 10 * kUs, "host");
    p.set_outside_compute(host);
    const TaskId k = p.add_task(s, 5 * kUs, "kernel");
    (void)collective_at(p, 0, 2 * kUs, 4 * kUs, 0.5);
    const RunResult run = engine::simulate(p);
    EXPECT_EQ(run.timings[host.index()].end, 10 * kUs);
    EXPECT_EQ(run.timings[k.index()].end, 15 * kUs);
}

TEST(GpuCompute, OverlappedRecomputationIsSlowedAndPreemptedAlike) {
    // compute: A (10 ns), then B waits for the collective C (10..40 ns, share 0.5). R (10 ns) on the
    // background stream runs in that window at half speed: 10..30 ns.
    Program p;
    const StreamId compute = compute_stream(p, 0);
    const StreamId comm = p.add_stream(engine::GpuId{0}, "comm");
    const StreamId recompute = p.add_background_stream(compute, "recompute");
    p.set_compute_stream(recompute);
    const TaskId a = p.add_task(compute, 10_ns, "A");
    const RendezvousId r = p.add_rendezvous(1, 30_ns, "C");
    p.set_compute_share(r, 0.5);
    const TaskId c = p.add_rendezvous_task(comm, r, "C", std::vector<TaskId>{a});
    const TaskId rc = p.add_task(recompute, 10_ns, "R");
    const TaskId b = p.add_task(compute, 10_ns, "B", std::vector<TaskId>{c});
    const RunResult run = engine::simulate(p);
    EXPECT_EQ(run.timings[rc.index()].start, 10_ns);
    EXPECT_EQ(run.timings[rc.index()].end, 30_ns);
    EXPECT_EQ(run.timings[b.index()].start, 40_ns);
    EXPECT_EQ(run.makespan, 50_ns);
}

TEST(GpuCompute, ASharingPolicyIsPluggable) {
    // A policy that compounds the shares: 0.5 · 0.8 over [4, 6) µs. Work: 2 (to 2 µs) + 1 (to 4 µs, at 0.5)
    // + 0.8 (to 6 µs, at 0.4) + 1.6 (to 8 µs, at 0.8) = 5.4 µs; 4.6 µs more at rate 1: ends at 12.6 µs.
    struct Compounding final : engine::ComputeSharing {
        double rate(std::span<const double> held) const override {
            double r = 1.0;
            for (const double h : held) {
                r *= h;
            }
            return r;
        }
    } compounding;
    Program p;
    const TaskId k = p.add_task(compute_stream(p, 0), 10 * kUs, "kernel");
    (void)collective_at(p, 0, 2 * kUs, 4 * kUs, 0.5);
    (void)collective_at(p, 0, 4 * kUs, 4 * kUs, 0.8);
    engine::RunOptions options;
    options.compute_sharing = &compounding;
    EXPECT_EQ(engine::simulate(p, options).timings[k.index()].end, 12600_ns);
}

TEST(GpuCompute, SharesOutsideZeroToOneAreRejected) {
    Program p;
    (void)p.add_stream(engine::GpuId{0}, "comm");
    const RendezvousId r = p.add_rendezvous(1, 10_ns, "C");
    EXPECT_THROW(p.set_compute_share(r, 0.0), std::invalid_argument);
    EXPECT_THROW(p.set_compute_share(r, 1.5), std::invalid_argument);
    EXPECT_THROW(p.set_compute_share(RendezvousId{r.value() + 1}, 0.5), std::invalid_argument);
    EXPECT_FALSE(p.has_compute_shares());
}

// Through the lowering: list A is a GEMM and an asynchronous 256 MiB all-reduce over 8 GPUs of a node
// after it; list B, lowered next, is one GEMM. price() sees collectives within one list only.
struct TwoLists {
    SimTime gemm{};         // one GEMM alone
    SimTime allreduce{};    // the all-reduce alone
    double rate = 1.0;      // compute beside the all-reduce (engine)
    engine::TaskTiming second;
    program::SimulatedGpu gpu;
};

TwoLists lower_two_lists(const std::string& compute_contention) {
    const config::Scenario sc = testing::shipped_scenario(
        "korthikanti-175b", {{"parallelism.tensor_model_parallel_size", "8"},
                             {"parallelism.pipeline_model_parallel_size", "1"},
                             {"parallelism.virtual_pipeline_model_parallel_size", "1"},
                             {"parallelism.data_parallel_size", "1"},
                             {"hardware.compute_contention", compute_contention}});
    const cost::CostModel cost = testing::shipped_cost_model();
    const parallel::Layout layout(sc);
    const program::OpPricing pricing(cost, layout, sc);
    workload::OpList a(2);
    a[0].name = "gemm";
    a[0].gemm = {4096, 4096, 4096, 1};
    a[1].name = "allreduce";
    a[1].kind = workload::OpKind::Collective;
    a[1].stream = workload::OpStream::TensorComm;
    a[1].collective = cost::CollectiveKind::AllReduce;
    a[1].collective_bytes = Bytes{256 << 20};
    a[1].group = workload::CommGroup::Tensor;
    workload::OpList b(1);
    b[0].name = "gemm.next";
    b[0].gemm = {4096, 4096, 4096, 1};
    program::IterationProgram out;
    out.gpus.emplace_back();
    program::RendezvousTable rendezvous;
    program::OpLowering lowering(out, pricing, rendezvous, program::GroupMembers{}, engine::GpuId{0},
                                 {0, 0, 0});
    lowering.lower(a, program::StepContext{});
    lowering.lower(b, program::StepContext{});
    const RunResult run = engine::simulate(out.program);
    TwoLists r;
    r.gemm = to_sim_time(pricing.duration(a[0], {0, 0, 0}));
    r.allreduce = to_sim_time(pricing.duration(a[1], {0, 0, 0}));
    r.rate = pricing.compute_rate_beside(a[1], {0, 0, 0}, r.allreduce);
    r.second = run.timings.back();  // B's GEMM, the last task added
    r.gpu = out.gpus.at(0);
    return r;
}

TEST(GpuCompute, ACollectiveOfOneListSlowsTheComputeOfTheNext) {
    const TwoLists priced = lower_two_lists("priced");
    ASSERT_LT(priced.gemm, priced.allreduce);  // B's GEMM runs wholly beside the all-reduce
    // Priced: B's GEMM runs as if alone, and nothing is charged.
    EXPECT_EQ(priced.second.start, priced.gemm);
    EXPECT_EQ(priced.second.end, 2 * priced.gemm);
    EXPECT_EQ(priced.gpu.contention_compute, 0_ns);
    // Engine: at the profile's intra-node share (0.15 of the GPU taken: rate 0.85), for all of its time.
    const TwoLists engine = lower_two_lists("engine");
    EXPECT_DOUBLE_EQ(engine.rate, 0.85);
    EXPECT_EQ(engine.second.start, engine.gemm);
    EXPECT_EQ(engine.second.end, engine.gemm + static_cast<SimTime>(std::llround(
                                                   static_cast<double>(engine.gemm.ns()) / engine.rate)));
    EXPECT_EQ(engine.gpu.contention_compute, 0_ns);  // the engine's to measure, not priced in
}

TEST(GpuCompute, PricedIsTheDefaultAndChangesNothing) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const auto run = [&](std::vector<config::Override> o) {
        return experiment::simulate_scenario(testing::shipped_scenario("korthikanti-22b", o), cost).report;
    };
    const report::IterationReport absent = run({});
    const report::IterationReport priced = run({{"hardware.compute_contention", "priced"}});
    const report::IterationReport engine = run({{"hardware.compute_contention", "engine"}});
    EXPECT_EQ(absent.fingerprint, priced.fingerprint);
    EXPECT_NE(engine.fingerprint, priced.fingerprint);
    // The breakdown's contention line comes from the engine, and the breakdown still adds up.
    EXPECT_GT(engine.breakdown.overlap_contention.value, 0.0);
    EXPECT_NEAR(engine.breakdown.total().value, engine.iteration_time.value,
                1e-9 * engine.iteration_time.value);
}

TEST(GpuCompute, DataParallelReductionBesideTheBackwardIsChargedByTheEngineOnly) {
    // 175B's two layers, data-parallel over the 8 GPUs of a node with overlapped gradient reduction: the
    // buckets' all-reduces run beside the rest of the backward, lowered from other op lists than theirs,
    // so price() charges nothing for them and the engine does.
    const cost::CostModel cost = testing::shipped_cost_model();
    const auto run = [&](const std::string& mode) {
        return experiment::simulate_scenario(
                   testing::one_gpu_175b_layers({{"parallelism.data_parallel_size", "8"},
                                                 {"training.global_batch_size", "16"},
                                                 {"training.overlap_grad_reduce", "true"},
                                                 {"hardware.compute_contention", mode}}),
                   cost)
            .report;
    };
    const report::IterationReport priced = run("priced");
    const report::IterationReport engine = run("engine");
    EXPECT_EQ(priced.breakdown.overlap_contention.value, 0.0);
    EXPECT_GT(engine.breakdown.overlap_contention.value, 0.0);
    EXPECT_GT(engine.iteration_time.value, priced.iteration_time.value);
    EXPECT_NEAR(engine.breakdown.total().value, engine.iteration_time.value,
                1e-9 * engine.iteration_time.value);
}

TEST(GpuCompute, AnUnknownValueIsOneLineAndExitTwo) {
    const testing::CommandResult r =
        testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-22b.json") +
                              " --set hardware.compute_contention=simulated");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("hardware.compute_contention"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("\"priced\", \"engine\""), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace
}  // namespace trainsim
