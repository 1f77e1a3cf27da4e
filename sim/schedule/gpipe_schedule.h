// GPipe: every forward, then every backward (latest micro-batch first).
#pragma once

#include "sim/schedule/schedule.h"

namespace trainsim::schedule {

class GPipeSchedule final : public Schedule {
public:
    explicit GPipeSchedule(PipelineShape shape) : shape_(shape) {}
    [[nodiscard]] std::string name() const override { return "gpipe"; }
    [[nodiscard]] std::vector<Step> steps(std::int64_t rank) const override;

private:
    PipelineShape shape_;
};

}  // namespace trainsim::schedule
