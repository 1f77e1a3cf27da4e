#include "sim/schedule/gpipe_schedule.h"

namespace trainsim::schedule {

std::vector<Step> GPipeSchedule::steps(std::int64_t /*rank*/) const {
    std::vector<Step> out;
    const auto m = static_cast<std::int32_t>(shape_.microbatches);
    for (std::int32_t mb = 0; mb < m; ++mb) {
        out.push_back({Pass::Forward, mb, 0});
    }
    for (std::int32_t mb = m - 1; mb >= 0; --mb) {
        out.push_back({Pass::Backward, mb, 0});
    }
    return out;
}

}  // namespace trainsim::schedule
