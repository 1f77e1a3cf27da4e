// Pipeline schedules: Megatron-LM's exact orderings (papers.md §1.11 worked example), invalid
// combinations, and the bubble-fraction formulas as an oracle on an engine run of the schedule.
#include <gtest/gtest.h>

#include <map>

#include "sim/core/input_error.h"
#include "sim/engine/simulator.h"
#include "sim/schedule/interleaved_schedule.h"
#include "sim/schedule/schedule.h"

namespace trainsim::schedule {
namespace {

using config::ScheduleKind;

std::string steps_of(ScheduleKind kind, PipelineShape shape, std::int64_t rank) {
    return to_string(make_schedule(kind, shape)->steps(rank));
}

TEST(OneFOneB, MatchesMegatronOrderForP4M8) {
    // papers.md §1.11: "non-interleaved rank0 W=3: F0 F1 F2 | F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 | B5 B6 B7".
    EXPECT_EQ(
        steps_of(ScheduleKind::OneFOneB, {4, 1, 8}, 0),
        "F0.c0 F1.c0 F2.c0 F3.c0 B0.c0 F4.c0 B1.c0 F5.c0 B2.c0 F6.c0 B3.c0 F7.c0 B4.c0 B5.c0 B6.c0 B7.c0");
    EXPECT_EQ(
        steps_of(ScheduleKind::OneFOneB, {4, 1, 8}, 3),
        "F0.c0 B0.c0 F1.c0 B1.c0 F2.c0 B2.c0 F3.c0 B3.c0 F4.c0 B4.c0 F5.c0 B5.c0 F6.c0 B6.c0 F7.c0 B7.c0");
}

TEST(OneFOneB, FewerMicrobatchesThanStagesIsAllWarmup) {
    EXPECT_EQ(steps_of(ScheduleKind::OneFOneB, {4, 1, 2}, 0), "F0.c0 F1.c0 B0.c0 B1.c0");
}

TEST(Interleaved, MatchesMegatronOrderForP4V2M8) {
    // papers.md §1.11, the worked p = 4, v = 2, m = 8 example (warm-up | steady | cool-down).
    EXPECT_EQ(steps_of(ScheduleKind::Interleaved, {4, 2, 8}, 0),
              "F0.c0 F1.c0 F2.c0 F3.c0 F0.c1 F1.c1 F2.c1 F3.c1 F4.c0 F5.c0 "
              "F6.c0 B0.c1 F7.c0 B1.c1 F4.c1 B2.c1 F5.c1 B3.c1 F6.c1 B0.c0 F7.c1 B1.c0 "
              "B2.c0 B3.c0 B4.c1 B5.c1 B6.c1 B7.c1 B4.c0 B5.c0 B6.c0 B7.c0");
    EXPECT_EQ(
        steps_of(ScheduleKind::Interleaved, {4, 2, 8}, 3),
        "F0.c0 F1.c0 F2.c0 F3.c0 "
        "F0.c1 B0.c1 F1.c1 B1.c1 F2.c1 B2.c1 F3.c1 B3.c1 F4.c0 B0.c0 F5.c0 B1.c0 F6.c0 B2.c0 F7.c0 B3.c0 "
        "F4.c1 B4.c1 F5.c1 B5.c1 F6.c1 B6.c1 F7.c1 B7.c1 "
        "B4.c0 B5.c0 B6.c0 B7.c0");
}

TEST(Interleaved, WarmupCountsFollowMegatronFormula) {
    const InterleavedSchedule s({4, 2, 8}, 4);
    EXPECT_EQ(s.warmup(0), 10);  // (p − r − 1)·2 + (v − 1)·N
    EXPECT_EQ(s.warmup(3), 4);
    const InterleavedSchedule all({4, 2, 4}, 4);
    EXPECT_EQ(all.warmup(0), 8);  // min(·, m·v): everything is warm-up
}

TEST(Interleaved, EveryRankRunsEachPassOnce) {
    for (std::int64_t rank = 0; rank < 4; ++rank) {
        const auto steps = make_schedule(ScheduleKind::Interleaved, {4, 3, 12})->steps(rank);
        std::map<std::tuple<int, int, int>, int> seen;
        for (const Step& s : steps) {
            ++seen[{static_cast<int>(s.pass), s.microbatch, s.chunk}];
        }
        EXPECT_EQ(seen.size(), 2u * 12u * 3u);
        for (const auto& [key, count] : seen) {
            EXPECT_EQ(count, 1);
        }
    }
}

TEST(MakeSchedule, RejectsCombinationsMegatronForbids) {
    auto message = [](ScheduleKind k, PipelineShape s) {
        try {
            (void)make_schedule(k, s);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message(ScheduleKind::Interleaved, {4, 2, 6})
                  .find("multiple of parallelism.pipeline_model_parallel_size=4"),
              std::string::npos);
    EXPECT_NE(message(ScheduleKind::Interleaved, {1, 2, 8}).find("pipeline_model_parallel_size > 1"),
              std::string::npos);
    EXPECT_NE(message(ScheduleKind::Interleaved, {4, 1, 8}).find("virtual_pipeline_model_parallel_size > 1"),
              std::string::npos);
    EXPECT_NE(message(ScheduleKind::OneFOneB, {4, 2, 8}).find("needs schedule interleaved"),
              std::string::npos);
    EXPECT_EQ(make_schedule(ScheduleKind::Auto, {4, 2, 8})->name(), "interleaved");
    EXPECT_EQ(make_schedule(ScheduleKind::Auto, {4, 1, 8})->name(), "1f1b");
}

// Runs a schedule on the engine with forward time tf and backward time tb per stage (split evenly
// over chunks), free communication, and returns the makespan.
SimTime run_schedule(ScheduleKind kind, PipelineShape shape, SimTime tf, SimTime tb) {
    using namespace engine;
    Program prog;
    const auto sched = make_schedule(kind, shape);
    const std::int64_t p = shape.stages;
    const std::int64_t vstages = p * shape.chunks;
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
    for (std::int64_t r = 0; r < p; ++r) {
        const StreamId compute = prog.add_stream(engine::GpuId{static_cast<std::int32_t>(r)}, "compute");
        const StreamId send[2] = {prog.add_stream(engine::GpuId{static_cast<std::int32_t>(r)}, "sf"),
                                  prog.add_stream(engine::GpuId{static_cast<std::int32_t>(r)}, "sb")};
        const StreamId recv[2] = {prog.add_stream(engine::GpuId{static_cast<std::int32_t>(r)}, "rf"),
                                  prog.add_stream(engine::GpuId{static_cast<std::int32_t>(r)}, "rb")};
        TaskId last = kNoTask;
        for (const Step& s : sched->steps(r)) {
            const std::int64_t vs = s.chunk * p + r;
            const bool fwd = s.pass == Pass::Forward;
            const int dir = fwd ? 0 : 1;
            const std::int64_t from = fwd ? vs - 1 : vs + 1;
            const std::int64_t to = fwd ? vs + 1 : vs - 1;
            std::vector<TaskId> deps;
            if (from >= 0 && from < vstages) {
                std::vector<TaskId> posted;
                if (last != kNoTask) {
                    posted.push_back(last);
                }
                deps.push_back(
                    prog.add_rendezvous_task(recv[dir], link(dir, from % p, r, false), "recv", posted));
            }
            last = prog.add_task(compute, (fwd ? tf : tb) / shape.chunks, "step", deps);
            if (to >= 0 && to < vstages) {
                prog.add_rendezvous_task(send[dir], link(dir, r, to % p, true), "send",
                                         std::vector<TaskId>{last});
            }
        }
    }
    return simulate(prog).makespan;
}

TEST(BubbleOracle, OneFOneBMakespanIsMPlusPMinusOneSlots) {
    // Narayanan Eq. 1 with free communication: (m + p − 1)·(tf + tb); bubble fraction (p − 1)/m.
    for (const auto& [p, m] :
         std::vector<std::pair<std::int64_t, std::int64_t>>{{2, 4}, {4, 8}, {8, 16}, {4, 3}}) {
        EXPECT_EQ(run_schedule(ScheduleKind::OneFOneB, {p, 1, m}, 100_ns, 200_ns), (m + p - 1) * 300_ns)
            << p << " " << m;
        EXPECT_EQ(run_schedule(ScheduleKind::GPipe, {p, 1, m}, 100_ns, 200_ns), (m + p - 1) * 300_ns)
            << p << " " << m;
    }
}

TEST(BubbleOracle, InterleavedBubbleIsDividedByV) {
    // Narayanan §2.2: bubble fraction (p − 1)/(m·v) for the interleaved schedule, with tf = tb / 2.
    for (const auto& [p, v, m] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
             {4, 2, 8}, {4, 4, 16}, {8, 3, 24}, {2, 2, 8}, {2, 3, 6}}) {
        const SimTime ideal = m * 300 * 6_ns;  // 6 divides every chunk split used here
        const SimTime makespan = run_schedule(ScheduleKind::Interleaved, {p, v, m}, 600_ns, 1200_ns);
        const double bubble = static_cast<double>((makespan - ideal).ns()) / static_cast<double>(ideal.ns());
        EXPECT_NEAR(bubble, static_cast<double>(p - 1) / static_cast<double>(m * v), 1e-9)
            << "p=" << p << " v=" << v << " m=" << m;
    }
}

}  // namespace
}  // namespace trainsim::schedule
