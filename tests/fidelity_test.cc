// Issue 19's mechanisms, each on a hand-checkable case: Megatron's pipeline transfers (the compute waits
// for the sends), the host-bound idle after a synchronize, and per-GPU variability (the expected
// maximum of n draws, seeded draws, and a folded GPU running at its slowest member's speed).
#include <gtest/gtest.h>

#include <vector>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "sim/core/input_error.h"
#include "sim/engine/simulator.h"
#include "sim/parallel/layout.h"
#include "sim/program/host_overhead.h"
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

report::IterationReport simulate(const config::Scenario& sc, const program::Fold& fold = {}) {
    const program::IterationProgram prog = program::build_iteration(sc, cost_model(), fold);
    return report::make_iteration_report(sc, cost_model(), prog, program::simulate(prog));
}

// Four 175B-sized layers on a 2-stage 1F1B pipeline, TP 2, DP 2, four micro-batches per pipeline.
config::Scenario pipeline(std::vector<Override> extra = {}) {
    std::vector<Override> o = {{"model.num_layers", "4"},
                               {"parallelism.tensor_model_parallel_size", "2"},
                               {"parallelism.pipeline_model_parallel_size", "2"},
                               {"parallelism.virtual_pipeline_model_parallel_size", "1"},
                               {"parallelism.data_parallel_size", "2"},
                               {"training.global_batch_size", "8"},
                               {"hardware.gpus_per_node", "4"}};
    o.insert(o.end(), extra.begin(), extra.end());
    return testing::shipped_scenario("korthikanti-175b", o);
}

constexpr double kUs = 1e-6;

// The tasks of GPU 0's forward pipeline-send stream, in program order.
std::vector<std::size_t> forward_sends_of_gpu0(const program::IterationProgram& prog) {
    std::vector<std::size_t> sends;
    for (std::size_t t = 0; t < prog.program.size(); ++t) {
        const auto s = prog.program.stream(engine::TaskId::from_index(t)).index();
        if (prog.program.streams()[s].name == "pp_send_fwd" && prog.info[t].gpu == engine::GpuId{0}) {
            sends.push_back(t);
        }
    }
    return sends;
}

// --- Megatron's pipeline transfers -------------------------------------------------------------------

TEST(MegatronP2p, ComputeAfterASendWaitsForIt) {
    for (const bool overlap : {true, false}) {
        const config::Scenario sc = pipeline({{"parallelism.overlap_p2p_comm", overlap ? "true" : "false"}});
        const program::IterationProgram prog = program::build_iteration(sc, cost_model());
        // Every compute task of stage 0 that follows a forward send on the same GPU: does it wait for it?
        int sends = 0, waited = 0;
        for (const std::size_t t : forward_sends_of_gpu0(prog)) {
            ++sends;
            for (std::size_t u = t + 1; u < prog.program.size(); ++u) {
                if (prog.info[u].gpu == engine::GpuId{0} &&
                    prog.info.category(u) == program::TaskCategory::Compute) {
                    const auto deps = prog.program.dependencies(engine::TaskId::from_index(u));
                    waited += std::count(deps.begin(), deps.end(), engine::TaskId::from_index(t)) > 0;
                    break;
                }
            }
        }
        EXPECT_EQ(sends, 4);  // one per micro-batch
        EXPECT_EQ(waited, overlap ? 0 : 4) << "overlap_p2p_comm=" << overlap;
    }
}

TEST(MegatronP2p, WaitingForSendsNeverMakesTheIterationFasterAndShowsAsPipelineComm) {
    const report::IterationReport async = simulate(pipeline());
    const report::IterationReport megatron = simulate(pipeline({{"parallelism.overlap_p2p_comm", "false"}}));
    EXPECT_GE(megatron.iteration_time.value, async.iteration_time.value);
    EXPECT_GT(megatron.breakdown.exposed_pp_comm.value, async.breakdown.exposed_pp_comm.value);
    for (const report::StageReport& s : megatron.stages) {
        EXPECT_NEAR(s.time.total().value, megatron.iteration_time.value, 1e-9);
    }
}

