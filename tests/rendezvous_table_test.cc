// The build-time matching of collective members and send/receive pairs (sim/program/rendezvous_table.h).
#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/program/rendezvous_table.h"

namespace trainsim::program {
namespace {

using workload::CommGroup;

TEST(RendezvousTable, TheKthOfEveryMemberMeets) {
    engine::Program program;
    RendezvousTable table;
    const RendezvousChannel tp = RendezvousChannel::collective(CommGroup::Tensor, 0, 0);
    // Member 0 is lowered whole first (three collectives), then members 1 and 2.
    const engine::RendezvousId a0 = table.get(program, tp, 0, 3, 10_ns);
    const engine::RendezvousId a1 = table.get(program, tp, 1, 3, 20_ns);
    const engine::RendezvousId a2 = table.get(program, tp, 2, 3, 30_ns);
    EXPECT_EQ(table.pending(), 3U);
    for (int member = 1; member < 3; ++member) {
        EXPECT_EQ(table.get(program, tp, 0, 3, 10_ns), a0);
        EXPECT_EQ(table.get(program, tp, 1, 3, 20_ns), a1);
        EXPECT_EQ(table.get(program, tp, 2, 3, 30_ns), a2);
    }
    EXPECT_EQ(program.rendezvous_count(), 3U);
    EXPECT_EQ(program.rendezvous_duration(a1), 20_ns);
    EXPECT_EQ(table.pending(), 0U);  // forgotten once every member has it
    // The channel starts over at the sequence after its last: the fourth collective is a new one.
    EXPECT_EQ(table.get(program, tp, 3, 3, 40_ns), engine::RendezvousId{3});
}

TEST(RendezvousTable, ChannelsAreApart) {
    engine::Program program;
    RendezvousTable table;
    // The same numbers in different roles name different channels: lanes, groups, directions, ends.
    const RendezvousChannel channels[] = {
        RendezvousChannel::collective(CommGroup::Tensor, 0, 4),
        RendezvousChannel::collective(CommGroup::Tensor, 1, 4),
        RendezvousChannel::collective(CommGroup::Data, 0, 4),
        RendezvousChannel::transfer(0, 4, 0),
        RendezvousChannel::transfer(1, 4, 0),
        RendezvousChannel::transfer(0, 0, 4),
    };
    for (const RendezvousChannel& c : channels) {
        static_cast<void>(table.get(program, c, 0, 2, 1_ns));
    }
    EXPECT_EQ(program.rendezvous_count(), 6U);
    EXPECT_EQ(table.pending(), 6U);
    std::int32_t expected = 0;
    for (const RendezvousChannel& c : channels) {
        EXPECT_EQ(table.get(program, c, 0, 2, 1_ns), engine::RendezvousId{expected++});
    }
    EXPECT_EQ(table.pending(), 0U);
}

TEST(RendezvousTable, AGroupOfOneMeetsNobody) {
    engine::Program program;
    RendezvousTable table;
    const RendezvousChannel ep = RendezvousChannel::collective(CommGroup::Expert, 0, 7);
    // A folded group: each call its own rendezvous.
    EXPECT_EQ(table.get(program, ep, 0, 1, 5_ns), engine::RendezvousId{0});
    EXPECT_EQ(table.get(program, ep, 0, 1, 5_ns), engine::RendezvousId{1});
    EXPECT_EQ(table.pending(), 0U);
}

TEST(RendezvousTable, ManyPendingDrainInOrder) {
    // More pending than a drained queue keeps, so the front is compacted and the memory given back.
    engine::Program program;
    RendezvousTable table;
    const RendezvousChannel pp = RendezvousChannel::transfer(0, 1, 2);
    constexpr int kSends = 1000;
    for (int k = 0; k < kSends; ++k) {
        EXPECT_EQ(table.get(program, pp, k, 2, SimTime{k + 1}), engine::RendezvousId{k});
    }
    for (int k = 0; k < kSends; ++k) {
        EXPECT_EQ(table.get(program, pp, k, 2, SimTime{k + 1}), engine::RendezvousId{k});
        EXPECT_EQ(table.pending(), static_cast<std::size_t>(kSends - k - 1));
    }
}

TEST(RendezvousTable, ASkippedSequenceIsAnError) {
    engine::Program program;
    RendezvousTable table;
    const RendezvousChannel pp = RendezvousChannel::transfer(1, 3, 2);
    static_cast<void>(table.get(program, pp, 0, 2, 1_ns));
    EXPECT_THROW(static_cast<void>(table.get(program, pp, 2, 2, 1_ns)), std::logic_error);  // 1 never came
    static_cast<void>(table.get(program, pp, 0, 2, 1_ns));
    EXPECT_THROW(static_cast<void>(table.get(program, pp, 0, 2, 1_ns)), std::logic_error);  // all had 0
}

}  // namespace
}  // namespace trainsim::program
