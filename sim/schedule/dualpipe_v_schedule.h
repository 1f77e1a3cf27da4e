// DualPipeV (deepseek-ai/DualPipe, dualpipe/dualpipev.py; Sea AI Lab's "cut-in-half" DualPipe): p ranks,
// 2p stages in a V (chunk 0 of rank r is stage r, chunk 1 is stage 2p − 1 − r, so rank 0 holds the
// first and the last stage), every micro-batch down chunk 0 and back up chunk 1. Rank r runs the
// reference's eight steps (dualpipe_steps.h) for p ranks and m micro-batches. The overlapped F&B chunk pairs
// (Step::paired) receive both their inputs first; the program interleaves their MoE layers at the expert
// all-to-alls (sim/program/overlapped_pair.h) and runs dense ones F then B, as the reference does for
// modules without an overlapped_forward_backward. Needs m ≥ 2p. Each rank holds up to 2p + 1 chunks'
// activations, the README's "PP + 1" with PP = 2p stages.
#pragma once

#include "sim/schedule/v_shape_schedule.h"

namespace trainsim::schedule {

class DualPipeVSchedule final : public VShapeSchedule {
public:
    explicit DualPipeVSchedule(PipelineShape shape) : shape_(shape) {}
    [[nodiscard]] std::string name() const override { return "dualpipev"; }
    [[nodiscard]] std::vector<Step> steps(std::int64_t rank) const override;

private:
    PipelineShape shape_;
};

}  // namespace trainsim::schedule
