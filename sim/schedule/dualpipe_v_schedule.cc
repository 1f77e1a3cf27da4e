#include "sim/schedule/dualpipe_v_schedule.h"

#include "sim/schedule/dualpipe_steps.h"

namespace trainsim::schedule {

std::vector<Step> DualPipeVSchedule::steps(std::int64_t rank) const {
    return dualpipe_steps(shape_.stages, shape_.microbatches, rank);
}

}  // namespace trainsim::schedule
