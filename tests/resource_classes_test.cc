// Resource classes (resources no flow can tell apart) and the engine's sharing on them: the same rates,
// end times and carried bytes as sharing every resource on its own.
#include <gtest/gtest.h>

#include <stdexcept>
#include <tuple>
#include <vector>

#include "sim/engine/max_min_sharing.h"
#include "sim/engine/resource_classes.h"
#include "sim/engine/simulator.h"

namespace trainsim::engine {
namespace {

// Links 0-3 of 1 GB/s, link 4 of 2 GB/s, link 5 of 1 GB/s that no flow crosses. A crosses 0-4, B only
// 2 and 3: {0, 1}, {2, 3}, {4} and {5} are the classes.
TEST(ResourceClasses, MergesLinksUsedAlikeBySpecsOfEqualCapacity) {
    Program p;
    for (const double capacity : {1e9, 1e9, 1e9, 1e9, 2e9, 1e9}) {
        std::ignore = p.add_resource(capacity);
    }
    const FlowSpecId a = p.add_flow_spec(FlowSpec{1.0,
                                                  1e9,
                                                  SimTime{},
                                                  {{ResourceId{0}, 1.0},
                                                   {ResourceId{1}, 1.0},
                                                   {ResourceId{2}, 1.0},
                                                   {ResourceId{3}, 1.0},
                                                   {ResourceId{4}, 1.0}}});
    const FlowSpecId b =
        p.add_flow_spec(FlowSpec{1.0, 1e9, SimTime{}, {{ResourceId{2}, 1.0}, {ResourceId{3}, 1.0}}});
    const ResourceClasses classes(p, {});
    ASSERT_EQ(classes.size(), 4U);
    EXPECT_EQ(classes.capacities(), (std::vector<double>{1e9, 1e9, 2e9, 1e9}));
    std::vector<std::int32_t> class_of;
    for (std::size_t r = 0; r < 6; ++r) {
        class_of.push_back(classes.class_of(ResourceId::from_index(r)).value());
    }
    EXPECT_EQ(class_of, (std::vector<std::int32_t>{0, 0, 1, 1, 2, 3}));
    const auto uses_a = classes.uses(a);
    EXPECT_EQ(std::vector<ResourceClassUse>(uses_a.begin(), uses_a.end()),
              (std::vector<ResourceClassUse>{
                  {ResourceClassId{0}, 1.0}, {ResourceClassId{1}, 1.0}, {ResourceClassId{2}, 1.0}}));
    const auto uses_b = classes.uses(b);
    EXPECT_EQ(std::vector<ResourceClassUse>(uses_b.begin(), uses_b.end()),
              (std::vector<ResourceClassUse>{{ResourceClassId{1}, 1.0}}));
    EXPECT_EQ(classes.per_resource(std::vector<double>{10.0, 20.0, 30.0, 40.0}),
              (std::vector<double>{10.0, 10.0, 20.0, 20.0, 30.0, 40.0}));
}

// A ring crossing link 1 twice per unit of progress loads it differently from link 0; a recorded link
// keeps its own samples, so it stays alone.
TEST(ResourceClasses, WeightsAndRecordingSplitClasses) {
    Program p;
    for (int i = 0; i < 4; ++i) {
        std::ignore = p.add_resource(1e9);
    }
    std::ignore = p.add_flow_spec(
        FlowSpec{1.0,
                 1e9,
                 SimTime{},
                 {{ResourceId{0}, 1.0}, {ResourceId{1}, 2.0}, {ResourceId{2}, 1.0}, {ResourceId{3}, 1.0}}});
    const ResourceClasses plain(p, {});
    EXPECT_EQ(plain.size(), 2U);
    EXPECT_EQ(plain.class_of(ResourceId{0}), plain.class_of(ResourceId{2}));
    EXPECT_EQ(plain.class_of(ResourceId{0}), plain.class_of(ResourceId{3}));
    EXPECT_NE(plain.class_of(ResourceId{0}), plain.class_of(ResourceId{1}));
    const std::vector<char> record{0, 0, 1};
    const ResourceClasses recorded(p, record);
    EXPECT_EQ(recorded.size(), 3U);
    EXPECT_EQ(recorded.class_of(ResourceId{0}), recorded.class_of(ResourceId{3}));
    EXPECT_NE(recorded.class_of(ResourceId{0}), recorded.class_of(ResourceId{2}));
}

// A crosses links 0-3 (2000 bytes), B only 2 and 3 (1000 bytes), all of 1 GB/s, both from 0: they share
// 2 and 3 at 0.5 GB/s each, so B ends at 2000 ns; A, 1000 bytes left, runs alone at 1 GB/s to 3000 ns.
// Links 0 and 1 carried A's 2000 bytes, links 2 and 3 both flows' 3000.
TEST(ResourceClasses, EngineSharesMergedLinksExactly) {
    Program p;
    for (int i = 0; i < 4; ++i) {
        std::ignore = p.add_resource(1e9);
    }
    const FlowSpecId a = p.add_flow_spec(
        FlowSpec{2000.0,
                 1e10,
                 SimTime{},
                 {{ResourceId{0}, 1.0}, {ResourceId{1}, 1.0}, {ResourceId{2}, 1.0}, {ResourceId{3}, 1.0}}});
    const FlowSpecId b =
        p.add_flow_spec(FlowSpec{1000.0, 1e10, SimTime{}, {{ResourceId{2}, 1.0}, {ResourceId{3}, 1.0}}});
    const TaskId ta =
        p.add_rendezvous_task(p.add_stream(GpuId{0}, "a"), p.add_flow_rendezvous(1, a, "a"), "a");
    const TaskId tb =
        p.add_rendezvous_task(p.add_stream(GpuId{1}, "b"), p.add_flow_rendezvous(1, b, "b"), "b");
    const RunResult r = simulate(p);
    EXPECT_EQ(r.timings[tb.index()].end, 2000_ns);
    EXPECT_EQ(r.timings[ta.index()].end, 3000_ns);
    EXPECT_EQ(r.resource_carried, (std::vector<double>{2000.0, 2000.0, 3000.0, 3000.0}));
}

// Four copies of a ring over their own links and a shared uplink, with caps, weights and staggered
// starts, plus flows on two disjoint link sets: sharing merged classes gives bit for bit the timings and
// carried bytes of sharing every link on its own (recording every link keeps each in a class of its own).
TEST(ResourceClasses, MergedSharingMatchesPerLinkSharing) {
    Program p;
    std::vector<ResourceId> link;
    for (int i = 0; i < 10; ++i) {
        link.push_back(p.add_resource(i < 8 ? 3e9 : 7e9));
    }
    std::vector<FlowUse> ring, half, uplink;
    for (int i = 0; i < 8; ++i) {
        ring.push_back({link[static_cast<std::size_t>(i)], i % 2 == 0 ? 1.0 : 1.75});
        if (i < 4) {
            half.push_back({link[static_cast<std::size_t>(i)], i % 2 == 0 ? 1.0 : 1.75});
        }
    }
    ring.push_back({link[8], 0.5});
    uplink.push_back({link[8], 1.0});
    const std::vector<FlowSpecId> specs{p.add_flow_spec(FlowSpec{7.3e6, 2.1e9, SimTime{}, ring}),
                                        p.add_flow_spec(FlowSpec{3.1e6, 5e9, SimTime{}, half}),
                                        p.add_flow_spec(FlowSpec{1.7e6, 6e9, SimTime{}, uplink}),
                                        p.add_flow_spec(FlowSpec{2.9e6, 2.5e9, SimTime{}, {{link[9], 1.0}}})};
    std::vector<TaskId> tasks;
    for (int s = 0; s < 6; ++s) {
        const StreamId stream = p.add_stream(GpuId{s}, "s");
        for (int k = 0; k < 5; ++k) {
            tasks.push_back(p.add_task(stream, SimTime{137 * (s + 1) + 311 * k}, "compute"));
            const FlowSpecId spec = specs[static_cast<std::size_t>((s + k) % 4)];
            tasks.push_back(p.add_rendezvous_task(stream, p.add_flow_rendezvous(1, spec, "f"), "f"));
        }
    }
    const RunResult merged = simulate(p);
    RunOptions apart;
    apart.record_rates_of.assign(link.size(), 1);
    const RunResult per_link = simulate(p, apart);
    for (const TaskId t : tasks) {
        EXPECT_EQ(merged.timings[t.index()].start, per_link.timings[t.index()].start);
        EXPECT_EQ(merged.timings[t.index()].end, per_link.timings[t.index()].end);
    }
    EXPECT_EQ(merged.resource_carried, per_link.resource_carried);
    EXPECT_EQ(merged.makespan, per_link.makespan);
    // The links of one class carried the same bytes: links 4-7 only the ring, in two weights.
    EXPECT_EQ(merged.resource_carried[4], merged.resource_carried[6]);
    EXPECT_EQ(merged.resource_carried[5], merged.resource_carried[7]);
}

// The reusable solver gives max_min_rates' rates on every problem, whatever it solved (or rejected)
// before.
TEST(MaxMinSharing, ReusedSolverMatchesAFreshOne) {
    const std::vector<double> capacity{10.0, 4.0, 6.0};
    const std::vector<FlowUse> a{{ResourceId{0}, 1.0}, {ResourceId{1}, 1.0}}, b{{ResourceId{0}, 1.0}},
        c{{ResourceId{1}, 1.0}}, d{{ResourceId{2}, 2.0}}, bad{{ResourceId{2}, 0.0}};
    const std::vector<SharedFlow> first{{100.0, a}, {100.0, b}, {100.0, c}};
    const std::vector<SharedFlow> second{{1.0, d}, {100.0, d}, {100.0, b}};
    const std::vector<SharedFlow> rejected{{100.0, b}, {100.0, bad}};
    MaxMinSharing sharing;
    EXPECT_EQ(sharing.rates(first, capacity), max_min_rates(first, capacity));
    EXPECT_EQ(sharing.rates(second, capacity), max_min_rates(second, capacity));
    EXPECT_THROW(std::ignore = sharing.rates(rejected, capacity), std::invalid_argument);
    EXPECT_EQ(sharing.rates(first, capacity), (std::vector<double>{2.0, 8.0, 2.0}));
    EXPECT_EQ(sharing.rates(second, capacity), max_min_rates(second, capacity));
}

}  // namespace
}  // namespace trainsim::engine
