// Exact-time tests of the discrete-event engine on small programs checked by hand.
#include <gtest/gtest.h>

#include <functional>
#include <queue>
#include <random>
#include <utility>
#include <vector>

#include "sim/engine/event_queue.h"
#include "sim/engine/simulator.h"

namespace trainsim::engine {
namespace {

TEST(EventQueue, OrdersByTimeThenInsertion) {
    EventQueue q;
    q.push(20_ns, 1);
    q.push(10_ns, 2);
    q.push(20_ns, 3);
    q.push(10_ns, 4);
    std::vector<std::int32_t> order;
    while (!q.empty()) {
        order.push_back(q.pop().task);
    }
    EXPECT_EQ(order, (std::vector<std::int32_t>{2, 4, 1, 3}));
}

// Runs of equal times interleaved with other times, pops between pushes, and pushes at the time being
// popped: the order is always (time, insertion), as a plain heap of (time, sequence) gives it.
TEST(EventQueue, MatchesAHeapOfTimeAndSequence) {
    std::mt19937_64 random(7);
    EventQueue q;
    std::priority_queue<std::pair<SimTime, std::int32_t>, std::vector<std::pair<SimTime, std::int32_t>>,
                        std::greater<>>
        reference;  // (time, insertion index) pairs
    std::int32_t next = 0;
    SimTime now{};
    for (int step = 0; step < 20000; ++step) {
        if (random() % 3 != 0 || q.empty()) {
            const SimTime time = now + static_cast<SimTime>(random() % 4) * 10;  // few distinct times
            const int repeat = 1 + static_cast<int>(random() % 3);
            for (int k = 0; k < repeat; ++k) {
                q.push(time, next);
                reference.push({time, next});
                ++next;
            }
        } else {
            const Event e = q.pop();
            ASSERT_EQ(e.time, reference.top().first);
            ASSERT_EQ(e.task, reference.top().second);
            ASSERT_EQ(e.sequence, static_cast<std::uint64_t>(e.task));
            reference.pop();
            now = e.time;
        }
        ASSERT_EQ(q.size(), reference.size());
    }
}

TEST(Simulator, StreamRunsTasksInProgramOrder) {
    Program p;
    const StreamId s = p.add_stream(GpuId{0}, "compute");
    const TaskId a = p.add_task(s, 5_ns, "a");
    const TaskId b = p.add_task(s, 7_ns, "b");
    const TaskId c = p.add_task(s, 0_ns, "c");
    const RunResult r = simulate(p);
    EXPECT_EQ(r.timings[a.index()].start, 0_ns);
    EXPECT_EQ(r.timings[a.index()].end, 5_ns);
    EXPECT_EQ(r.timings[b.index()].start, 5_ns);
    EXPECT_EQ(r.timings[b.index()].end, 12_ns);
    EXPECT_EQ(r.timings[c.index()].start, 12_ns);
    EXPECT_EQ(r.timings[c.index()].end, 12_ns);
    EXPECT_EQ(r.makespan, 12_ns);
    EXPECT_EQ(r.events, 3u);
}

TEST(Simulator, StreamsOverlapAndJoinThroughDependencies) {
    // compute: g1(10) g2(10) g3 waits for the async collective c (15) issued after g1.
    Program p;
    const StreamId compute = p.add_stream(GpuId{0}, "compute");
    const StreamId comm = p.add_stream(GpuId{0}, "comm");
    const TaskId g1 = p.add_task(compute, 10_ns, "g1");
    const TaskId c = p.add_task(comm, 15_ns, "c", std::vector<TaskId>{g1});
    const TaskId g2 = p.add_task(compute, 10_ns, "g2");
    const TaskId g3 = p.add_task(compute, 1_ns, "g3", std::vector<TaskId>{c});
    const RunResult r = simulate(p);
    EXPECT_EQ(r.timings[c.index()].start, 10_ns);
    EXPECT_EQ(r.timings[c.index()].end, 25_ns);
    EXPECT_EQ(r.timings[g2.index()].start, 10_ns);
    EXPECT_EQ(r.timings[g2.index()].end, 20_ns);
    EXPECT_EQ(r.timings[g3.index()].start, 25_ns);  // 5 ns exposed behind the collective
    EXPECT_EQ(r.makespan, 26_ns);
}

TEST(Simulator, CollectiveStartsWhenLastMemberArrives) {
    Program p;
    const StreamId s0 = p.add_stream(GpuId{0}, "compute");
    const StreamId s1 = p.add_stream(GpuId{1}, "compute");
    const StreamId s2 = p.add_stream(GpuId{2}, "compute");
    const RendezvousId ar = p.add_rendezvous(3, 100_ns, "allreduce");
    p.add_task(s0, 10_ns, "w0");
    p.add_task(s1, 30_ns, "w1");
    p.add_task(s2, 20_ns, "w2");
    const TaskId m0 = p.add_rendezvous_task(s0, ar, "ar0");
    const TaskId m1 = p.add_rendezvous_task(s1, ar, "ar1");
    const TaskId m2 = p.add_rendezvous_task(s2, ar, "ar2");
    const TaskId after = p.add_task(s0, 1_ns, "after");
    const RunResult r = simulate(p);
    for (const TaskId m : {m0, m1, m2}) {
        EXPECT_EQ(r.timings[m.index()].start, 30_ns);
        EXPECT_EQ(r.timings[m.index()].end, 130_ns);
    }
    EXPECT_EQ(r.timings[after.index()].start, 130_ns);
    EXPECT_EQ(r.makespan, 131_ns);
}

TEST(Simulator, SendMatchedToReceive) {
    // GPU 0 computes 40 then sends (25); GPU 1 posts its receive at 10 and computes on arrival.
    Program p;
    const StreamId c0 = p.add_stream(GpuId{0}, "compute");
    const StreamId tx = p.add_stream(GpuId{0}, "send");
    const StreamId c1 = p.add_stream(GpuId{1}, "compute");
    const StreamId rx = p.add_stream(GpuId{1}, "recv");
    const RendezvousId link = p.add_rendezvous(2, 25_ns, "p2p 0->1");
    const TaskId f0 = p.add_task(c0, 40_ns, "F0");
    const TaskId send = p.add_rendezvous_task(tx, link, "send", std::vector<TaskId>{f0});
    const TaskId pre = p.add_task(c1, 10_ns, "other");
    const TaskId recv = p.add_rendezvous_task(rx, link, "recv", std::vector<TaskId>{pre});
    const TaskId f1 = p.add_task(c1, 40_ns, "F1", std::vector<TaskId>{recv});
    const RunResult r = simulate(p);
    EXPECT_EQ(r.timings[send.index()].start, 40_ns);
    EXPECT_EQ(r.timings[recv.index()].start, 40_ns);
    EXPECT_EQ(r.timings[recv.index()].end, 65_ns);
    EXPECT_EQ(r.timings[f1.index()].start, 65_ns);
    EXPECT_EQ(r.makespan, 105_ns);
}

TEST(Simulator, RunsAreBitForBitReproducible) {
    auto build = [] {
        Program p;
        std::vector<StreamId> s;
        for (int g = 0; g < 4; ++g) {
            s.push_back(p.add_stream(GpuId{g}, "compute"));
        }
        for (int k = 0; k < 50; ++k) {
            const RendezvousId r = p.add_rendezvous(4, SimTime{k % 3}, "c" + std::to_string(k));
            for (int g = 0; g < 4; ++g) {
                p.add_task(s[static_cast<std::size_t>(g)], SimTime{(g * 7 + k) % 5}, "w");
                p.add_rendezvous_task(s[static_cast<std::size_t>(g)], r, "m");
            }
        }
        return p;
    };
    const RunResult a = simulate(build());
    const RunResult b = simulate(build());
    ASSERT_EQ(a.timings.size(), b.timings.size());
    for (std::size_t i = 0; i < a.timings.size(); ++i) {
        EXPECT_EQ(a.timings[i].start, b.timings[i].start);
        EXPECT_EQ(a.timings[i].end, b.timings[i].end);
    }
    EXPECT_EQ(a.makespan, b.makespan);
}

TEST(Simulator, DeadlockNamesTheWaitingGpusAndWhatTheyWaitFor) {
    // GPU 0 joins collective A then B; GPU 1 joins B then A: neither can start.
    Program p;
    const StreamId s0 = p.add_stream(GpuId{0}, "tp_comm");
    const StreamId s1 = p.add_stream(GpuId{1}, "tp_comm");
    const RendezvousId a = p.add_rendezvous(2, 5_ns, "allreduce A");
    const RendezvousId b = p.add_rendezvous(2, 5_ns, "allreduce B");
    p.add_rendezvous_task(s0, a, "A on 0");
    p.add_rendezvous_task(s0, b, "B on 0");
    p.add_rendezvous_task(s1, b, "B on 1");
    p.add_rendezvous_task(s1, a, "A on 1");
    try {
        (void)simulate(p);
        FAIL() << "expected a deadlock";
    } catch (const SimulationError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("deadlock at t=0 ns"), std::string::npos) << m;
        EXPECT_NE(m.find("gpu 0 stream tp_comm waits at 'A on 0' for 1 of 2 members of 'allreduce A'"),
                  std::string::npos)
            << m;
        EXPECT_NE(m.find("gpu 1 stream tp_comm waits at 'B on 1' for 1 of 2 members of 'allreduce B'"),
                  std::string::npos)
            << m;
    }
}

TEST(Simulator, ARendezvousWithAMissingMemberIsRejectedBeforeRunning) {
    Program p;
    const StreamId s0 = p.add_stream(GpuId{0}, "recv");
    const StreamId s1 = p.add_stream(GpuId{0}, "compute");
    const RendezvousId link = p.add_rendezvous(2, 5_ns, "p2p from stage 1");  // the sender never comes
    const TaskId recv = p.add_rendezvous_task(s0, link, "recv F0");
    p.add_task(s1, 3_ns, "F0", std::vector<TaskId>{recv});
    try {
        (void)simulate(p);
        FAIL() << "expected the missing member to be reported";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("'p2p from stage 1' expects 2 members but 1 tasks join it"),
                  std::string::npos)
            << e.what();
    }
}

