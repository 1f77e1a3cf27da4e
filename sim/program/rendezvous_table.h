// Matches the members of each collective and each send/receive pair while a program is built.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine/program.h"
#include "sim/workload/op.h"

namespace trainsim::program {

/// A sequence of rendezvous that GPUs join in order: the k-th collective a GPU issues on a group
/// instance meets the k-th of every other member (they run the same program), and the k-th send on a
/// channel meets the k-th receive.
struct RendezvousChannel {
    /// Collectives over one instance of `group`, named by its first member's global rank, on one of a
    /// GPU's lanes (0 the compute stream's, 1 the recompute stream's: they issue collectives apart).
    [[nodiscard]] static RendezvousChannel collective(workload::CommGroup group, std::int32_t lane,
                                                      std::int64_t first_member);
    /// Sends from global rank `from` to `to` in one pipeline direction (0 forward, 1 backward).
    [[nodiscard]] static RendezvousChannel transfer(std::int32_t direction, std::int64_t from,
                                                    std::int64_t to);

    [[nodiscard]] bool operator==(const RendezvousChannel&) const = default;

    std::int32_t kind = 0;  // collective: group + kCommGroupCount·lane; transfer: −1 − direction
    std::int64_t first = 0;
    std::int64_t second = 0;
};

/// The rendezvous of every channel, from its first member's arrival until its last.
///
/// Looked up once per communication task (tens of millions for an unfolded 2240-GPU program). A GPU is
/// lowered whole before the next, so a channel's pending rendezvous are looked up in sequence order:
/// each channel keeps them in a queue indexed by sequence, and only the channel itself is hashed. The
/// k-th rendezvous of a channel is created by whoever reaches it first, after the (k−1)-th, and completes
/// once its last member has it, after the (k−1)-th: so the queue only grows at its back and drains
/// from its front, and holds only the rendezvous some member has not reached yet.
class RendezvousTable {
public:
    /// The `sequence`-th rendezvous of `channel`, created by its first member; forgotten once all
    /// `members` have it.
    [[nodiscard]] engine::RendezvousId get(engine::Program& program, const RendezvousChannel& channel,
                                           std::int64_t sequence, std::int64_t members, SimTime duration);
    /// The same for a rendezvous that runs a flow on the network (its duration is the engine's to find).
    [[nodiscard]] engine::RendezvousId get_flow(engine::Program& program, const RendezvousChannel& channel,
                                                std::int64_t sequence, std::int64_t members,
                                                engine::FlowSpecId flow);

    /// Rendezvous created and not yet joined by all their members.
    [[nodiscard]] std::size_t pending() const { return pending_; }

private:
    struct Pending {
        engine::RendezvousId id = engine::kNoRendezvous;
        std::int32_t members_left = 0;
    };
    struct Queue {
        RendezvousChannel channel;
        std::int64_t front = 0;  // the sequence of pending[head]
        std::size_t head = 0;    // entries before it have completed
        std::vector<Pending> pending;
    };

    template <class Create>
    [[nodiscard]] engine::RendezvousId find_or_add(const RendezvousChannel& channel, std::int64_t sequence,
                                                   std::int64_t members, Create create);
    [[nodiscard]] Queue& queue_of(const RendezvousChannel& channel);
    void drain_front(Queue& q);
    [[nodiscard]] std::size_t home(const RendezvousChannel& channel) const;
    void grow_index();

    std::vector<Queue> queues_;        // one per channel seen
    std::vector<std::int32_t> index_;  // open addressing into queues_ (-1: empty), at most half full
    std::size_t pending_ = 0;
};

}  // namespace trainsim::program
