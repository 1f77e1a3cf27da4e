// DualPipe (DeepSeek-V3 report §3.2.1; deepseek-ai/DualPipe, dualpipe/dualpipe.py): p ranks (even), a
// p-stage model held twice. Chunk 0 of rank r is stage r of the copy fed at rank 0, chunk 1 stage
// p − 1 − r of the copy fed at rank p − 1, so each rank holds two stages' parameters and ranks 0 and
// p − 1 both hold the first and the last stage. m micro-batches (even, m ≥ 2p), m/2 from each end.
// Rank r runs the eight steps (dualpipe_steps.h) for p/2 ranks, m/2 micro-batches and half-rank
// min(r, p − 1 − r); its phase 0 is the direction entering on its own half (chunk 0 for r < p/2,
// chunk 1 for r ≥ p/2). Micro-batches are numbered 0..m/2 − 1 in each chunk (direction).
#pragma once

#include "sim/schedule/schedule.h"

namespace trainsim::schedule {

class DualPipeSchedule final : public Schedule {
public:
    explicit DualPipeSchedule(PipelineShape shape) : shape_(shape) {}
    [[nodiscard]] std::string name() const override { return "dualpipe"; }
    [[nodiscard]] std::vector<Step> steps(std::int64_t rank) const override;
    [[nodiscard]] bool splits_backward() const override { return true; }
    [[nodiscard]] std::int64_t model_stages(std::int64_t p, std::int64_t /*v*/) const override { return p; }
    [[nodiscard]] std::int64_t stage_of(std::int64_t rank, std::int32_t chunk,
                                        std::int64_t p) const override {
        return chunk == 0 ? rank : p - 1 - rank;
    }
    [[nodiscard]] std::int64_t rank_of(std::int64_t stage, std::int32_t chunk,
                                       std::int64_t p) const override {
        return chunk == 0 ? stage : p - 1 - stage;
    }

private:
    PipelineShape shape_;
};

}  // namespace trainsim::schedule
