#include "sim/program/rendezvous_table.h"

#include <stdexcept>
#include <string>

namespace trainsim::program {
namespace {

std::uint64_t splitmix64_finalize(std::uint64_t h) {  // splitmix64's finalizer
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

// A drained queue keeps this much capacity for its next rendezvous; more goes back to the heap, so that
// channels that have finished (every member lowered) hold nothing.
constexpr std::size_t kKeptCapacity = 64;

}  // namespace

RendezvousChannel RendezvousChannel::collective(workload::CommGroup group, std::int32_t lane,
                                                std::int64_t first_member) {
    return {static_cast<std::int32_t>(group) + static_cast<std::int32_t>(workload::kCommGroupCount) * lane,
            first_member, 0};
}

RendezvousChannel RendezvousChannel::transfer(std::int32_t direction, std::int64_t from, std::int64_t to) {
    return {-1 - direction, from, to};
}

std::size_t RendezvousTable::home(const RendezvousChannel& channel) const {
    std::uint64_t h = splitmix64_finalize(static_cast<std::uint64_t>(static_cast<std::int64_t>(channel.kind)));
    h = splitmix64_finalize(h ^ static_cast<std::uint64_t>(channel.first));
    h = splitmix64_finalize(h ^ static_cast<std::uint64_t>(channel.second));
    return static_cast<std::size_t>(h) & (index_.size() - 1);
}

void RendezvousTable::grow_index() {
    index_.assign(index_.empty() ? 64 : index_.size() * 2, -1);
    for (std::size_t q = 0; q < queues_.size(); ++q) {
        std::size_t i = home(queues_[q].channel);
        while (index_[i] >= 0) {
            i = (i + 1) & (index_.size() - 1);
        }
        index_[i] = static_cast<std::int32_t>(q);
    }
}

RendezvousTable::Queue& RendezvousTable::queue_of(const RendezvousChannel& channel) {
    if (2 * (queues_.size() + 1) > index_.size()) {
        grow_index();
    }
    const std::size_t mask = index_.size() - 1;
    std::size_t i = home(channel);
    while (index_[i] >= 0) {
        Queue& q = queues_[static_cast<std::size_t>(index_[i])];
        if (q.channel == channel) {
            return q;
        }
        i = (i + 1) & mask;
    }
    index_[i] = static_cast<std::int32_t>(queues_.size());
    return queues_.emplace_back(Queue{channel, 0, 0, {}});
}

void RendezvousTable::drain_front(Queue& q) {
    while (q.head < q.pending.size() && q.pending[q.head].members_left == 0) {
        ++q.head;
        ++q.front;
    }
    if (q.head == q.pending.size()) {
        q.head = 0;
        if (q.pending.capacity() > kKeptCapacity) {
            std::vector<Pending>().swap(q.pending);
        } else {
            q.pending.clear();
        }
    } else if (q.head >= kKeptCapacity && 2 * q.head >= q.pending.size()) {
        // Completed entries fill the front half: drop them, amortised over the entries they were.
        q.pending.erase(q.pending.begin(), q.pending.begin() + static_cast<std::ptrdiff_t>(q.head));
        q.head = 0;
    }
}

template <class Create>
engine::RendezvousId RendezvousTable::find_or_add(const RendezvousChannel& channel, std::int64_t sequence,
                                                  std::int64_t members, Create create) {
    if (members == 1) {
        return create();  // a folded group: nobody else will ask
    }
    Queue& q = queue_of(channel);
    const std::int64_t next = q.front + static_cast<std::int64_t>(q.pending.size() - q.head);
    if (sequence == next) {
        q.pending.push_back(Pending{create(), static_cast<std::int32_t>(members)});
        ++pending_;
    } else if (sequence < q.front || sequence > next) {
        // A member skipped a rendezvous or came back to one all members had: the program is malformed.
        throw std::logic_error("rendezvous sequence " + std::to_string(sequence) + " on channel (" +
                               std::to_string(channel.kind) + ", " + std::to_string(channel.first) + ", " +
                               std::to_string(channel.second) + ") outside its pending range [" +
                               std::to_string(q.front) + ", " + std::to_string(next) + "]");
    }
    Pending& p = q.pending[q.head + static_cast<std::size_t>(sequence - q.front)];
    const engine::RendezvousId id = p.id;
    if (--p.members_left == 0) {
        --pending_;
        drain_front(q);
    }
    return id;
}

engine::RendezvousId RendezvousTable::get(engine::Program& program, const RendezvousChannel& channel,
                                          std::int64_t sequence, std::int64_t members, SimTime duration) {
    return find_or_add(channel, sequence, members, [&] {
        return program.add_rendezvous(static_cast<std::int32_t>(members), duration, {});
    });
}

engine::RendezvousId RendezvousTable::get_flow(engine::Program& program, const RendezvousChannel& channel,
                                               std::int64_t sequence, std::int64_t members,
                                               engine::FlowSpecId flow) {
    return find_or_add(channel, sequence, members, [&] {
        return program.add_flow_rendezvous(static_cast<std::int32_t>(members), flow, {});
    });
}

}  // namespace trainsim::program
