#include "sim/schedule/dualpipe_schedule.h"

#include <algorithm>

#include "sim/schedule/dualpipe_steps.h"

namespace trainsim::schedule {

std::vector<Step> DualPipeSchedule::steps(std::int64_t rank) const {
    const std::int64_t p = shape_.stages;
    const std::int64_t half_rank = std::min(rank, p - 1 - rank);
    std::vector<Step> out = dualpipe_steps(p / 2, shape_.microbatches / 2, half_rank);
    // dualpipe.py: "for the second half of the ranks: phase 0 means reverse direction".
    if (rank >= p / 2) {
        for (Step& s : out) {
            s.chunk = 1 - s.chunk;
        }
    }
    return out;
}

}  // namespace trainsim::schedule
