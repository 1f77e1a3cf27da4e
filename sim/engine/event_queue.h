// The future-event set, ordered by (time, insertion sequence).
//
// Ties in time are broken by the order of insertion (as ns-3's EventKey and OMNeT++'s insertCount do),
// so a run is bit-for-bit reproducible. Consecutive pushes of the same time share one FIFO run, and only
// runs enter the binary heap, ordered by (time, first sequence): a collective's members all end at the
// same instant and are pushed one after another, so in an unfolded run (eight tensor-parallel members
// per collective) the heap sees a fraction of the events, while a folded run pays one comparison per
// push. Pending events live in a pool that recycles its slots: no allocation per event once the pool
// has grown.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/units.h"

namespace trainsim::engine {

struct Event {
    SimTime time{};
    std::uint64_t sequence = 0;  // insertion order; breaks ties in time
    std::int32_t task = -1;      // the task whose completion this event is
    std::uint32_t version = 0;   // a preempted task's stale completion carries an old version
};

class EventQueue {
public:
    void push(SimTime time, std::int32_t task, std::uint32_t version = 0);
    [[nodiscard]] bool empty() const { return size_ == 0; }
    [[nodiscard]] std::size_t size() const { return size_; }
    /// The earliest event (undefined when empty).
    [[nodiscard]] Event top() const;
    Event pop();
    /// Events inserted so far; also the next sequence number.
    [[nodiscard]] std::uint64_t inserted() const { return next_sequence_; }

private:
    static constexpr std::uint32_t kNone = 0xffffffffU;
    struct Node {
        std::uint64_t sequence;
        std::int32_t task;
        std::uint32_t version;
        std::uint32_t next;  // the next event of the same run, or the next free node
    };
    // A run: events of one time pushed one after another, oldest first. Only the newest run grows, so
    // every event of a run is newer than every event of the runs before it, and ordering runs by
    // (time, first sequence) then popping each in order is ordering events by (time, sequence).
    struct Run {
        SimTime time;
        std::uint64_t first_sequence;
        std::uint32_t head, tail;
    };
    struct HeapEntry {
        SimTime time;
        std::uint64_t first_sequence;
        std::uint32_t run;
        [[nodiscard]] bool before(const HeapEntry& o) const {
            return time != o.time ? time < o.time : first_sequence < o.first_sequence;
        }
    };

    void sift_up(std::size_t i);
    void sift_down(std::size_t i);

    std::vector<Node> nodes_;
    std::uint32_t free_node_ = kNone;
    std::vector<Run> runs_;
    std::vector<std::uint32_t> free_runs_;
    std::uint32_t newest_run_ = kNone;  // the run a push of the same time joins, while it is pending
    std::vector<HeapEntry> heap_;       // one entry per pending run, earliest first
    std::size_t size_ = 0;
    std::uint64_t next_sequence_ = 0;
};

}  // namespace trainsim::engine