TEST(MegatronP2p, InterleavedSteadyForwardsSendAfterTheBackwardTheyPairWith) {
    // p 4, v 2, m 8: stage 0 runs 16 forwards, each sending to stage 1. Its warm-up is
    // min((4 - 0 - 1)·2 + (2 - 1)·4, 16) = 10 forwards; the other 6 send after their backward.
    const config::Scenario sc = pipeline({{"model.num_layers", "8"},
                                          {"parallelism.pipeline_model_parallel_size", "4"},
                                          {"parallelism.virtual_pipeline_model_parallel_size", "2"},
                                          {"parallelism.data_parallel_size", "1"},
                                          {"parallelism.overlap_p2p_comm", "false"},
                                          {"hardware.gpus_per_node", "8"}});
    const program::IterationProgram prog = program::build_iteration(sc, cost_model());
    int sends = 0, after_backward = 0;
    for (const std::size_t t : forward_sends_of_gpu0(prog)) {
        ++sends;
        for (const engine::TaskId d : prog.program.dependencies(engine::TaskId::from_index(t))) {
            after_backward += prog.info[d.index()].phase == program::Phase::Backward;
        }
    }
    EXPECT_EQ(sends, 16);
    EXPECT_EQ(after_backward, 6);
    // Blocking sends with Megatron's pairing run to the end (no deadlock).
    EXPECT_GT(program::simulate(prog).makespan, 0_ns);
}

TEST(MegatronP2p, BreadthFirstIsNotAMegatronSchedule) {
    try {
        (void)pipeline({{"model.num_layers", "8"},
                        {"parallelism.pipeline_model_parallel_size", "4"},
                        {"parallelism.virtual_pipeline_model_parallel_size", "2"},
                        {"parallelism.data_parallel_size", "1"},
                        {"hardware.gpus_per_node", "8"},
                        {"schedule", "breadth_first"},
                        {"parallelism.overlap_p2p_comm", "false"}});
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), "parallelism.overlap_p2p_comm=false (Megatron-LM's blocking "
                                         "pipeline transfers) is not modelled for "
                                         "schedule=\"breadth_first\", which Megatron-LM does not have");
    }
}

// --- Host-side costs ----------------------------------------------------------------------------------

workload::Op kernel() {
    workload::Op op;
    op.kind = workload::OpKind::MemoryBound;
    return op;
}

