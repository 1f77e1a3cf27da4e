#include "sim/sweep/ordered_output.h"

namespace trainsim::sweep {

void OrderedOutput::put(std::size_t item, std::string line) {
    const std::lock_guard lock(mutex_);
    waiting_.emplace(item, std::move(line));
    for (auto it = waiting_.begin(); it != waiting_.end() && it->first == next_; it = waiting_.erase(it)) {
        emit_(it->second);
        ++next_;
    }
}

std::size_t OrderedOutput::emitted() const {
    const std::lock_guard lock(mutex_);
    return next_;
}

}  // namespace trainsim::sweep
