// Reader for the output of mamf-finder.py (stas00/ml-engineering, compute/accelerator/benchmarks), the
// PyTorch torch.mm / torch._scaled_mm sweep that people publish as "Maximum Achievable Matmul FLOPS" logs.
// Its header names the dtype ("** Dtype: torch.bfloat16"); each shape is one line
//     "  2916 |   25.6(mean)   25.6(median)   25.8(max) @ 13312x15360x6144     | best: ... TFLOPS"
// (versions before 2025: "  N | 807.5 TFLOPS @ MxNxK | best: ..." or "X(max) / Y(median) TFLOPS @ ..."),
// and the run ends with the best shapes ("mean:   35.1 TFLOPS @ 15360x3072x1024 (MxNxK)", or before 2025
// "The best outcome was 831.7TFLOPS @ MxNxK (MxNxK) (tried N shapes)"). Only rates are printed (one decimal);
// the time of a call is 2mnk / rate.
#pragma once

#include <string>

#include "calibrate/measure/measurement.h"

namespace trainsim::calibrate {

/// True when `text` has a mamf-finder shape line, best-outcome line or "** Dtype: torch." header line.
[[nodiscard]] bool looks_like_mamf_finder_log(const std::string& text);

/// One GEMM record per shape line, at the mean rate (else the median, else the max that old versions
/// printed), tagged "mamf-finder" and the statistic; plus the best-outcome line of that statistic when no
/// shape line repeats it (console copies keep only the last shape line), tagged "best-of-run" too. Other
/// summary lines and lines that are not mamf-finder's own are skipped and counted in warnings. The dtype
/// comes from the header and must have a peak in a hardware profile (bfloat16/float16: gpu.peak_tflops,
/// float8_*: gpu.fp8_peak_tflops); without a header it is mamf-finder's default, bfloat16, tagged
/// "dtype-assumed". Throws InputError "PATH: line L: RULE" for a dtype without a peak or a shape line
/// that does not parse, and "PATH: RULE" when no line gives a record.
[[nodiscard]] MeasurementSet parse_mamf_finder_log(const std::string& text, const std::string& path);

}  // namespace trainsim::calibrate
