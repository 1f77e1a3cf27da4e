#include "sim/schedule/interleaved_schedule.h"

#include <algorithm>

namespace trainsim::schedule {

InterleavedSchedule::InterleavedSchedule(PipelineShape shape, std::int64_t group_size)
    : shape_(shape), group_size_(group_size) {
    const std::int64_t m = shape_.microbatches;
    for (std::int64_t first = 0; first < m; first += group_size_) {
        // The last group takes whatever micro-batches remain.
        const std::int64_t end = first + group_size_ >= m ? m : first + group_size_;
        for (std::int64_t chunk = 0; chunk < shape_.chunks; ++chunk) {
            for (std::int64_t mb = first; mb < end; ++mb) {
                table_.push_back(
                    {Pass::Forward, static_cast<std::int32_t>(mb), static_cast<std::int32_t>(chunk)});
            }
        }
    }
}

std::int64_t InterleavedSchedule::warmup(std::int64_t rank) const {
    const std::int64_t total = shape_.microbatches * shape_.chunks;
    // The combined 1F1B runs one extra forward first (schedules.py get_pp_rank_microbatches).
    return std::min((shape_.stages - rank - 1) * 2 + (shape_.chunks - 1) * group_size_ +
                        (shape_.combined_1f1b ? 1 : 0),
                    total);
}

std::vector<Step> InterleavedSchedule::steps(std::int64_t rank) const {
    const auto total = static_cast<std::int64_t>(table_.size());
    const std::int64_t w = warmup(rank);
    const auto forward = [&](std::int64_t k) { return table_[static_cast<std::size_t>(k)]; };
    const auto backward = [&](std::int64_t k) {
        Step s = table_[static_cast<std::size_t>(k)];
        s.pass = Pass::Backward;
        s.chunk = static_cast<std::int32_t>(shape_.chunks - 1 - s.chunk);
        return s;
    };
    std::vector<Step> out;
    out.reserve(static_cast<std::size_t>(2 * total));
    for (std::int64_t k = 0; k < w; ++k) {
        out.push_back(forward(k));
    }
    for (std::int64_t k = 0; k < total - w; ++k) {
        Step f = forward(w + k);
        f.paired = shape_.combined_1f1b;
        out.push_back(f);
        out.push_back(backward(k));
    }
    for (std::int64_t k = total - w; k < total; ++k) {
        out.push_back(backward(k));
    }
    return out;
}

}  // namespace trainsim::schedule
