// Where FP8 training's time goes (training.fp8_format): the GEMMs that ran in FP8, those that stayed
// BF16, and Transformer Engine's cast/transpose/amax kernels (sim/workload/fp8_layer.h), read off the
// priced ops of each stage's representative GPU.
#pragma once

#include "sim/core/units.h"
#include "sim/program/iteration_program.h"

namespace trainsim::report {

/// Busy time of one GPU in one iteration, mean over pipeline stages. These are parts of the breakdown's
/// compute and recompute, not extra time.
struct Fp8Time {
    Seconds fp8_gemm;   // the linear layers' GEMMs (forward, dgrad, wgrad)
    Seconds bf16_gemm;  // attention's batched GEMMs, the output layer
    Seconds overhead;   // TE's cast, transpose and amax kernels, weight casts included
    // Of fp8_gemm: what the split-accumulator GEMMs (dgrad, wgrad) took beyond the fast-accumulation
    // rate, d·(1 − 1/slowdown) each (cost::GemmPrecision::Fp8SplitAccumulator).
    Seconds split_accumulator;
};

/// `split_accumulator_slowdown` is the profile's (HardwareProfile::fp8_split_accumulator_slowdown), the
/// factor the cost model priced those GEMMs with.
[[nodiscard]] Fp8Time fp8_time(const program::IterationProgram& program, double split_accumulator_slowdown);

}  // namespace trainsim::report
