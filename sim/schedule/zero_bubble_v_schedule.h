// ZB-V (Qi et al., "Pipeline Parallelism with Controllable Memory", 2024; sail-sg/zero-bubble-pipeline-
// parallelism, scheduler/zbv.py): p ranks, 2p stages in a V (chunk 0 of rank r is stage r, chunk 1 is
// stage 2p − 1 − r), each backward split into B and W. The reference builds the order greedily from
// pass times and memory; this is the same greedy run with the paper's ZB-V assumptions, T_F = T_B = T_W
// and free communication, and the reference launcher's activation weights (F +74, B −42, W −32 per
// chunk, from 34h + 5as with h = 4096, a = 8, s = 4096) under its limit of 2p chunk-F's: the 1F1B peak.
// The greedy is retried with each bubble-fill choice and its per-rank bubbles fed back, keeping the
// order with the least bubble, as the reference does.
#pragma once

#include "sim/schedule/v_shape_schedule.h"

namespace trainsim::schedule {

class ZeroBubbleVSchedule final : public VShapeSchedule {
public:
    /// Throws InputError when the reference's greedy cannot order (p, m).
    explicit ZeroBubbleVSchedule(PipelineShape shape);
    [[nodiscard]] std::string name() const override { return "zb-v"; }
    [[nodiscard]] std::vector<Step> steps(std::int64_t rank) const override;

private:
    std::vector<std::vector<Step>> order_;  // per rank
};

}  // namespace trainsim::schedule