TEST(Simulator, EventBudgetStopsARunawayProgram) {
    Program p;
    const StreamId s = p.add_stream(GpuId{0}, "compute");
    for (int i = 0; i < 10; ++i) {
        p.add_task(s, 1_ns, "t" + std::to_string(i));
    }
    RunOptions options;
    options.max_events = 4;
    EXPECT_THROW((void)simulate(p, options), SimulationError);
}

// A rendezvous's members end together as one queued event (simulator.cc): they must still end in
// arrival order, before a zero-duration task one of them releases, each counting as an event.
TEST(Simulator, RendezvousMembersEndInArrivalOrderAndEachCountsAsAnEvent) {
    Program p;
    const RendezvousId rv = p.add_rendezvous(3, 5_ns, "all-reduce");
    std::vector<TaskId> members;
    std::vector<TaskId> after;
    for (int g = 0; g < 3; ++g) {
        const StreamId s = p.add_stream(GpuId{g}, "compute");
        p.add_task(s, SimTime{10 - 3 * g}, "before");  // arrivals at 10, 7, 4: GPU 2 first, GPU 0 last
        members.push_back(p.add_rendezvous_task(s, rv, "member"));
        after.push_back(p.add_task(s, 0_ns, "after"));
    }
    // A task on a fourth stream released by GPU 0's member, also zero-duration.
    const StreamId other = p.add_stream(GpuId{3}, "other");
    const TaskId released = p.add_task(other, 0_ns, "released", std::vector<TaskId>{members[0]});
    const RunResult r = simulate(p);
    for (int g = 0; g < 3; ++g) {
        EXPECT_EQ(r.timings[members[static_cast<std::size_t>(g)].index()].start, 10_ns);
        EXPECT_EQ(r.timings[members[static_cast<std::size_t>(g)].index()].end, 15_ns);
        EXPECT_EQ(r.timings[after[static_cast<std::size_t>(g)].index()].end, 15_ns);
    }
    EXPECT_EQ(r.timings[released.index()].end, 15_ns);
    EXPECT_EQ(r.events, 10u);  // 3 before, 3 members, 3 after, 1 released
    // The budget counts members one by one: 3 befores and 1 member, then it stops inside the rendezvous.
    RunOptions options;
    options.max_events = 4;
    EXPECT_THROW((void)simulate(p, options), SimulationError);
    options.max_events = 10;
    EXPECT_EQ(simulate(p, options).events, 10u);
}

