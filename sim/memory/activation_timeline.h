// Activation memory replayed over the simulated timeline: each forward op allocates what it keeps for
// the backward when it finishes; the backward of the same (micro-batch, chunk, layer) frees it when
// it finishes. Recomputed forwards allocate again and are freed by the same backward.
#pragma once

#include <vector>

#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"

namespace trainsim::memory {

struct ActivationPeak {
    Bytes peak{0};
    SimTime at{};
    std::int64_t microbatches_in_flight = 0;  // distinct (micro-batch, chunk) holding activations then
};

/// Activation bytes held from `time` on.
struct MemorySample {
    SimTime time{};
    Bytes held{0};
};

struct ActivationTimeline {
    std::vector<MemorySample> samples;  // one per change, in time order
    ActivationPeak peak;
};

/// One entry per simulated GPU.
[[nodiscard]] std::vector<ActivationTimeline> activation_timelines(const program::IterationProgram& program,
                                                                   const engine::RunResult& run);

}  // namespace trainsim::memory
