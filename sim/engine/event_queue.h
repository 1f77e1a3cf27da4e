// The future-event set: a binary heap ordered by (time, insertion sequence).
//
// Ties in time are broken by the order of insertion (as ns-3's EventKey and OMNeT++'s insertCount do),
// so a run is bit-for-bit reproducible. Insert and pop are O(log n); memory is one 24-byte record per
// pending event. Kept apart from the simulation loop so either can change without the other.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "sim/core/units.h"

namespace trainsim::engine {

struct Event {
    SimTime time = 0;
    std::uint64_t sequence = 0;  // insertion order; breaks ties in time
    std::int32_t task = -1;      // the task whose completion this event is
    std::uint32_t version = 0;   // a preempted task's stale completion carries an old version
};

class EventQueue {
public:
    void push(SimTime time, std::int32_t task, std::uint32_t version = 0) {
        heap_.push(Event{time, next_sequence_++, task, version});
    }
    [[nodiscard]] bool empty() const { return heap_.empty(); }
    [[nodiscard]] std::size_t size() const { return heap_.size(); }
    [[nodiscard]] const Event& top() const { return heap_.top(); }
    Event pop() {
        Event e = heap_.top();
        heap_.pop();
        return e;
    }
    /// Events inserted so far; also the next sequence number.
    [[nodiscard]] std::uint64_t inserted() const { return next_sequence_; }

private:
    struct Later {
        bool operator()(const Event& a, const Event& b) const {
            return a.time != b.time ? a.time > b.time : a.sequence > b.sequence;
        }
    };
    std::priority_queue<Event, std::vector<Event>, Later> heap_;
    std::uint64_t next_sequence_ = 0;
};

}  // namespace trainsim::engine
