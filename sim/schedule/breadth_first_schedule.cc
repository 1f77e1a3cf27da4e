#include "sim/schedule/breadth_first_schedule.h"

namespace trainsim::schedule {

std::vector<Step> BreadthFirstSchedule::steps(std::int64_t /*rank*/) const {
    // The idle slots of ScheduleLoopedBFS (r before the forwards, 2(p − 1 − r) before the backwards)
    // are not steps here: the engine makes a rank wait for its inputs.
    const auto m = static_cast<std::int32_t>(shape_.microbatches);
    const auto v = static_cast<std::int32_t>(shape_.chunks);
    std::vector<Step> out;
    out.reserve(static_cast<std::size_t>(2 * m * v));
    for (std::int32_t chunk = 0; chunk < v; ++chunk) {
        for (std::int32_t mb = 0; mb < m; ++mb) {
            out.push_back({Pass::Forward, mb, chunk});
        }
    }
    for (std::int32_t chunk = v - 1; chunk >= 0; --chunk) {
        for (std::int32_t mb = m - 1; mb >= 0; --mb) {
            out.push_back({Pass::Backward, mb, chunk});
        }
    }
    return out;
}

}  // namespace trainsim::schedule