TEST(Program, RejectsForwardDependenciesAndNegativeDurations) {
    Program p;
    const StreamId s = p.add_stream(GpuId{0}, "compute");
    EXPECT_THROW(p.add_task(s, -1_ns, "neg"), std::invalid_argument);
    EXPECT_THROW(p.add_task(s, 1_ns, "fwd", std::vector<TaskId>{TaskId{5}}), std::invalid_argument);
    EXPECT_THROW(p.add_rendezvous(0, 1_ns, "empty"), std::invalid_argument);
}

}  // namespace
}  // namespace trainsim::engine

namespace trainsim::engine {
namespace {

TEST(BackgroundStream, FillsTheForegroundsIdleTime) {
    // compute: A(10), then B waits for the collective C (10..40). R (15) on the background stream
    // runs in the window 10..25 and costs the critical path nothing.
    Program p;
    const StreamId compute = p.add_stream(GpuId{0}, "compute");
    const StreamId comm = p.add_stream(GpuId{0}, "comm");
    const StreamId recompute = p.add_background_stream(compute, "recompute");
    const TaskId a = p.add_task(compute, 10_ns, "A");
    const TaskId c = p.add_task(comm, 30_ns, "C", std::vector<TaskId>{a});
    const TaskId r = p.add_task(recompute, 15_ns, "R");
    const TaskId b = p.add_task(compute, 10_ns, "B", std::vector<TaskId>{c});
    const RunResult run = simulate(p);
    EXPECT_EQ(run.timings[r.index()].start, 10_ns);
    EXPECT_EQ(run.timings[r.index()].end, 25_ns);
    EXPECT_EQ(run.timings[b.index()].start, 40_ns);
    EXPECT_EQ(run.makespan, 50_ns);
}

TEST(BackgroundStream, IsPreemptedAndResumes) {
    // The window is 10..22; R (20) runs 12 of its 20 ns there, pauses while B runs 22..32, and finishes
    // its last 8 ns at 40.
    Program p;
    const StreamId compute = p.add_stream(GpuId{0}, "compute");
    const StreamId comm = p.add_stream(GpuId{0}, "comm");
    const StreamId recompute = p.add_background_stream(compute, "recompute");
    const TaskId a = p.add_task(compute, 10_ns, "A");
    const TaskId c = p.add_task(comm, 12_ns, "C", std::vector<TaskId>{a});
    const TaskId r = p.add_task(recompute, 20_ns, "R");
    const TaskId b = p.add_task(compute, 10_ns, "B", std::vector<TaskId>{c});
    const RunResult run = simulate(p);
    EXPECT_EQ(run.timings[b.index()].start, 22_ns);
    EXPECT_EQ(run.timings[b.index()].end, 32_ns);
    EXPECT_EQ(run.timings[r.index()].start, 10_ns);
    EXPECT_EQ(run.timings[r.index()].end, 40_ns);
    EXPECT_EQ(run.makespan, 40_ns);
}

TEST(BackgroundStream, WhatMissesTheWindowRunsOnDemand) {
    // D needs R's result: R (25) gets the 10 ns window while C runs, then D's wait is R's last 15 ns.
    Program p;
    const StreamId compute = p.add_stream(GpuId{0}, "compute");
    const StreamId comm = p.add_stream(GpuId{0}, "comm");
    const StreamId recompute = p.add_background_stream(compute, "recompute");
    const TaskId a = p.add_task(compute, 10_ns, "A");
    const TaskId c = p.add_task(comm, 10_ns, "C", std::vector<TaskId>{a});
    const TaskId r = p.add_task(recompute, 25_ns, "R", std::vector<TaskId>{a});
    const TaskId d = p.add_task(compute, 5_ns, "D", std::vector<TaskId>{c, r});
    const RunResult run = simulate(p);
    EXPECT_EQ(run.timings[r.index()].start, 10_ns);
    EXPECT_EQ(run.timings[r.index()].end, 35_ns);
    EXPECT_EQ(run.timings[d.index()].start, 35_ns);
    EXPECT_EQ(run.makespan, 40_ns);
    EXPECT_THROW(p.add_background_stream(compute, "second"), std::invalid_argument);
}

}  // namespace
}  // namespace trainsim::engine
