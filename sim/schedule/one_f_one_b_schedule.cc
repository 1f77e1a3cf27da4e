#include "sim/schedule/one_f_one_b_schedule.h"

#include <algorithm>

namespace trainsim::schedule {

std::vector<Step> OneFOneBSchedule::steps(std::int64_t rank) const {
    const std::int64_t m = shape_.microbatches;
    // Combined 1F1B (p = 1 only, combined_1f1b.py): the first forward alone, then F(k + 1) beside B(k).
    const std::int64_t warmup = std::min(shape_.stages - rank - 1 + (shape_.combined_1f1b ? 1 : 0), m);
    std::vector<Step> out;
    out.reserve(static_cast<std::size_t>(2 * m));
    for (std::int64_t k = 0; k < warmup; ++k) {
        out.push_back({Pass::Forward, static_cast<std::int32_t>(k), 0});
    }
    for (std::int64_t k = 0; k < m - warmup; ++k) {
        out.push_back({Pass::Forward, static_cast<std::int32_t>(warmup + k), 0, shape_.combined_1f1b});
        out.push_back({Pass::Backward, static_cast<std::int32_t>(k), 0});
    }
    for (std::int64_t k = m - warmup; k < m; ++k) {
        out.push_back({Pass::Backward, static_cast<std::int32_t>(k), 0});
    }
    return out;
}

}  // namespace trainsim::schedule
