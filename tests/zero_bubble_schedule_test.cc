// Zero-bubble schedules (Qi et al., ICLR 2024): the handcrafted orderings of the paper's Figure 3, the
// bubble formulas of its Table 2 as an oracle on engine runs with free communication, the micro-batches
// each holds, and the B/W split of the backward lowered into a real iteration.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "sim/core/input_error.h"
#include "sim/engine/simulator.h"
#include "sim/program/backward_split.h"
#include "sim/program/iteration_program.h"
#include "sim/report/iteration_report.h"
#include "sim/schedule/schedule.h"
#include "sim/schedule/zero_bubble_handcrafted_schedule.h"
#include "sim/workload/transformer_layer.h"
#include "tests/test_support.h"

namespace trainsim::schedule {
namespace {

using config::ScheduleKind;

std::string steps_of(ScheduleKind kind, PipelineShape shape, std::int64_t rank) {
    return to_string(make_schedule(kind, shape)->steps(rank));
}

TEST(ZbH1, MatchesFigure3ForP4M8) {
    // Figure 3 (top), 0-based: the first device runs F0..F3, then B0 W0 F4 B1 W1 ...; the last pairs
    // each F with its B at once and runs W p − 1 steps later (its W of micro-batch x − (p − 1) with F x).
    EXPECT_EQ(steps_of(ScheduleKind::ZbH1, {4, 1, 8}, 0),
              "F0.c0 F1.c0 F2.c0 F3.c0 B0.c0 W0.c0 F4.c0 B1.c0 W1.c0 F5.c0 B2.c0 W2.c0 F6.c0 B3.c0 W3.c0 "
              "F7.c0 B4.c0 W4.c0 B5.c0 W5.c0 B6.c0 W6.c0 B7.c0 W7.c0");
    EXPECT_EQ(steps_of(ScheduleKind::ZbH1, {4, 1, 8}, 1),
              "F0.c0 F1.c0 F2.c0 B0.c0 F3.c0 B1.c0 W0.c0 F4.c0 B2.c0 W1.c0 F5.c0 B3.c0 W2.c0 F6.c0 B4.c0 "
              "W3.c0 F7.c0 B5.c0 W4.c0 B6.c0 W5.c0 B7.c0 W6.c0 W7.c0");
    EXPECT_EQ(steps_of(ScheduleKind::ZbH1, {4, 1, 8}, 3),
              "F0.c0 B0.c0 F1.c0 B1.c0 F2.c0 B2.c0 F3.c0 B3.c0 W0.c0 F4.c0 B4.c0 W1.c0 F5.c0 B5.c0 W2.c0 "
              "F6.c0 B6.c0 W3.c0 F7.c0 B7.c0 W4.c0 W5.c0 W6.c0 W7.c0");
}

TEST(ZbH2, MatchesFigure3ForP4M8) {
    // Figure 3 (bottom): the first device runs 2p − 1 = 7 forwards, then B0 W0 F7, then B/W pairs; the
    // last pairs F and B for seven micro-batches, then W0 F7 B7 and the remaining W's back to back.
    EXPECT_EQ(steps_of(ScheduleKind::ZbH2, {4, 1, 8}, 0),
              "F0.c0 F1.c0 F2.c0 F3.c0 F4.c0 F5.c0 F6.c0 B0.c0 W0.c0 F7.c0 B1.c0 W1.c0 B2.c0 W2.c0 B3.c0 "
              "W3.c0 B4.c0 W4.c0 B5.c0 W5.c0 B6.c0 W6.c0 B7.c0 W7.c0");
    EXPECT_EQ(steps_of(ScheduleKind::ZbH2, {4, 1, 8}, 3),
              "F0.c0 B0.c0 F1.c0 B1.c0 F2.c0 B2.c0 F3.c0 B3.c0 F4.c0 B4.c0 F5.c0 B5.c0 F6.c0 B6.c0 W0.c0 "
              "F7.c0 B7.c0 W1.c0 W2.c0 W3.c0 W4.c0 W5.c0 W6.c0 W7.c0");
}

TEST(ZeroBubble, EveryRankRunsEachPassOnceWithWAfterItsB) {
    for (const ScheduleKind kind : {ScheduleKind::ZbH1, ScheduleKind::ZbH2}) {
        for (std::int64_t p = 1; p <= 6; ++p) {
            for (std::int64_t m = 1; m <= 14; ++m) {
                const auto sched = make_schedule(kind, {p, 1, m});
                ASSERT_TRUE(sched->splits_backward());
                for (std::int64_t r = 0; r < p; ++r) {
                    std::map<std::pair<int, int>, std::size_t> at;  // (pass, micro-batch) → position
                    auto pos = [&](int pass, int mb) { return at[std::pair{pass, mb}]; };
                    const auto steps = sched->steps(r);
                    for (std::size_t i = 0; i < steps.size(); ++i) {
                        EXPECT_TRUE(
                            at.emplace(std::pair{static_cast<int>(steps[i].pass), steps[i].microbatch}, i)
                                .second);
                    }
                    ASSERT_EQ(at.size(), static_cast<std::size_t>(3 * m));
                    for (int mb = 0; mb < m; ++mb) {
                        EXPECT_LT(pos(0, mb), pos(1, mb));
                        EXPECT_LT(pos(1, mb), pos(2, mb));
                    }
                }
            }
        }
    }
}

// The most micro-batches rank `rank` holds: a forward allocates, the pass that ends the backward frees.
std::int64_t held(const Schedule& s, std::int64_t rank) {
    const Pass frees = s.splits_backward() ? Pass::Weight : Pass::Backward;
    std::int64_t now = 0, peak = 0;
    for (const Step& step : s.steps(rank)) {
        now += step.pass == Pass::Forward ? 1 : step.pass == frees ? -1 : 0;
        peak = std::max(peak, now);
    }
    return peak;
}

TEST(ZeroBubble, MicrobatchesInFlightAreTheStatedCounts) {
    // §2.1 and §2.3: ZB-H1 holds p micro-batches on every rank (1F1B's first rank's count), ZB-H2 2p − 1.
    for (std::int64_t p = 1; p <= 8; ++p) {
        const std::int64_t m = 3 * p;
        const auto h1 = make_schedule(ScheduleKind::ZbH1, {p, 1, m});
        const auto h2 = make_schedule(ScheduleKind::ZbH2, {p, 1, m});
        const auto ofob = make_schedule(ScheduleKind::OneFOneB, {p, 1, m});
        EXPECT_EQ(held(*ofob, 0), p);
        for (std::int64_t r = 0; r < p; ++r) {
            EXPECT_EQ(held(*h1, r), p) << p << " " << r;
            EXPECT_EQ(held(*h2, r), 2 * p - 1) << p << " " << r;
        }
    }
}

TEST(ZeroBubble, RejectsMoreThanOneChunk) {
    try {
        (void)make_schedule(ScheduleKind::ZbH1, {4, 2, 8});
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("virtual_pipeline_model_parallel_size=1"), std::string::npos);
    }
}

struct PassTimes {
    SimTime f, b, w;
};

// Each rank's idle time between its own first and last pass, the largest over the ranks: the paper's
// bubble, which assumes the optimizer step does not hold a rank back (§4 post-validation; with 1F1B and
// ZB-H1 it is also the makespan less m(F + B + W), the first rank being the critical one).
struct Bubbles {
    SimTime span_idle = 0;
    SimTime makespan = 0;
};

// Runs the schedule on the engine with free communication: F, B and W take the given times; a schedule
// without W steps runs B + W fused in its Backward.
Bubbles run_schedule(ScheduleKind kind, PipelineShape shape, PassTimes t) {
    using namespace engine;
    Program prog;
    const auto sched = make_schedule(kind, shape);
    const std::int64_t p = shape.stages;
    std::map<std::array<std::int64_t, 4>, RendezvousId> links;  // (dir, from, to, seq)
    std::map<std::array<std::int64_t, 4>, std::int64_t> seq;
    auto link = [&](std::int64_t dir, std::int64_t from, std::int64_t to, bool sending) {
        const std::int64_t k = seq[{dir, from, to, sending ? 1 : 0}]++;
        auto [it, added] = links.try_emplace({dir, from, to, k}, -1);
        if (added) {
            it->second = prog.add_rendezvous(2, 0, "link");
        }
        return it->second;
    };
    std::vector<std::vector<TaskId>> compute_tasks(static_cast<std::size_t>(p));
    for (std::int64_t r = 0; r < p; ++r) {
        const StreamId compute = prog.add_stream(static_cast<std::int32_t>(r), "compute");
        const StreamId send[2] = {prog.add_stream(static_cast<std::int32_t>(r), "sf"),
                                  prog.add_stream(static_cast<std::int32_t>(r), "sb")};
        const StreamId recv[2] = {prog.add_stream(static_cast<std::int32_t>(r), "rf"),
                                  prog.add_stream(static_cast<std::int32_t>(r), "rb")};
        TaskId last = -1;
        for (const Step& s : sched->steps(r)) {
            if (s.pass == Pass::Weight) {
                last = prog.add_task(compute, t.w, "W", {});
                compute_tasks[static_cast<std::size_t>(r)].push_back(last);
                continue;
            }
            const std::int64_t vs = sched->stage_of(r, s.chunk, p);
            const bool fwd = s.pass == Pass::Forward;
            const int dir = fwd ? 0 : 1;
            const std::int64_t from = fwd ? vs - 1 : vs + 1;
            const std::int64_t to = fwd ? vs + 1 : vs - 1;
            const std::int64_t stages = p * shape.chunks;
            std::vector<TaskId> deps;
            if (from >= 0 && from < stages) {
                std::vector<TaskId> posted;
                if (last >= 0) {
                    posted.push_back(last);
                }
                deps.push_back(prog.add_rendezvous_task(
                    recv[dir], link(dir, sched->rank_of(from, s.chunk, p), r, false), "recv", posted));
            }
            const SimTime duration = fwd ? t.f : sched->splits_backward() ? t.b : t.b + t.w;
            last = prog.add_task(compute, duration, "step", deps);
            compute_tasks[static_cast<std::size_t>(r)].push_back(last);
            if (to >= 0 && to < stages) {
                prog.add_rendezvous_task(send[dir], link(dir, r, sched->rank_of(to, s.chunk, p), true),
                                         "send", std::vector<TaskId>{last});
            }
        }
    }
    const RunResult run = simulate(prog);
    Bubbles out;
    out.makespan = run.makespan;
    for (const auto& tasks : compute_tasks) {
        SimTime busy = 0, first = run.makespan, last = 0;
        for (const TaskId id : tasks) {
            const TaskTiming& timing = run.timings[static_cast<std::size_t>(id)];
            busy += timing.end - timing.start;
            first = std::min(first, timing.start);
            last = std::max(last, timing.end);
        }
        out.span_idle = std::max(out.span_idle, last - first - busy);
    }
    return out;
}

const std::vector<PassTimes> kTimes = {{100, 100, 100}, {200, 300, 100}, {300, 200, 200}, {500, 700, 300},
                                       {200, 200, 100}, {100, 300, 100}, {300, 100, 100}, {100, 100, 200}};

TEST(BubbleOracle, ZeroBubbleSchedulesMatchTable2) {
    // Table 2 with free communication: 1F1B (p − 1)(F + B + W), ZB-H1 (p − 1)(F + B − W), ZB-H2
    // (p − 1)(F + B − 2W) where that is not negative (else 0), on a grid of (p, m) and pass times.
    for (const auto& [p, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{
             {2, 4}, {3, 6}, {4, 8}, {4, 12}, {5, 10}, {4, 9}, {6, 12}, {8, 24}}) {
        for (const PassTimes& t : kTimes) {
            const SimTime work = m * (t.f + t.b + t.w);
            const Bubbles ofob = run_schedule(ScheduleKind::OneFOneB, {p, 1, m}, t);
            EXPECT_EQ(ofob.span_idle, (p - 1) * (t.f + t.b + t.w));
            EXPECT_EQ(ofob.makespan - work, (p - 1) * (t.f + t.b + t.w));
            // ZB-H1's count assumes W no longer than F or B (§2.3: T_W < T_F < T_B for transformers).
            if (t.w <= t.f && t.w <= t.b) {
                const Bubbles h1 = run_schedule(ScheduleKind::ZbH1, {p, 1, m}, t);
                EXPECT_EQ(h1.span_idle, (p - 1) * (t.f + t.b - t.w))
                    << p << " " << m << " " << t.f << " " << t.b << " " << t.w;
                EXPECT_EQ(h1.makespan - work, (p - 1) * (t.f + t.b - t.w));
            }
            const Bubbles h2 = run_schedule(ScheduleKind::ZbH2, {p, 1, m}, t);
            EXPECT_EQ(h2.span_idle, std::max<SimTime>(0, (p - 1) * (t.f + t.b - 2 * t.w)))
                << p << " " << m << " " << t.f << " " << t.b << " " << t.w;
        }
    }
}

TEST(BackwardSplit, WeightGradientGemmsGoToWAndDependenciesAreRenumbered) {
    workload::OpList ops(4);
    ops[0].name = "fc2.dgrad";
    ops[1].name = "fc2.dgrad_allreduce";
    ops[1].kind = workload::OpKind::Collective;
    ops[2].name = "fc2.wgrad";
    ops[3].name = "gelu.bwd";
    ops[3].kind = workload::OpKind::MemoryBound;
    ops[3].after = {1, 2};
    const program::BackwardSplit s = program::split_backward(ops);
    ASSERT_EQ(s.input_gradient.size(), 3u);
    ASSERT_EQ(s.weight_gradient.size(), 1u);
    EXPECT_EQ(s.weight_gradient[0].name, "fc2.wgrad");
    EXPECT_EQ(s.input_gradient[2].name, "gelu.bwd");
    EXPECT_EQ(s.input_gradient[2].after, std::vector<std::int32_t>{1});  // the W dependency is dropped
}

}  // namespace
}  // namespace trainsim::schedule

