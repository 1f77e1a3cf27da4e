#include "sim/schedule/zero_bubble_handcrafted_schedule.h"

#include <algorithm>
#include <deque>

namespace trainsim::schedule {

std::int64_t ZeroBubbleHandcraftedSchedule::warmup(std::int64_t rank) const {
    const std::int64_t factor = variant_ == Variant::H1 ? 1 : 2;
    return std::min(factor * (shape_.stages - 1 - rank), shape_.microbatches);
}

std::int64_t ZeroBubbleHandcraftedSchedule::delay(std::int64_t rank) const {
    return (variant_ == Variant::H1 ? 1 : 2) * rank;
}

std::vector<Step> ZeroBubbleHandcraftedSchedule::steps(std::int64_t rank) const {
    const auto m = static_cast<std::int32_t>(shape_.microbatches);
    const auto w = static_cast<std::int32_t>(warmup(rank));
    const std::int64_t d = delay(rank);
    std::vector<Step> out;
    out.reserve(static_cast<std::size_t>(3 * m));
    std::deque<std::int32_t> pending;  // micro-batches whose B ran and W has not
    std::int32_t next_b = 0;
    const auto backward = [&] {
        out.push_back({Pass::Backward, next_b, 0});
        pending.push_back(next_b++);
    };
    const auto weight = [&] {
        out.push_back({Pass::Weight, pending.front(), 0});
        pending.pop_front();
    };
    for (std::int32_t k = 0; k < w; ++k) {
        out.push_back({Pass::Forward, k, 0});
    }
    for (std::int32_t k = 0; k < m - w; ++k) {
        out.push_back({Pass::Forward, w + k, 0});
        backward();
        if (k >= d) {
            weight();
        }
    }
    while (next_b < m) {
        backward();
        weight();
    }
    while (!pending.empty()) {
        weight();
    }
    return out;
}

}  // namespace trainsim::schedule
