// Zero-bubble schedules (Qi et al., ICLR 2024): the handcrafted orderings of the paper's Figure 3, the
// bubble formulas of its Table 2 as an oracle on engine runs with free communication, the micro-batches
// each holds, and the B/W split of the backward lowered into a real iteration.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

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

// The (micro-batch, chunk)s whose backward a step list splits into B and W.
std::set<std::pair<int, int>> split_backwards(const std::vector<Step>& steps) {
    std::set<std::pair<int, int>> out;
    for (const Step& s : steps) {
        if (s.pass == Pass::Weight) {
            out.insert({s.microbatch, s.chunk});
        }
    }
    return out;
}

// The most (micro-batch, chunk)s rank `rank` holds: a forward allocates, the pass that ends the
// backward (W, or a fused B) frees.
std::int64_t held(const Schedule& s, std::int64_t rank) {
    const std::vector<Step> steps = s.steps(rank);
    const auto split = split_backwards(steps);
    std::int64_t now = 0, peak = 0;
    for (const Step& step : steps) {
        const bool frees = step.pass == Pass::Weight ||
                           (step.pass == Pass::Backward && !split.contains({step.microbatch, step.chunk}));
        now += step.pass == Pass::Forward ? 1 : frees ? -1 : 0;
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
    SimTime span_idle{};
    SimTime makespan{};
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
            it->second = prog.add_rendezvous(2, 0_ns, "link");
        }
        return it->second;
    };
    std::vector<std::vector<TaskId>> compute_tasks(static_cast<std::size_t>(p));
    for (std::int64_t r = 0; r < p; ++r) {
        const StreamId compute = prog.add_stream(engine::GpuId{static_cast<std::int32_t>(r)}, "compute");
        // One stream per (send or receive, direction, peer), as trainsim's program has.
        std::map<std::array<std::int64_t, 3>, StreamId> streams;
        auto stream = [&](bool sending, int dir, std::int64_t peer) {
            auto [it, added] = streams.try_emplace({sending ? 1 : 0, dir, peer}, kNoStream);
            if (added) {
                it->second = prog.add_stream(engine::GpuId{static_cast<std::int32_t>(r)}, "p2p");
            }
            return it->second;
        };
        TaskId last = kNoTask;
        const std::vector<Step> steps = sched->steps(r);
        const auto split = split_backwards(steps);
        const std::int64_t stages = sched->model_stages(p, shape.chunks);
        // A paired forward's send and its stream.
        std::pair<RendezvousId, StreamId> deferred{kNoRendezvous, kNoStream};
        // The receive of step k, posted once (a paired forward posts its backward's too).
        std::map<std::size_t, TaskId> received;
        auto receive = [&](std::size_t k) -> TaskId {
            if (const auto it = received.find(k); it != received.end()) {
                return it->second;
            }
            const Step& s = steps[k];
            const std::int64_t vs = sched->stage_of(r, s.chunk, p);
            const bool fwd = s.pass == Pass::Forward;
            const std::int64_t from = fwd ? vs - 1 : vs + 1;
            TaskId id = kNoTask;
            // A V's turn on rank p − 1 stays on the rank: nothing to receive.
            if (from >= 0 && from < stages && sched->rank_of(from, s.chunk, p) != r) {
                std::vector<TaskId> posted;
                if (last != kNoTask) {
                    posted.push_back(last);
                }
                const int dir = fwd ? 0 : 1;
                const std::int64_t peer = sched->rank_of(from, s.chunk, p);
                id = prog.add_rendezvous_task(stream(false, dir, peer), link(dir, peer, r, false), "recv",
                                              posted);
            }
            return received[k] = id;
        };
        for (std::size_t k = 0; k < steps.size(); ++k) {
            const Step& s = steps[k];
            if (s.pass == Pass::Weight) {
                last = prog.add_task(compute, t.w, "W", {});
                compute_tasks[static_cast<std::size_t>(r)].push_back(last);
                continue;
            }
            const std::int64_t vs = sched->stage_of(r, s.chunk, p);
            const bool fwd = s.pass == Pass::Forward;
            const int dir = fwd ? 0 : 1;
            const std::int64_t to = fwd ? vs + 1 : vs - 1;
            std::vector<TaskId> deps;
            if (const TaskId id = receive(k); id != kNoTask) {
                deps.push_back(id);
            }
            if (s.paired && k + 1 < steps.size()) {
                if (const TaskId id = receive(k + 1); id != kNoTask) {
                    deps.push_back(id);
                }
            }
            const SimTime duration = fwd ? t.f : split.contains({s.microbatch, s.chunk}) ? t.b : t.b + t.w;
            last = prog.add_task(compute, duration, "step", deps);
            compute_tasks[static_cast<std::size_t>(r)].push_back(last);
            if (to >= 0 && to < stages && sched->rank_of(to, s.chunk, p) != r) {
                // A paired forward's output goes after the backward it pairs with, as DualPipe sends.
                const std::int64_t peer = sched->rank_of(to, s.chunk, p);
                const RendezvousId id = link(dir, r, peer, true);
                if (s.paired) {
                    deferred = {id, stream(true, dir, peer)};
                } else {
                    prog.add_rendezvous_task(stream(true, dir, peer), id, "send", std::vector<TaskId>{last});
                }
            }
            if (!fwd && deferred.first != kNoRendezvous) {
                prog.add_rendezvous_task(deferred.second, deferred.first, "send", std::vector<TaskId>{last});
                deferred.first = kNoRendezvous;
            }
        }
    }
    const RunResult run = simulate(prog);
    Bubbles out;
    out.makespan = run.makespan;
    for (const auto& tasks : compute_tasks) {
        SimTime busy{}, first = run.makespan, last{};
        for (const TaskId id : tasks) {
            const TaskTiming& timing = run.timings[id.index()];
            busy += timing.end - timing.start;
            first = std::min(first, timing.start);
            last = std::max(last, timing.end);
        }
        out.span_idle = std::max(out.span_idle, last - first - busy);
    }
    return out;
}