TEST(HostOverhead, SmallKernelsAfterASynchronizeWaitForTheCpu) {
    const cost::HostCosts host{4.0, 10.0, 25.0};
    // Three 1 µs kernels: they reach the GPU at 14, 24 and 34 µs and each finishes long before the
    // next arrives, so the GPU idles 14 + 9 + 9 = 32 µs; the CPU ends 5 µs ahead (35 − 30).
    const workload::OpList small{kernel(), kernel(), kernel()};
    const std::vector<SimTime> one_us{1000_ns, 1000_ns, 1000_ns};
    const program::HostBound s = program::host_bound_idle(small, one_us, host);
    EXPECT_EQ(s.idle, 32'000_ns);
    EXPECT_EQ(s.lead_after, 5'000_ns);
    // Two 100 µs kernels: only the first launch is exposed (14 µs); the CPU ends 194 µs ahead.
    const workload::OpList big{kernel(), kernel()};
    const program::HostBound b =
        program::host_bound_idle(big, std::vector<SimTime>{100'000_ns, 100'000_ns}, host);
    EXPECT_EQ(b.idle, 14'000_ns);
    EXPECT_EQ(b.lead_after, 194'000_ns);
    // The small kernels again with the CPU 20 µs ahead: they arrive at −6, 4 and 14 µs, so the GPU
    // idles 0 + 3 + 9 = 12 µs.
    const program::HostBound ahead = program::host_bound_idle(small, one_us, host, 20'000_ns);
    EXPECT_EQ(ahead.idle, 12'000_ns);
    EXPECT_EQ(ahead.lead_after, 5'000_ns);
    // An asynchronous collective first: 25 µs of CPU before the kernel's 10, so it arrives at 39 µs. A
    // blocking one also holds the compute stream for its duration (here 50 µs, from 29 µs to 79 µs).
    workload::Op collective;
    collective.kind = workload::OpKind::Collective;
    const workload::OpList mixed{collective, kernel()};
    EXPECT_EQ(program::host_bound_idle(mixed, std::vector<SimTime>{50'000_ns, 1000_ns}, host).idle,
              39'000_ns);
    collective.blocking = true;
    const workload::OpList blocking{collective, kernel()};
    EXPECT_EQ(program::host_bound_idle(blocking, std::vector<SimTime>{50'000_ns, 1000_ns}, host).idle,
              29'000_ns);
}

TEST(HostOverhead, TheMoeDispatchersWaitDrainsTheCpusLeadMidList) {
    // A CPU far ahead (no synchronize yet) issues a 100 µs GEMM and a 20 µs permute, then waits for the
    // GEMM's device-to-host copy before it issues the all-to-all (Megatron-Core's before_ep_alltoall):
    // it resumes at 100 µs, spends 25 µs on the collective call, which starts 4 µs later at 129 µs; the
    // GPU, done with the permute at 120 µs, idles 9 µs. The 200 µs GEMM after it is issued at 135 µs,
    // before the all-to-all ends at 179 µs: no more idle, and the CPU ends 379 − 135 = 244 µs ahead.
    const cost::HostCosts host{4.0, 10.0, 25.0};
    workload::Op all_to_all;
    all_to_all.kind = workload::OpKind::Collective;
    all_to_all.blocking = true;
    all_to_all.host_waits_for = 0;
    const workload::OpList ops{kernel(), kernel(), all_to_all, kernel()};
    const std::vector<SimTime> d{100'000_ns, 20'000_ns, 50'000_ns, 200'000_ns};
    const program::HostBound bound = program::host_bound_idle(ops, d, host, program::kUnboundedLead);
    EXPECT_EQ(bound.idle, 9'000_ns);
    EXPECT_EQ(bound.lead_after, 244'000_ns);
    // Waiting for the permute instead (the CUDA-graphed dispatcher's dtoh point): the CPU resumes at
    // 120 µs and the collective starts at 149 µs, 29 µs after the GPU went idle.
    workload::OpList later = ops;
    later[2].host_waits_for = 1;
    EXPECT_EQ(program::host_bound_idle(later, d, host, program::kUnboundedLead).idle, 29'000_ns);
    // Without the wait the CPU stays unboundedly ahead: nothing idles.
    workload::OpList unsynced = ops;
    unsynced[2].host_waits_for = -1;
    const program::HostBound ahead = program::host_bound_idle(unsynced, d, host, program::kUnboundedLead);
    EXPECT_EQ(ahead.idle, 0_ns);
    EXPECT_EQ(ahead.lead_after, program::kUnboundedLead);
}

TEST(HostOverhead, SynchronizedTransfersAddHostTasksThatTheBreakdownReports) {
    const config::Scenario sc =
        pipeline({{"parallelism.overlap_p2p_comm", "false"}, {"parallelism.batch_p2p_sync", "true"}});
    const program::IterationProgram prog = program::build_iteration(sc, cost_model());
    const engine::RunResult run = program::simulate(prog);
    const std::vector<report::Breakdown> per_gpu = report::breakdowns(prog, run);
    std::vector<SimTime> host(prog.gpus.size(), SimTime{});
    std::vector<int> count(prog.gpus.size(), 0);
    for (std::size_t t = 0; t < prog.program.size(); ++t) {
        if (prog.info.category(t) == program::TaskCategory::Host) {
            host[prog.info[t].gpu.index()] += run.timings[t].end - run.timings[t].start;
            ++count[prog.info[t].gpu.index()];
        }
    }
    for (std::size_t g = 0; g < prog.gpus.size(); ++g) {
        // With 175B-sized layers the CPU is far ahead after one list, so a host gap comes only where the
        // CPU starts level with the GPU: after a synchronising transfer, and at the iteration's start.
        // Stage 0 (F0 F1 B0 F2 B1 F3 B2 B3): before F0 (start), F1 (send F0), B0, B1, B2 (send F and
        // receive B) and B3 (receive); none before F2 and F3, which follow a backward with nothing to
        // send. Stage 1 (F0 B0 ... F3 B3): before each F (receive) and the optimizer (send B3).
        EXPECT_EQ(count[g], g == 0 ? 6 : 5) << "gpu " << g;
        EXPECT_GT(host[g], 0_ns);
        EXPECT_DOUBLE_EQ(per_gpu[g].host.value, to_seconds(host[g]).value);
    }
    const report::IterationReport with = report::make_iteration_report(sc, cost_model(), prog, run);
    const report::IterationReport without = simulate(pipeline({{"parallelism.overlap_p2p_comm", "false"}}));
    EXPECT_GT(with.iteration_time.value, without.iteration_time.value);
    for (const report::StageReport& s : with.stages) {
        EXPECT_NEAR(s.time.total().value, with.iteration_time.value, 1e-9);
    }
}

TEST(HostOverhead, BatchP2pSyncNeedsTheProfilesHostSection) {
    cost::HardwareProfile profile = cost_model().profile();
    profile.host.reset();
    const cost::CostModel bare(profile);
    const config::Scenario sc = pipeline({{"parallelism.batch_p2p_sync", "true"}});
    try {
        (void)program::build_iteration(sc, bare);
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("parallelism.batch_p2p_sync=true needs the host section"),
                  std::string::npos)
            << e.what();
    }
}

// --- Variability --------------------------------------------------------------------------------------

TEST(Variability, ExpectedMaximumOfStandardNormals) {
    // Closed forms: E[max of 2] = 1/√π, E[max of 3] = 3/(2√π); tabulated: n = 5 → 1.16296,
    // n = 10 → 1.53875, n = 100 → 2.50759 (Harter 1961).
    const double inv_sqrt_pi = 1.0 / std::sqrt(std::numbers::pi);
    EXPECT_EQ(program::expected_max_standard_normal(1), 0.0);
    EXPECT_NEAR(program::expected_max_standard_normal(2), inv_sqrt_pi, 1e-7);
    EXPECT_NEAR(program::expected_max_standard_normal(3), 1.5 * inv_sqrt_pi, 1e-7);
    EXPECT_NEAR(program::expected_max_standard_normal(5), 1.16296, 1e-5);
    EXPECT_NEAR(program::expected_max_standard_normal(10), 1.53875, 1e-5);
    EXPECT_NEAR(program::expected_max_standard_normal(100), 2.50759, 1e-5);
}

TEST(Variability, DrawsAreSeededAndStandardNormal) {
    EXPECT_EQ(program::standard_normal_draw(7, 123), program::standard_normal_draw(7, 123));
    EXPECT_NE(program::standard_normal_draw(7, 123), program::standard_normal_draw(8, 123));
    constexpr int n = 100'000;
    double sum = 0.0, squares = 0.0;
    for (int r = 0; r < n; ++r) {
        const double z = program::standard_normal_draw(1, r);
        sum += z;
        squares += z * z;
    }
    // Standard errors: 1/√n = 0.0032 for the mean, √(2/n) = 0.0045 for the variance.
    EXPECT_NEAR(sum / n, 0.0, 0.015);
    EXPECT_NEAR(squares / n, 1.0, 0.02);
}

TEST(Variability, AFoldedGpuRunsAtItsSlowestMembersSpeed) {
    const config::Scenario sc = pipeline({{"variability.mode", "sampled"}, {"variability.seed", "5"}});
    const parallel::Layout layout(sc);
    const parallel::Coordinates at{0, 0, 1};
    const double folded = program::compute_slowdown(sc.variability, 0.02, layout, {true, true}, at);
    double slowest = 0.0;
    for (std::int64_t dp = 0; dp < 2; ++dp) {
        for (std::int64_t tp = 0; tp < 2; ++tp) {
            slowest = std::max(slowest, program::compute_slowdown(sc.variability, 0.02, layout,
                                                                  {false, false}, {tp, dp, 1}));
        }
    }
    EXPECT_EQ(folded, slowest);
    config::Scenario expected = sc;
    expected.variability.mode = config::VariabilityMode::Expected;
    // Four GPUs stand for the folded one: 1 + 0.02 · E[max of 4] (1.02938).
    EXPECT_NEAR(program::compute_slowdown(expected.variability, 0.02, layout, {true, true}, at),
                1.0 + 0.02 * 1.0293753, 1e-8);
}

TEST(Variability, ExpectedModeScalesEveryKernelAndReportsTheSlowdown) {
    // One stage, so every kernel's slowdown lands on the iteration; TP 2 and DP 2 folded: k = 4.
    const std::vector<Override> one_stage = {{"parallelism.pipeline_model_parallel_size", "1"}};
    std::vector<Override> on = one_stage;
    on.push_back({"variability.mode", "expected"});
    const report::IterationReport base = simulate(pipeline(one_stage));
    const report::IterationReport slow = simulate(pipeline(on));
    const double f = 1.0 + cost_model().profile().variability->gpu_slowdown_stddev *
                               program::expected_max_standard_normal(4);
    // The kernels' time is f times the base; the reported slowdown is the excess. Not exactly: the
    // slowdown of a kernel beside an asynchronous collective is priced on the part the collective
    // overlaps, which does not scale with the kernel (here 4e-5 of the busy time).
    const double base_busy = base.breakdown.busy().value;
    EXPECT_NEAR(slow.breakdown.busy().value, f * base_busy, 1e-4 * base_busy);
    EXPECT_NEAR(slow.breakdown.variability.value, (f - 1.0) * base_busy, 1e-4 * base_busy);
    EXPECT_NEAR(slow.breakdown.compute.value, base.breakdown.compute.value, 1e-4 * base_busy);
    EXPECT_GT(slow.iteration_time.value, base.iteration_time.value);
}

TEST(Variability, SampledFoldedAndUnfoldedAgreeWhenTheSlowestGpuGatesEverything) {
    // One stage, TP 2, no DP: the tensor-parallel all-reduces make both GPUs wait for the slower, so
    // the unfolded run (each GPU its own draw) equals the folded one (its slowest member's draw).
    const config::Scenario sc = pipeline({{"parallelism.pipeline_model_parallel_size", "1"},
                                          {"parallelism.data_parallel_size", "1"},
                                          {"training.global_batch_size", "4"},
                                          {"parallelism.sequence_parallel", "false"},
                                          {"variability.mode", "sampled"},
                                          {"variability.seed", "3"}});
    const report::IterationReport folded = simulate(sc);
    const report::IterationReport unfolded = simulate(sc, {false, false});
    EXPECT_EQ(unfolded.simulated_gpus, 2);
    EXPECT_NEAR(folded.iteration_time.value, unfolded.iteration_time.value, 1e-6);
}

TEST(Variability, ExpectedModeWithoutFoldingSaysItSlowsNothing) {
    const config::Scenario sc = pipeline({{"variability.mode", "expected"}});
    const program::IterationProgram folded = program::build_iteration(sc, cost_model());
    const program::IterationProgram unfolded = program::build_iteration(sc, cost_model(), {false, false});
    EXPECT_TRUE(folded.warnings.empty());
    ASSERT_EQ(unfolded.warnings.size(), 1u);
    EXPECT_NE(unfolded.warnings[0].find("use variability.mode=sampled with --fold none"), std::string::npos);
    for (const program::SimulatedGpu& g : unfolded.gpus) {
        EXPECT_EQ(g.compute_slowdown, 1.0);
    }
}

TEST(Variability, SameSeedSameRunOtherSeedOtherRun) {
    const config::Scenario a = pipeline({{"variability.mode", "sampled"}, {"variability.seed", "11"}});
    const config::Scenario b = pipeline({{"variability.mode", "sampled"}, {"variability.seed", "12"}});
    const report::IterationReport a1 = simulate(a, {false, false});
    const report::IterationReport a2 = simulate(a, {false, false});
    const report::IterationReport b1 = simulate(b, {false, false});
    EXPECT_EQ(a1.fingerprint, a2.fingerprint);
    EXPECT_NE(a1.fingerprint, b1.fingerprint);
}

}  // namespace
}  // namespace trainsim