namespace trainsim {
namespace {

report::IterationReport simulate_scenario(const config::Scenario& sc) {
    static const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    return report::make_iteration_report(sc, cost, prog, program::simulate(prog));
}

config::Scenario gpt175b(const char* schedule, const char* recompute = "selective") {
    // p = 8, one chunk per rank, 24 micro-batches.
    return testing::shipped_scenario("korthikanti-175b",
                                     {{"parallelism.virtual_pipeline_model_parallel_size", "1"},
                                      {"training.global_batch_size", "24"},
                                      {"training.recompute_granularity", recompute},
                                      {"schedule", schedule}});
}

TEST(ZeroBubbleIteration, MemoryReplayHoldsActivationsUntilW) {
    // The replayed timeline frees a micro-batch's activations when its W ends: ZB-H1 holds p = 8 on
    // every stage (1F1B: p − r), ZB-H2 2p − 1 = 15.
    const report::IterationReport ofob = simulate_scenario(gpt175b("1f1b"));
    const report::IterationReport h1 = simulate_scenario(gpt175b("zb-h1"));
    const report::IterationReport h2 = simulate_scenario(gpt175b("zb-h2"));
    EXPECT_EQ(ofob.stages[0].microbatches_in_flight, 8);
    EXPECT_EQ(ofob.stages[7].microbatches_in_flight, 1);
    for (std::size_t s = 0; s < 8; ++s) {
        EXPECT_EQ(h1.stages[s].microbatches_in_flight, 8) << s;
        EXPECT_EQ(h2.stages[s].microbatches_in_flight, 15) << s;
    }
}

TEST(ZeroBubbleIteration, SplittingTheBackwardShortensTheIterationWithTheSameWork) {
    for (const char* recompute : {"selective", "full"}) {
        const report::IterationReport ofob = simulate_scenario(gpt175b("1f1b", recompute));
        const report::IterationReport h1 = simulate_scenario(gpt175b("zb-h1", recompute));
        const report::IterationReport h2 = simulate_scenario(gpt175b("zb-h2", recompute));
        EXPECT_LT(h1.iteration_time.value, ofob.iteration_time.value) << recompute;
        EXPECT_LT(h2.iteration_time.value, h1.iteration_time.value) << recompute;
        EXPECT_LT(h1.breakdown.bubble.value, ofob.breakdown.bubble.value) << recompute;
        // The same kernels run, only in another order; a wgrad GEMM in W no longer shares the GPU with
        // the dgrad collective it overlapped in the fused backward, so it loses that slowdown.
        EXPECT_LE(h1.breakdown.busy().value, ofob.breakdown.busy().value);
        EXPECT_GT(h1.breakdown.busy().value, 0.99 * ofob.breakdown.busy().value);
        EXPECT_NEAR(h2.breakdown.recompute.value, ofob.breakdown.recompute.value, 1e-9);
    }
}

TEST(ZeroBubbleIteration, CliRunsTheScheduleAndRejectsChunks) {
    const auto ok = testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-175b.json") +
                                          " --set parallelism.virtual_pipeline_model_parallel_size=1"
                                          " --set schedule=zb-h1 --format json");
    ASSERT_EQ(ok.status, 0) << ok.err;
    const auto bad = testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-175b.json") +
                                           " --set schedule=zb-h2");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("virtual_pipeline_model_parallel_size=1"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace trainsim
