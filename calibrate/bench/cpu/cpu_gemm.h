// GEMMs on one CPU core with Eigen, in fp32 (Eigen has no fast 16-bit GEMM): C[m,n] = A[m,k]·B[k,n],
// `batch` times for a batched (attention) case.
#pragma once

#include <memory>

#include "calibrate/bench/backend.h"

namespace trainsim::calibrate {

[[nodiscard]] std::unique_ptr<TimedOp> make_cpu_gemm(const GemmCase& gemm);

}  // namespace trainsim::calibrate
