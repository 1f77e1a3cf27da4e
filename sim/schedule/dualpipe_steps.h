// The eight steps that DualPipe and DualPipeV share (deepseek-ai/DualPipe, dualpipe.py and
// dualpipev.py, step()): DualPipeV runs them on each of its p ranks; DualPipe on each half of its p
// ranks, with p/2 ranks and m/2 micro-batches per direction (its half_rank and half_num_chunks).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/schedule/schedule.h"

namespace trainsim::schedule {

/// Rank `rank` of `ranks` (the V's ranks, or DualPipe's half) with `microbatches` per chunk, the
/// chunks as the reference's phases (0 the first pass down, 1 the other). Rank r runs:
///   1. 2(ranks − r − 1) F of chunk 0            2. r + 1 times F c0, F c1
///   3. ranks − r − 1 times B c1 (split), W, F c1 4. microbatches − 2·ranks + r + 1 times F c0&B c1, F c1&B
///   c0
///   5. ranks − r − 1 times B c1, F c1&B c0      6. r + 1 times B c1, B c0 (split from the middle one on)
///   7. ranks − r − 1 times W, B c0 (split)      8. r + 1 W
/// A split B leaves its W in a FIFO that each W step pops (WeightGradStore); other backwards run B and
/// W fused. The innermost rank's first step-4 pair is not overlapped ("to further reduce bubble").
[[nodiscard]] std::vector<Step> dualpipe_steps(std::int64_t ranks, std::int64_t microbatches,
                                               std::int64_t rank);

}  // namespace trainsim::schedule