const std::vector<PassTimes> kTimes = {
    {100_ns, 100_ns, 100_ns}, {200_ns, 300_ns, 100_ns}, {300_ns, 200_ns, 200_ns}, {500_ns, 700_ns, 300_ns},
    {200_ns, 200_ns, 100_ns}, {100_ns, 300_ns, 100_ns}, {300_ns, 100_ns, 100_ns}, {100_ns, 100_ns, 200_ns}};

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
            EXPECT_EQ(h2.span_idle, std::max(SimTime{}, (p - 1) * (t.f + t.b - 2 * t.w)))
                << p << " " << m << " " << t.f << " " << t.b << " " << t.w;
        }
    }
}

TEST(DualPipeV, MatchesTheReferenceForP4M10) {
    // deepseek-ai/DualPipe dualpipev.py's eight steps for 4 ranks (8 stages) and 10 micro-batches, as
    // the README's figure draws them: "&" joins an overlapped F&B pair; a B with a W later is the input
    // gradient alone, the others are full backwards.
    EXPECT_EQ(steps_of(ScheduleKind::DualPipeV, {4, 2, 10}, 0),
              "F0.c0 F1.c0 F2.c0 F3.c0 F4.c0 F5.c0 F6.c0 F0.c1 B0.c1 W0.c1 F1.c1 B1.c1 W1.c1 F2.c1 B2.c1 "
              "W2.c1 F3.c1 F7.c0&B3.c1 F4.c1&B0.c0 F8.c0&B4.c1 F5.c1&B1.c0 F9.c0&B5.c1 F6.c1&B2.c0 B6.c1 "
              "F7.c1&B3.c0 B7.c1 F8.c1&B4.c0 B8.c1 F9.c1&B5.c0 B9.c1 B6.c0 W6.c0 B7.c0 W7.c0 B8.c0 W8.c0 "
              "B9.c0 W9.c0");
    EXPECT_EQ(steps_of(ScheduleKind::DualPipeV, {4, 2, 10}, 3),
              "F0.c0 F0.c1 F1.c0 F1.c1 F2.c0 F2.c1 F3.c0 F3.c1 F4.c0 B0.c1 F4.c1&B0.c0 F5.c0&B1.c1 "
              "F5.c1&B1.c0 F6.c0&B2.c1 F6.c1&B2.c0 F7.c0&B3.c1 F7.c1&B3.c0 F8.c0&B4.c1 F8.c1&B4.c0 "
              "F9.c0&B5.c1 F9.c1&B5.c0 B6.c1 B6.c0 B7.c1 B7.c0 B8.c1 B8.c0 B9.c1 B9.c0 W8.c1 W8.c0 W9.c1 "
              "W9.c0");
    const auto s = make_schedule(ScheduleKind::DualPipeV, {4, 2, 10});
    EXPECT_EQ(s->stage_of(0, 1, 4), 7);  // the V: rank 0 holds the first and the last stage
    EXPECT_EQ(s->stage_of(3, 1, 4), 4);
    EXPECT_EQ(s->rank_of(5, 1, 4), 2);
}

