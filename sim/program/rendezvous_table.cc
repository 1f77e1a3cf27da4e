#include "sim/program/rendezvous_table.h"

#include <utility>

namespace trainsim::program {
namespace {

std::uint64_t mix(std::uint64_t h) {  // splitmix64's finalizer
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

}  // namespace

std::size_t RendezvousTable::home(const Key& key) const {
    std::uint64_t h = 0;
    for (const std::int64_t v : key) {
        h = mix(h ^ static_cast<std::uint64_t>(v));
    }
    return static_cast<std::size_t>(h) & (slots_.size() - 1);
}

void RendezvousTable::grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    for (const Slot& s : old) {
        if (s.id >= 0) {
            std::size_t i = home(s.key);
            while (slots_[i].id >= 0) {
                i = (i + 1) & (slots_.size() - 1);
            }
            slots_[i] = s;
        }
    }
}

// Backward-shift deletion: later entries of the probe run move up, so lookups need no tombstones.
void RendezvousTable::erase(std::size_t slot) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t hole = slot;
    for (std::size_t i = (hole + 1) & mask; slots_[i].id >= 0; i = (i + 1) & mask) {
        const std::size_t h = home(slots_[i].key);
        // Move the entry into the hole unless its home lies cyclically in (hole, i].
        if (((i - h) & mask) >= ((i - hole) & mask)) {
            slots_[hole] = slots_[i];
            hole = i;
        }
    }
    slots_[hole] = Slot{};
    --size_;
}

template <class Create>
engine::RendezvousId RendezvousTable::find_or_add(const Key& key, std::int64_t members, Create create) {
    if (members == 1) {
        return create();  // a folded group: nobody else will ask
    }
    if (2 * (size_ + 1) > slots_.size()) {
        grow();
    }
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = home(key);
    while (slots_[i].id >= 0 && slots_[i].key != key) {
        i = (i + 1) & mask;
    }
    if (slots_[i].id < 0) {
        slots_[i] = Slot{key, create(), members};
        ++size_;
    }
    const engine::RendezvousId id = slots_[i].id;
    if (--slots_[i].members_left == 0) {
        erase(i);
    }
    return id;
}

engine::RendezvousId RendezvousTable::get(engine::Program& program, const Key& key, std::int64_t members,
                                          SimTime duration) {
    return find_or_add(key, members, [&] {
        return program.add_rendezvous(static_cast<std::int32_t>(members), duration, {});
    });
}

engine::RendezvousId RendezvousTable::get_flow(engine::Program& program, const Key& key, std::int64_t members,
                                               engine::FlowSpecId flow) {
    return find_or_add(key, members, [&] {
        return program.add_flow_rendezvous(static_cast<std::int32_t>(members), flow, {});
    });
}

}  // namespace trainsim::program
