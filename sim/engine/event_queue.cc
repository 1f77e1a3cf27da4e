#include "sim/engine/event_queue.h"

namespace trainsim::engine {

void EventQueue::push(SimTime time, std::int32_t task, std::uint32_t version) {
    std::uint32_t n = free_node_;
    if (n == kNone) {
        n = static_cast<std::uint32_t>(nodes_.size());
        nodes_.push_back({});
    } else {
        free_node_ = nodes_[n].next;
    }
    const std::uint64_t sequence = next_sequence_++;
    nodes_[n] = Node{sequence, task, version, kNone};
    ++size_;
    if (newest_run_ != kNone && runs_[newest_run_].time == time) {
        Run& r = runs_[newest_run_];
        nodes_[r.tail].next = n;
        r.tail = n;
        return;
    }
    std::uint32_t r = 0;
    if (free_runs_.empty()) {
        r = static_cast<std::uint32_t>(runs_.size());
        runs_.push_back({});
    } else {
        r = free_runs_.back();
        free_runs_.pop_back();
    }
    runs_[r] = Run{time, sequence, n, n};
    newest_run_ = r;
    heap_.push_back({time, sequence, r});
    sift_up(heap_.size() - 1);
}

Event EventQueue::top() const {
    const Run& r = runs_[heap_.front().run];
    const Node& n = nodes_[r.head];
    return Event{r.time, n.sequence, n.task, n.version};
}

Event EventQueue::pop() {
    const std::uint32_t ri = heap_.front().run;
    Run& r = runs_[ri];
    const std::uint32_t n = r.head;
    const Event e{r.time, nodes_[n].sequence, nodes_[n].task, nodes_[n].version};
    r.head = nodes_[n].next;
    nodes_[n].next = free_node_;
    free_node_ = n;
    --size_;
    if (r.head == kNone) {  // the run's last event: the run leaves the heap
        if (newest_run_ == ri) {
            newest_run_ = kNone;
        }
        free_runs_.push_back(ri);
        heap_.front() = heap_.back();
        heap_.pop_back();
        if (!heap_.empty()) {
            sift_down(0);
        }
    }
    return e;
}

void EventQueue::sift_up(std::size_t i) {
    const HeapEntry x = heap_[i];
    while (i > 0) {
        const std::size_t parent = (i - 1) / 2;
        if (!x.before(heap_[parent])) {
            break;
        }
        heap_[i] = heap_[parent];
        i = parent;
    }
    heap_[i] = x;
}

void EventQueue::sift_down(std::size_t i) {
    const HeapEntry x = heap_[i];
    const std::size_t n = heap_.size();
    while (true) {
        std::size_t child = 2 * i + 1;
        if (child >= n) {
            break;
        }
        if (child + 1 < n && heap_[child + 1].before(heap_[child])) {
            ++child;
        }
        if (!heap_[child].before(x)) {
            break;
        }
        heap_[i] = heap_[child];
        i = child;
    }
    heap_[i] = x;
}

}  // namespace trainsim::engine
