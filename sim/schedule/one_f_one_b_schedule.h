// Non-interleaved 1F1B (PipeDream-Flush), Megatron-LM's forward_backward_pipelining_without_interleaving:
// W = min(p − r − 1, m) warm-up forwards, then one forward and one backward alternately, then the
// remaining backwards.
#pragma once

#include "sim/schedule/schedule.h"

namespace trainsim::schedule {

class OneFOneBSchedule final : public Schedule {
public:
    explicit OneFOneBSchedule(PipelineShape shape) : shape_(shape) {}
    [[nodiscard]] std::string name() const override { return "1f1b"; }
    [[nodiscard]] std::vector<Step> steps(std::int64_t rank) const override;

private:
    PipelineShape shape_;
};

}  // namespace trainsim::schedule
