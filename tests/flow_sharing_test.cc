// Exact-time tests of flows sharing resources in the engine (max-min fairness, DESIGN.md §8 "Network").
#include <gtest/gtest.h>

#include <stdexcept>
#include <tuple>
#include <vector>

#include "sim/engine/max_min_sharing.h"
#include "sim/engine/simulator.h"

namespace trainsim::engine {
namespace {

TEST(MaxMinSharing, TwoFlowsOnOneLinkEachGetHalf) {
    const std::vector<double> capacity{100.0};
    const std::vector<FlowUse> uses{{ResourceId{0}, 1.0}};
    const std::vector<SharedFlow> flows{{1000.0, uses}, {1000.0, uses}};
    EXPECT_EQ(max_min_rates(flows, capacity), (std::vector<double>{50.0, 50.0}));
}

// The textbook case: A crosses links 0 and 1, B only 0, C only 1; link 0 has 10, link 1 has 4.
// Link 1 saturates first (A = C = 2), then B takes the rest of link 0 (8).
TEST(MaxMinSharing, ProgressiveFillingFixesTheBottleneckFirst) {
    const std::vector<double> capacity{10.0, 4.0};
    const std::vector<FlowUse> a{{ResourceId{0}, 1.0}, {ResourceId{1}, 1.0}}, b{{ResourceId{0}, 1.0}},
        c{{ResourceId{1}, 1.0}};
    const std::vector<SharedFlow> flows{{100.0, a}, {100.0, b}, {100.0, c}};
    EXPECT_EQ(max_min_rates(flows, capacity), (std::vector<double>{2.0, 8.0, 2.0}));
}

// A flow's own cap and a weight: a ring crossing a link twice loads it twice per unit of progress.
TEST(MaxMinSharing, CapsAndWeights) {
    const std::vector<double> capacity{12.0};
    const std::vector<FlowUse> twice{{ResourceId{0}, 2.0}}, once{{ResourceId{0}, 1.0}};
    const std::vector<SharedFlow> flows{{100.0, twice}, {1.0, once}};
    // The capped flow stops at 1; the ring gets (12 - 1) / 2.
    EXPECT_EQ(max_min_rates(flows, capacity), (std::vector<double>{5.5, 1.0}));
}

// The engine shares classes of resources (resource_classes.h) with the same solver: written over class
// uses, the textbook case above gives the same rates.
TEST(MaxMinSharing, ClassUsesShareAsResourceUsesDo) {
    const std::vector<double> capacity{10.0, 4.0};
    const std::vector<ResourceClassUse> a{{ResourceClassId{0}, 1.0}, {ResourceClassId{1}, 1.0}},
        b{{ResourceClassId{0}, 1.0}}, c{{ResourceClassId{1}, 1.0}};
    const std::vector<SharedClassFlow> flows{{100.0, a}, {100.0, b}, {100.0, c}};
    EXPECT_EQ(max_min_rates(flows, capacity), (std::vector<double>{2.0, 8.0, 2.0}));
    const std::vector<ResourceClassUse> unknown{{ResourceClassId{2}, 1.0}};
    const std::vector<SharedClassFlow> bad{{100.0, a}, {100.0, unknown}};
    EXPECT_THROW(std::ignore = max_min_rates(bad, capacity), std::invalid_argument);
}

// Two transfers of 1000 bytes over one 1 GB/s link: alone each would take 1 µs; together each gets
// 0.5 GB/s, so both end at 2 µs, plus the flow's 100 ns latency.
TEST(FlowEngine, TwoFlowsOnOneLinkEndTogetherAtTwiceTheTime) {
    Program p;
    const ResourceId link = p.add_resource(1e9);
    const FlowSpecId spec = p.add_flow_spec(FlowSpec{1000.0, 1e9, 100_ns, {{link, 1.0}}});
    const StreamId s0 = p.add_stream(GpuId{0}, "a");
    const StreamId s1 = p.add_stream(GpuId{1}, "b");
    const TaskId t0 = p.add_rendezvous_task(s0, p.add_flow_rendezvous(1, spec, "x"), "x");
    const TaskId t1 = p.add_rendezvous_task(s1, p.add_flow_rendezvous(1, spec, "y"), "y");
    const RunResult r = simulate(p);
    EXPECT_EQ(r.timings[t0.index()].end, 2100_ns);
    EXPECT_EQ(r.timings[t1.index()].end, 2100_ns);
    ASSERT_EQ(r.resource_carried.size(), 1U);
    EXPECT_DOUBLE_EQ(r.resource_carried[0], 2000.0);
}

// A flow that starts while another runs: the first has moved 500 of 1000 bytes alone at 1 GB/s by
// 500 ns; both then share (0.5 GB/s each) until the first ends at 1500 ns; the second, with 500 left,
// finishes alone at 2000 ns.
TEST(FlowEngine, ASecondFlowSlowsTheFirstOnlyWhileBothRun) {
    Program p;
    const ResourceId link = p.add_resource(1e9);
    const FlowSpecId spec = p.add_flow_spec(FlowSpec{1000.0, 1e9, SimTime{}, {{link, 1.0}}});
    const StreamId s0 = p.add_stream(GpuId{0}, "a");
    const StreamId s1 = p.add_stream(GpuId{1}, "b");
    const TaskId first = p.add_rendezvous_task(s0, p.add_flow_rendezvous(1, spec, "first"), "first");
    const TaskId delay = p.add_task(s1, 500_ns, "compute");
    const std::vector<TaskId> after{delay};
    const TaskId second =
        p.add_rendezvous_task(s1, p.add_flow_rendezvous(1, spec, "second"), "second", after);
    const RunResult r = simulate(p);
    EXPECT_EQ(r.timings[first.index()].end, 1500_ns);
    EXPECT_EQ(r.timings[second.index()].start, 500_ns);
    EXPECT_EQ(r.timings[second.index()].end, 2000_ns);
}

// A flow rendezvous starts when its last member arrives, and all members end together.
TEST(FlowEngine, MembersStartWithTheLastArrivalAndEndTogether) {
    Program p;
    const ResourceId link = p.add_resource(2e9);
    const FlowSpecId spec = p.add_flow_spec(FlowSpec{4000.0, 4e9, 10_ns, {{link, 1.0}}});
    const RendezvousId rv = p.add_flow_rendezvous(2, spec, "ar");
    const StreamId s0 = p.add_stream(GpuId{0}, "a");
    const StreamId s1 = p.add_stream(GpuId{1}, "b");
    const TaskId early = p.add_rendezvous_task(s0, rv, "m0");
    const TaskId work = p.add_task(s1, 300_ns, "compute");
    const std::vector<TaskId> after{work};
    const TaskId late = p.add_rendezvous_task(s1, rv, "m1", after);
    const RunResult r = simulate(p);
    // Capped by the link (2 GB/s, below the flow's own 4 GB/s): 4000 bytes in 2 µs, then 10 ns.
    EXPECT_EQ(r.timings[early.index()].start, 300_ns);
    EXPECT_EQ(r.timings[late.index()].start, 300_ns);
    EXPECT_EQ(r.timings[early.index()].end, 2310_ns);
    EXPECT_EQ(r.timings[late.index()].end, 2310_ns);
}

TEST(FlowEngine, IdenticalSpecsAreInterned) {
    Program p;
    const ResourceId link = p.add_resource(1e9);
    const FlowSpecId a = p.add_flow_spec(FlowSpec{10.0, 1e9, SimTime{}, {{link, 1.0}}});
    const FlowSpecId b = p.add_flow_spec(FlowSpec{10.0, 1e9, SimTime{}, {{link, 1.0}}});
    const FlowSpecId c = p.add_flow_spec(FlowSpec{10.0, 1e9, SimTime{}, {{link, 2.0}}});
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    EXPECT_THROW((void)p.add_resource(0.0), std::invalid_argument);
}

// Two senders into one receiving NIC (an incast), the load a trace's NIC counters show. Flow A (1000
// bytes) crosses tx0 and rx, flow B (250 bytes) tx1 and rx, every link 1 GB/s. A runs alone at 1 GB/s
// until B starts at 500 ns; rx then gives each 0.5 GB/s, so tx0 and tx1 carry half while rx stays full.
// B's 250 bytes take until 1000 ns; A, with 1000 - 500 - 250 = 250 left, runs at 1 GB/s to 1250 ns.
TEST(FlowEngine, RecordsEachLinksLoadAtEveryChange) {
    Program p;
    const ResourceId tx0 = p.add_resource(1e9);
    const ResourceId tx1 = p.add_resource(1e9);
    const ResourceId rx = p.add_resource(1e9);
    const ResourceId idle = p.add_resource(1e9);
    const FlowSpecId a = p.add_flow_spec(FlowSpec{1000.0, 1e9, SimTime{}, {{tx0, 1.0}, {rx, 1.0}}});
    const FlowSpecId b = p.add_flow_spec(FlowSpec{250.0, 1e9, SimTime{}, {{tx1, 1.0}, {rx, 1.0}}});
    const StreamId s0 = p.add_stream(GpuId{0}, "a");
    const StreamId s1 = p.add_stream(GpuId{1}, "b");
    const TaskId first = p.add_rendezvous_task(s0, p.add_flow_rendezvous(1, a, "a"), "a");
    const std::vector<TaskId> after{p.add_task(s1, 500_ns, "compute")};
    const TaskId second = p.add_rendezvous_task(s1, p.add_flow_rendezvous(1, b, "b"), "b", after);
    RunOptions options;
    options.record_rates_of = {1, 1, 1, 1};
    const RunResult r = simulate(p, options);
    EXPECT_EQ(r.timings[second.index()].end, 1000_ns);
    EXPECT_EQ(r.timings[first.index()].end, 1250_ns);
    ASSERT_EQ(r.resource_rates.size(), 4U);
    EXPECT_EQ(r.resource_rates[tx0.index()],
              (std::vector<RateSample>{{0_ns, 1e9}, {500_ns, 0.5e9}, {1000_ns, 1e9}, {1250_ns, 0.0}}));
    EXPECT_EQ(r.resource_rates[tx1.index()], (std::vector<RateSample>{{500_ns, 0.5e9}, {1000_ns, 0.0}}));
    // Full from A's start to its end: B's share came out of A's.
    EXPECT_EQ(r.resource_rates[rx.index()], (std::vector<RateSample>{{0_ns, 1e9}, {1250_ns, 0.0}}));
    EXPECT_TRUE(r.resource_rates[idle.index()].empty());

    // Only the resources asked for are recorded; none asked for: nothing, and the same run.
    options.record_rates_of = {0, 0, 1, 0};
    const RunResult rx_only = simulate(p, options);
    EXPECT_TRUE(rx_only.resource_rates[tx0.index()].empty());
    EXPECT_EQ(rx_only.resource_rates[rx.index()], r.resource_rates[rx.index()]);
    const RunResult plain = simulate(p);
    EXPECT_TRUE(plain.resource_rates.empty());
    EXPECT_EQ(plain.makespan, r.makespan);
    EXPECT_EQ(plain.resource_carried, r.resource_carried);
}

// Several changes at one instant leave one sample, the last. Two capped flows (0.5 and 0.25 GB/s) start
// together on a 1 GB/s link: it never shows the first one alone; 1000 and 500 bytes take both 2 µs, and
// their two ends at 2000 ns leave one 0.
TEST(FlowEngine, RecordsOneSamplePerInstant) {
    Program p;
    const ResourceId link = p.add_resource(1e9);
    const FlowSpecId x = p.add_flow_spec(FlowSpec{1000.0, 0.5e9, SimTime{}, {{link, 1.0}}});
    const FlowSpecId y = p.add_flow_spec(FlowSpec{500.0, 0.25e9, SimTime{}, {{link, 1.0}}});
    std::ignore = p.add_rendezvous_task(p.add_stream(GpuId{0}, "a"), p.add_flow_rendezvous(1, x, "x"), "x");
    std::ignore = p.add_rendezvous_task(p.add_stream(GpuId{1}, "b"), p.add_flow_rendezvous(1, y, "y"), "y");
    RunOptions options;
    options.record_rates_of = {1};
    const RunResult r = simulate(p, options);
    EXPECT_EQ(r.makespan, 2000_ns);
    EXPECT_EQ(r.resource_rates[0], (std::vector<RateSample>{{0_ns, 0.75e9}, {2000_ns, 0.0}}));
}

}  // namespace
}  // namespace trainsim::engine
