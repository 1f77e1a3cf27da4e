// The handcrafted zero-bubble schedules ZB-H1 and ZB-H2 (Qi et al., "Zero Bubble Pipeline
// Parallelism", ICLR 2024, §2.1-2.2 and Figure 3). Each backward is split into B (input gradient) and
// W (weight gradient). Rank r runs `warmup(r)` forwards, then steady triples F, B and, once `delay(r)`
// B's are waiting for theirs, the oldest pending W; then the cool-down B's, each followed by a W, and
// the remaining W's.
//   ZB-H1: warm-up p − 1 − r, W delayed by r: every rank holds p micro-batches, as 1F1B's first rank
//          does; bubble (p − 1)(F + B − W).
//   ZB-H2: warm-up 2(p − 1 − r), W delayed by 2r: 2p − 1 micro-batches in flight on every rank; bubble
//          (p − 1)(F + B − 2W), zero when F + B ≤ 2W, once the optimizer step no longer synchronises
//          the ranks (the paper's post-validation, which trainsim does not model: see scenarios/README).
#pragma once

#include "sim/schedule/schedule.h"

namespace trainsim::schedule {

class ZeroBubbleHandcraftedSchedule final : public Schedule {
public:
    enum class Variant : std::uint8_t { H1, H2 };
    ZeroBubbleHandcraftedSchedule(PipelineShape shape, Variant variant) : shape_(shape), variant_(variant) {}
    [[nodiscard]] std::string name() const override { return variant_ == Variant::H1 ? "zb-h1" : "zb-h2"; }
    [[nodiscard]] std::vector<Step> steps(std::int64_t rank) const override;
    [[nodiscard]] bool splits_backward() const override { return true; }
    /// Forwards before the rank's first B.
    [[nodiscard]] std::int64_t warmup(std::int64_t rank) const;
    /// B's whose W waits before the steady state runs one W per F and B.
    [[nodiscard]] std::int64_t delay(std::int64_t rank) const;

private:
    PipelineShape shape_;
    Variant variant_;
};

}  // namespace trainsim::schedule
