// Breadth-first (looping, layer-major) pipeline schedule of Lamy-Poirier (arXiv 2211.05953), as PyTorch's
// ScheduleLoopedBFS runs it (papers.md §4): each rank runs the forward of every micro-batch through its
// first local chunk, then its next chunk, and so on; then the backwards, last chunk first, latest
// micro-batch first. Prefers the earlier stage over the earlier micro-batch, so all m micro-batches are
// in flight at once.
#pragma once

#include "sim/schedule/schedule.h"

namespace trainsim::schedule {

class BreadthFirstSchedule final : public Schedule {
public:
    explicit BreadthFirstSchedule(PipelineShape shape) : shape_(shape) {}
    [[nodiscard]] std::string name() const override { return "breadth_first"; }
    [[nodiscard]] std::vector<Step> steps(std::int64_t rank) const override;

private:
    PipelineShape shape_;
};

}  // namespace trainsim::schedule
