// Interleaved 1F1B with Megatron-LM's exact ordering (papers.md §1.11): a schedule table built group by
// group of N = microbatch_group_size_per_vp_stage micro-batches (default p), chunk-major inside a group;
// forward k runs table[k], backward k runs table[k] with the chunk reversed (v − 1 − c);
// W = min((p − r − 1)·2 + (v − 1)·N, m·v) warm-up forwards, then F/B pairs, then the cool-down.
#pragma once

#include "sim/schedule/schedule.h"

namespace trainsim::schedule {

class InterleavedSchedule final : public Schedule {
public:
    InterleavedSchedule(PipelineShape shape, std::int64_t group_size);
    [[nodiscard]] std::string name() const override { return "interleaved"; }
    [[nodiscard]] std::vector<Step> steps(std::int64_t rank) const override;
    [[nodiscard]] std::int64_t warmup(std::int64_t rank) const;

private:
    PipelineShape shape_;
    std::int64_t group_size_;
    std::vector<Step> table_;  // virtual micro-batch id → (micro-batch, chunk) of its forward
};

}  // namespace trainsim::schedule