TEST(DualPipeV, EveryRankRunsEachPassOnceAndHoldsPPPlusOneChunks) {
    // README: activation per device PP + 1 chunks, PP = 2p stages.
    for (std::int64_t p = 1; p <= 8; ++p) {
        for (std::int64_t m = 2 * p; m <= 2 * p + 5; ++m) {
            const auto sched = make_schedule(ScheduleKind::DualPipeV, {p, 2, m});
            for (std::int64_t r = 0; r < p; ++r) {
                const auto steps = sched->steps(r);
                std::map<std::tuple<int, int, int>, int> seen;
                for (const Step& s : steps) {
                    ++seen[{static_cast<int>(s.pass), s.microbatch, s.chunk}];
                }
                const auto split = split_backwards(steps);
                EXPECT_EQ(seen.size(), 4u * static_cast<std::size_t>(m) + split.size()) << p << " " << m;
                EXPECT_EQ(held(*sched, r), 2 * p + 1) << p << " " << m << " " << r;
            }
        }
    }
}

TEST(DualPipeV, RejectsWhatTheReferenceAsserts) {
    auto message = [](PipelineShape s) {
        try {
            (void)make_schedule(ScheduleKind::DualPipeV, s);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message({4, 2, 7}).find("at least 2 × parallelism.pipeline_model_parallel_size = 8"),
              std::string::npos);
    EXPECT_NE(message({4, 1, 8}).find("virtual_pipeline_model_parallel_size=2"), std::string::npos);
}

TEST(BubbleOracle, DualPipeVMatchesItsReadmeWithTheBackwardConverted) {
    // The README writes B for the full backward and F&B for an overlapped pair: bubble
    // (PP/2 − 1)(F&B + B − 3W) with PP = 2p stages. Here B is the input gradient alone, so its B is
    // B + W; dense layers have nothing to overlap, so F&B = F + (B + W). The count is the figure's,
    // drawn with equal passes: checked with F = B = W, where it is 2(p − 1)F.
    for (std::int64_t p = 1; p <= 8; ++p) {
        for (const std::int64_t m : {2 * p, 2 * p + 2, 3 * p + 1, 5 * p}) {
            const PassTimes t{100_ns, 100_ns, 100_ns};
            const SimTime full_backward = t.b + t.w;
            const SimTime pair = t.f + full_backward;
            const SimTime readme = (p - 1) * (pair + full_backward - 3 * t.w);
            EXPECT_EQ(readme, 2 * (p - 1) * t.f);
            const Bubbles b = run_schedule(ScheduleKind::DualPipeV, {p, 2, m}, t);
            EXPECT_EQ(b.span_idle, readme) << p << " " << m;
            EXPECT_EQ(b.makespan - 2 * m * (t.f + t.b + t.w), readme) << p << " " << m;
        }
    }
}

TEST(DualPipe, MatchesTheReferenceForP4M8) {
    // deepseek-ai/DualPipe dualpipe.py's eight steps for 4 ranks and 8 micro-batches (4 from each end),
    // written out by hand from step(): half_rank min(r, 3 − r), 2 ranks per half, 4 chunks per
    // direction; the second half's phase 0 is the reverse direction (chunk 1 here), so ranks 2 and 3
    // mirror ranks 1 and 0 with the chunks swapped. Rank 1 is a middle rank: its first step-4 pair is
    // not overlapped.
    const std::string rank0 =
        "F0.c0 F1.c0 F2.c0 F0.c1 B0.c1 W0.c1 F1.c1 F3.c0&B1.c1 F2.c1&B0.c0 B2.c1 F3.c1&B1.c0 B3.c1 B2.c0 "
        "W2.c0 B3.c0 W3.c0";
    const std::string rank1 =
        "F0.c0 F0.c1 F1.c0 F1.c1 F2.c0 B0.c1 F2.c1&B0.c0 F3.c0&B1.c1 F3.c1&B1.c0 B2.c1 B2.c0 B3.c1 B3.c0 "
        "W3.c1 W3.c0";
    EXPECT_EQ(steps_of(ScheduleKind::DualPipe, {4, 2, 8}, 0), rank0);
    EXPECT_EQ(steps_of(ScheduleKind::DualPipe, {4, 2, 8}, 1), rank1);
    EXPECT_EQ(
        steps_of(ScheduleKind::DualPipe, {4, 2, 8}, 2),
        "F0.c1 F0.c0 F1.c1 F1.c0 F2.c1 B0.c0 F2.c0&B0.c1 F3.c1&B1.c0 F3.c0&B1.c1 B2.c0 B2.c1 B3.c0 B3.c1 "
        "W3.c0 W3.c1");
    EXPECT_EQ(
        steps_of(ScheduleKind::DualPipe, {4, 2, 8}, 3),
        "F0.c1 F1.c1 F2.c1 F0.c0 B0.c0 W0.c0 F1.c0 F3.c1&B1.c0 F2.c0&B0.c1 B2.c0 F3.c0&B1.c1 B3.c0 B2.c1 "
        "W2.c1 B3.c1 W3.c1");
    // Bidirectional placement: chunk 0 of rank r is stage r, chunk 1 stage p − 1 − r of a 4-stage model.
    const auto s = make_schedule(ScheduleKind::DualPipe, {4, 2, 8});
    EXPECT_EQ(s->model_stages(4, 2), 4);
    EXPECT_EQ(s->stage_of(0, 1, 4), 3);
    EXPECT_EQ(s->stage_of(1, 0, 4), 1);
    EXPECT_EQ(s->rank_of(0, 1, 4), 3);
    EXPECT_EQ(s->rank_of(2, 0, 4), 2);
}

TEST(DualPipe, EveryRankRunsEachPassOnceAndHoldsPPPlusOneChunks) {
    // README's table: DualPipe holds PP + 1 chunks' activations per device, PP = p stages here.
    for (std::int64_t p = 2; p <= 8; p += 2) {
        for (std::int64_t m = 2 * p; m <= 2 * p + 6; m += 2) {
            const auto sched = make_schedule(ScheduleKind::DualPipe, {p, 2, m});
            for (std::int64_t r = 0; r < p; ++r) {
                const auto steps = sched->steps(r);
                std::map<std::tuple<int, int, int>, int> seen;
                for (const Step& s : steps) {
                    ++seen[{static_cast<int>(s.pass), s.microbatch, s.chunk}];
                    EXPECT_LT(s.microbatch, m / 2);
                }
                // m/2 micro-batches through each chunk: m forwards, m backwards, the split ones' W.
                EXPECT_EQ(seen.size(), 2u * static_cast<std::size_t>(m) + split_backwards(steps).size())
                    << p << " " << m;
                EXPECT_EQ(steps.size(), seen.size());
                EXPECT_EQ(held(*sched, r), p + 1) << p << " " << m << " " << r;
            }
        }
    }
}

TEST(DualPipe, RejectsWhatTheReferenceAsserts) {
    auto message = [](PipelineShape s) {
        try {
            (void)make_schedule(ScheduleKind::DualPipe, s);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message({4, 2, 8}), "no error");
    EXPECT_NE(message({3, 2, 8}).find("even parallelism.pipeline_model_parallel_size"), std::string::npos);
    EXPECT_NE(message({4, 2, 6}).find("at least 2 × parallelism.pipeline_model_parallel_size = 8"),
              std::string::npos);
    EXPECT_NE(message({4, 2, 9}).find("an even number of micro-batches"), std::string::npos);
    EXPECT_NE(message({4, 1, 8}).find("virtual_pipeline_model_parallel_size=2"), std::string::npos);
}

TEST(BubbleOracle, DualPipeMatchesItsReadmeWithTheBackwardConverted) {
    // README: bubble (PP/2 − 1)(F&B + B − 3W), PP = p stages, B the full backward (B + W here) and
    // F&B a pair, which with nothing to overlap (dense) is F + (B + W). The figure's count, with
    // equal passes: (p/2 − 1)·2F.
    for (std::int64_t p = 2; p <= 8; p += 2) {
        for (const std::int64_t m : {2 * p, 2 * p + 2, 3 * p, 5 * p}) {
            const PassTimes t{100_ns, 100_ns, 100_ns};
            const SimTime full_backward = t.b + t.w;
            const SimTime pair = t.f + full_backward;
            const SimTime readme = (p / 2 - 1) * (pair + full_backward - 3 * t.w);
            EXPECT_EQ(readme, (p / 2 - 1) * 2 * t.f);
            const Bubbles b = run_schedule(ScheduleKind::DualPipe, {p, 2, m}, t);
            EXPECT_EQ(b.span_idle, readme) << p << " " << m;
            EXPECT_EQ(b.makespan - m * (t.f + t.b + t.w), readme) << p << " " << m;
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
    // The same p micro-batches on the first stage: the same bytes (what B recomputes goes when B ends).
    EXPECT_EQ(h1.stages[0].activation_bytes.value, ofob.stages[0].activation_bytes.value);
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

namespace trainsim {
namespace {

TEST(DualPipeVIteration, RunsInAVWithTheLossOnRankZero) {
    // 175B on p = 8 with two chunks per rank in a V, 16 micro-batches (the least DualPipeV accepts).
    const config::Scenario v = testing::shipped_scenario(
        "korthikanti-175b", {{"parallelism.virtual_pipeline_model_parallel_size", "2"},
                             {"training.global_batch_size", "16"},
                             {"schedule", "dualpipev"}});
    const config::Scenario loop = testing::shipped_scenario(
        "korthikanti-175b",
        {{"parallelism.virtual_pipeline_model_parallel_size", "2"}, {"training.global_batch_size", "16"}});
    const report::IterationReport r = simulate_scenario(v);
    const report::IterationReport interleaved = simulate_scenario(loop);
    for (std::size_t s = 0; s < 8; ++s) {
        EXPECT_EQ(r.stages[s].microbatches_in_flight, 17) << s;  // PP + 1 = 2p + 1 chunks
    }
    // Rank 0 holds the embedding and the output layer (tied: one copy, no embedding all-reduce); the
    // last rank holds neither, where the interleaved placement gives it the output layer's copy.
    EXPECT_GT(r.stages[0].static_bytes.value, r.stages[7].static_bytes.value);
    // Rank 0 has the final norm beside the interleaved first stage's weights, not a second embedding.
    EXPECT_GT(r.stages[0].static_bytes.value, interleaved.stages[0].static_bytes.value);
    EXPECT_LT(r.stages[0].static_bytes.value, interleaved.stages[0].static_bytes.value +
                                                  interleaved.stages[7].static_bytes.value -
                                                  interleaved.stages[6].static_bytes.value);
    EXPECT_EQ(r.stages[7].static_bytes.value, interleaved.stages[6].static_bytes.value);
    EXPECT_GT(r.iteration_time.value, 0.0);
}

TEST(DualPipeIteration, HoldsTwoStagesAndPPPlusOneChunks) {
    // 175B on p = 8: each rank holds stage r and stage 7 − r (12 layers each), 16 micro-batches (8 from
    // each end, the least DualPipe accepts).
    const config::Scenario two_way = testing::shipped_scenario(
        "korthikanti-175b", {{"parallelism.virtual_pipeline_model_parallel_size", "2"},
                             {"training.global_batch_size", "16"},
                             {"schedule", "dualpipe"}});
    const report::IterationReport r = simulate_scenario(two_way);
    const report::IterationReport ofob = simulate_scenario(gpt175b("1f1b"));
    for (std::size_t s = 0; s < 8; ++s) {
        EXPECT_EQ(r.stages[s].microbatches_in_flight, 9) << s;  // PP + 1, PP = 8 stages
        EXPECT_EQ(r.stages[s].layers, 24) << s;
    }
    // Parameters, gradients and optimizer state ×2 (README: "Parameter Per Device 2×"): a middle rank
    // holds two 1F1B middle stages; ranks 0 and 7 both hold the embedding, the final norm and (tied)
    // the output layer sharing the embedding's weights, so no embedding copy is all-reduced.
    EXPECT_NEAR(r.stages[3].static_bytes.value, 2.0 * ofob.stages[3].static_bytes.value, 1.0);
    EXPECT_EQ(r.stages[0].static_bytes.value, r.stages[7].static_bytes.value);
    EXPECT_GT(r.stages[0].static_bytes.value, r.stages[3].static_bytes.value);
    // The same bytes per chunk as a 1F1B micro-batch on a 12-layer stage: each rank's nine chunks.
    EXPECT_GT(r.iteration_time.value, 0.0);
}

TEST(DualPipeIteration, CliRejectsWhatTheReferenceAssertsWithExitTwo) {
    const std::string run =
        "run " + testing::source_path("scenarios/korthikanti-175b.json") +
        " --set parallelism.virtual_pipeline_model_parallel_size=2 --set schedule=dualpipe";
    const auto odd = testing::run_trainsim(run + " --set training.global_batch_size=17");
    EXPECT_EQ(odd.status, 2);
    EXPECT_NE(odd.err.find("schedule=\"dualpipe\" needs an even number, at least 2"), std::string::npos)
        << odd.err;
    const auto few = testing::run_trainsim(run + " --set training.global_batch_size=8");
    EXPECT_EQ(few.status, 2);
    const auto chunks =
        testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-175b.json") +
                              " --set schedule=dualpipe --set training.global_batch_size=16");
    EXPECT_EQ(chunks.status, 2);
    EXPECT_NE(chunks.err.find("virtual_pipeline_model_parallel_size=2, got 3"), std::string::npos)
        << chunks.err;
    const auto odd_p =
        testing::run_trainsim(run + " --set parallelism.pipeline_model_parallel_size=3"
                                    " --set model.num_layers=96 --set training.global_batch_size=48");
    EXPECT_EQ(odd_p.status, 2);
    EXPECT_NE(odd_p.err.find("requires an even parallelism.pipeline_model_parallel_size"), std::string::npos)
        << odd_p.err;
    const auto plan =
        testing::run_trainsim("plan --scenario " + testing::source_path("scenarios/korthikanti-175b.json") +
                              " --gpus 128 --max-micro-batch 1 -j 1 --schedules dualpipe");
    ASSERT_EQ(plan.status, 0) << plan.err;
    // (On 64 GPUs no DualPipe layout fits: its doubled weights and optimizer state.)
    EXPECT_NE(plan.out.find("t8 p16 d1 v2 b1 selective sp dualpipe"), std::string::npos) << plan.out;
}

TEST(DualPipeVIteration, CliRejectsTooFewMicrobatchesWithExitTwo) {
    const auto bad = testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-175b.json") +
                                           " --set parallelism.virtual_pipeline_model_parallel_size=2"
                                           " --set training.global_batch_size=8 --set schedule=dualpipev");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("schedule=\"dualpipev\" needs at least 2"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(ZeroBubbleCli, SweepAndPlanSearchTheSchedules) {
    const std::string file = ::testing::TempDir() + "zero_bubble_sweep.json";
    {
        std::ofstream out(file);
        out << R"({"description": "schedules", "base": ")"
            << testing::source_path("scenarios/korthikanti-175b.json")
            << R"(", "axes": {"parallelism.virtual_pipeline_model_parallel_size": [1],
                             "schedule": ["1f1b", "zb-h1", "zb-h2"]}})";
    }
    const auto sweep = testing::run_trainsim("sweep " + file + " -j 1");
    ASSERT_EQ(sweep.status, 0) << sweep.err;
    EXPECT_NE(sweep.out.find(",zb-h1,"), std::string::npos);
    EXPECT_NE(sweep.out.find(",zb-h2,"), std::string::npos);
    // The plan on GPT-22B's layer cut to 8 layers of 512 tokens on 8 GPUs, where a DualPipeV layout wins:
    // the CLI's schedule list is what this test is about (the planner's search of the schedules has its own
    // tests in plan_test.cc). 175B on 64 GPUs took 12 s of CPU under the sanitizers, this 1 s (the whole
    // test: 15.1 -> 2.6 s).
    const std::string small = ::testing::TempDir() + "zero_bubble_plan.json";
    std::ofstream(small) << R"({"model": {"preset": "gpt-22b", "num_layers": 8, "seq_length": 512},
        "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1},
        "training": {"micro_batch_size": 1, "global_batch_size": 16},
        "hardware": {"profile": "a100-80gb-selene"}})";
    const auto plan = testing::run_trainsim(
        "plan --scenario " + small + " --gpus 8 --max-micro-batch 1 -j 1 --schedules auto,zb-h1,dualpipev");
    ASSERT_EQ(plan.status, 0) << plan.err;
    EXPECT_NE(plan.out.find("dualpipev"), std::string::npos) << plan.out;
    const auto bad = testing::run_trainsim("plan --scenario " + small + " --gpus 8 --schedules zb-h3");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("--schedules: unknown schedule \"zb-h3\""), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace trainsim

namespace trainsim::schedule {
namespace {

TEST(ZbV, MatchesTheReferenceForP4M8) {
    // sail-sg/zero-bubble-pipeline-parallelism scheduler/zbv.py run for 4 ranks (8 stages in a V) and 8
    // micro-batches with T_F = T_B = T_W, free communication and its default memory limit; its backward
    // chunks renamed to their placement (its B chunk 0 is the V's second half, c1 here).
    EXPECT_EQ(steps_of(ScheduleKind::ZbV, {4, 2, 8}, 0),
              "F0.c0 F1.c0 F2.c0 F3.c0 F4.c0 F5.c0 F6.c0 F0.c1 B0.c1 W0.c1 F1.c1 B1.c1 W1.c1 F2.c1 B2.c1 "
              "W2.c1 F3.c1 B3.c1 W3.c1 F7.c0 B0.c0 W0.c0 F4.c1 B4.c1 W4.c1 B1.c0 W1.c0 F5.c1 B5.c1 W5.c1 "
              "B2.c0 W2.c0 F6.c1 B6.c1 W6.c1 B3.c0 W3.c0 F7.c1 B7.c1 B4.c0 W7.c1 B5.c0 W4.c0 B6.c0 W5.c0 "
              "B7.c0 W6.c0 W7.c0");
    EXPECT_EQ(steps_of(ScheduleKind::ZbV, {4, 2, 8}, 2),
              "F0.c0 F1.c0 F2.c0 F0.c1 F3.c0 F1.c1 F4.c0 F2.c1 B0.c1 W0.c1 F3.c1 B1.c1 W1.c1 F5.c0 B0.c0 "
              "W0.c0 F4.c1 B2.c1 W2.c1 F6.c0 B1.c0 W1.c0 F5.c1 B3.c1 W3.c1 F7.c0 B2.c0 W2.c0 F6.c1 B4.c1 "
              "W4.c1 B3.c0 W3.c0 F7.c1 B5.c1 B4.c0 B6.c1 B5.c0 B7.c1 B6.c0 W5.c1 B7.c0 W4.c0 W6.c1 W5.c0 "
              "W7.c1 W6.c0 W7.c0");
    EXPECT_EQ(steps_of(ScheduleKind::ZbV, {4, 2, 8}, 3),
              "F0.c0 F0.c1 F1.c0 F1.c1 F2.c0 F2.c1 F3.c0 F3.c1 B0.c1 W0.c1 F4.c0 B0.c0 W0.c0 F4.c1 B1.c1 "
              "W1.c1 F5.c0 B1.c0 W1.c0 F5.c1 B2.c1 W2.c1 F6.c0 B2.c0 W2.c0 F6.c1 B3.c1 W3.c1 F7.c0 B3.c0 "
              "W3.c0 F7.c1 B4.c1 B4.c0 B5.c1 B5.c0 B6.c1 B6.c0 B7.c1 B7.c0 W4.c1 W4.c0 W5.c1 W5.c0 W6.c1 "
              "W6.c0 W7.c1 W7.c0");
    const auto s = make_schedule(ScheduleKind::ZbV, {4, 2, 8});
    EXPECT_EQ(s->stage_of(0, 1, 4), 7);  // the V: rank 0 holds the first and the last stage
    EXPECT_EQ(s->rank_of(4, 1, 4), 3);
}

TEST(ZbV, EveryRankRunsEachPassOnceAndPeaksAtTheOneFOneBActivation) {
    // The paper's ZB-V keeps 1F1B's peak, p micro-batches of a full stage: 2p chunks of half a stage.
    for (std::int64_t p = 1; p <= 8; ++p) {
        for (const std::int64_t m : {std::int64_t{1}, p, 2 * p, 2 * p + 3, 4 * p}) {
            const auto sched = make_schedule(ScheduleKind::ZbV, {p, 2, m});
            std::int64_t peak = 0;
            for (std::int64_t r = 0; r < p; ++r) {
                const auto steps = sched->steps(r);
                std::set<std::tuple<int, int, int>> seen;
                for (const Step& step : steps) {
                    seen.insert({static_cast<int>(step.pass), step.microbatch, step.chunk});
                }
                EXPECT_EQ(steps.size(), 6u * static_cast<std::size_t>(m)) << p << " " << m;
                EXPECT_EQ(seen.size(), steps.size()) << p << " " << m;
                EXPECT_LE(held(*sched, r), 2 * p) << p << " " << m << " " << r;
                peak = std::max(peak, held(*sched, r));
            }
            EXPECT_EQ(peak, std::min(2 * p, 2 * m)) << p << " " << m;
        }
    }
}

TEST(ZbV, RejectsOtherThanTwoChunks) {
    try {
        (void)make_schedule(ScheduleKind::ZbV, {4, 1, 8});
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(
                      "schedule=zb-v needs parallelism.virtual_pipeline_model_parallel_size=2"),
                  std::string::npos);
    }
}

TEST(BubbleOracle, ZbVIsZeroBubbleAtEqualPassTimes) {
    // ZB-V with T_F = T_B = T_W and free communication (the paper's setting for it): no rank idles
    // between its own first and last pass; the iteration is 2m(F + B + W) plus the warm-up offset of
    // the last rank's first forward, p − 1 chunk forwards.
    for (std::int64_t p = 1; p <= 8; ++p) {
        for (const std::int64_t m : {2 * p, 3 * p, 4 * p, 4 * p + 1}) {
            const PassTimes t{100_ns, 100_ns, 100_ns};
            const Bubbles b = run_schedule(ScheduleKind::ZbV, {p, 2, m}, t);
            EXPECT_EQ(b.span_idle, 0_ns) << p << " " << m;
            EXPECT_EQ(b.makespan - 2 * m * (t.f + t.b + t.w), (p - 1) * t.f) << p << " " << m;
        }
    }
}

}  // namespace
}  // namespace trainsim::schedule

namespace trainsim {
namespace {

TEST(ZbVIteration, RunsInAVAndHoldsAtMostTwoPChunks) {
    // 175B on p = 8, two chunks per rank in a V, 16 micro-batches; rank 0 holds 2p = 16 chunks at its
    // peak (ZB-V's 1F1B-sized peak), under every recompute policy.
    for (const char* recompute : {"selective", "full"}) {
        const config::Scenario v = testing::shipped_scenario(
            "korthikanti-175b", {{"parallelism.virtual_pipeline_model_parallel_size", "2"},
                                 {"training.global_batch_size", "16"},
                                 {"training.recompute_granularity", recompute},
                                 {"schedule", "zb-v"}});
        const report::IterationReport r = simulate_scenario(v);
        EXPECT_EQ(r.stages[0].microbatches_in_flight, 16) << recompute;
        for (std::size_t s = 0; s < 8; ++s) {
            EXPECT_LE(r.stages[s].microbatches_in_flight, 16) << recompute << " " << s;
        }
        EXPECT_GT(r.stages[0].static_bytes.value, r.stages[7].static_bytes.value);  // embedding and head
        EXPECT_GT(r.iteration_time.value, 0.0);
    }
}

TEST(ZbVIteration, CliRejectsOneChunkWithExitTwo) {
    const auto bad = testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-175b.json") +
                                           " --set schedule=zb-v");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("schedule=\"zb-v\" requires parallelism.virtual_pipeline_model_parallel_size=2"),
              std::string::npos)
        << bad.err;
}

}  // namespace
}  // namespace trainsim
