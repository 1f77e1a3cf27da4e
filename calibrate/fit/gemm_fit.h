// GEMM targets: compute.gemm.efficiency_vs_flops and compute.gemm_fp8.efficiency_vs_flops (with the cost
// model's wave-quantization correction taken out of each measurement), compute.gemm.min_kernel_us,
// compute.gemm_fp8.split_accumulator_slowdown, compute.attention.*.
#pragma once

#include "calibrate/fit/fit_state.h"

namespace trainsim::calibrate {

/// Which GEMM target a record feeds, by its dtype: the 16-bit curve (compute.gemm against
/// gpu.peak_tflops); the FP8 curve (compute.gemm_fp8 against gpu.fp8_peak_tflops: "fp8", "fp8_e4m3",
/// "e4m3", "e5m2", fast accumulation); or the split accumulator's slowdown (kFp8SplitAccumulatorDtype:
/// paired with the same shape's fast-accumulation record, and kept out of the FP8 curve).
enum class GemmRecordPrecision { Bits16, Fp8Fast, Fp8SplitAccumulator };
[[nodiscard]] GemmRecordPrecision gemm_record_precision(const GemmMeasurement& g);

/// The cost model's wave factor for `shape` (sim/cost/cost_model.cc, README "GEMM"): the fill of the SMs
/// by the shape's output tiles relative to a cube of the same FLOPs, capped at 1. A measured efficiency
/// divided by it is what the curve must hold for the cost model to reproduce the measurement.
[[nodiscard]] double gemm_wave_factor(const cost::GemmShape& shape, int num_sms, int tile_m, int tile_n);

/// Fits the GEMM targets that hold directives. Options of the curve: method, decimals/significant,
/// knot_spacing, points (curve_fit.h), "exclude_tags": [tags] (records compared, not fitted).
void fit_gemm_targets(FitState& state);

}  // namespace trainsim::calibrate
