#pragma once

// The V placement that ZB-V and DualPipeV share: each pipeline rank holds two chunks, chunk 0 the stage
// of its own index going down the pipeline and chunk 1 the mirrored stage coming back up, so the first
// rank holds the first and the last stage (Qi et al. 2024, ZB-V; DeepSeek's DualPipeV).

#include <cstdint>

#include "sim/schedule/schedule.h"

namespace trainsim::schedule {

class VShapeSchedule : public Schedule {
public:
    [[nodiscard]] bool splits_backward() const override { return true; }
    [[nodiscard]] std::int64_t stage_of(std::int64_t rank, std::int32_t chunk, std::int64_t p) const final {
        return chunk == 0 ? rank : 2 * p - 1 - rank;
    }
    [[nodiscard]] std::int64_t rank_of(std::int64_t stage, std::int32_t /*chunk*/,
                                       std::int64_t p) const final {
        return stage < p ? stage : 2 * p - 1 - stage;
    }
};

}  // namespace trainsim::schedule
