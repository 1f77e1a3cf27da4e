// Matches the members of each collective and each send/receive pair while a program is built.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/engine/program.h"

namespace trainsim::program {

/// Rendezvous shared by the members of one group: the k-th collective a GPU issues on a group
/// instance meets the k-th of every other member (they run the same program), and the k-th send on a
/// channel meets the k-th receive.
///
/// Looked up once per communication task (tens of millions for an unfolded 2240-GPU program), so it is
/// an open-addressing table in one flat array: no allocation per entry, and it only ever holds the
/// rendezvous some member has not reached yet.
class RendezvousTable {
public:
    using Key = std::array<std::int64_t, 4>;
    /// The rendezvous for `key`, created by its first member; forgotten once all members have it.
    [[nodiscard]] engine::RendezvousId get(engine::Program& program, const Key& key, std::int64_t members,
                                           SimTime duration);
    /// The same for a rendezvous that runs a flow on the network (its duration is the engine's to find).
    [[nodiscard]] engine::RendezvousId get_flow(engine::Program& program, const Key& key, std::int64_t members,
                                                engine::FlowSpecId flow);

    /// Rendezvous created and not yet joined by all their members.
    [[nodiscard]] std::size_t pending() const { return size_; }

private:
    template <class Create>
    [[nodiscard]] engine::RendezvousId find_or_add(const Key& key, std::int64_t members, Create create);

    struct Slot {
        Key key{};
        engine::RendezvousId id = -1;  // -1: an empty slot
        std::int64_t members_left = 0;
    };
    [[nodiscard]] std::size_t home(const Key& key) const;
    void grow();
    void erase(std::size_t slot);

    std::vector<Slot> slots_;  // a power of two long, at most half full
    std::size_t size_ = 0;
};

}  // namespace trainsim::program
