// Reader for the GEMM tables that AMD's BLAS benchmark clients print: hipblaslt-bench (and rocblas-bench,
// same layout) write a CSV header line "[0]:transA,transB,...,m,n,k,...,hipblaslt-Gflops,...,us" and,
// under it, one indented comma-separated row per problem (starting with the transA flag N, T or C), with
// "--Solution ..." kernel lines between.
// Each row is one GEMM of m x n x k (times batch_count) that took `us` microseconds per call.
#pragma once

#include <string>

#include "calibrate/measure/measurement.h"

namespace trainsim::calibrate {

/// True when `text` has a BLAS-bench header line (a comma list naming m, n, k, us and a *-Gflops column).
[[nodiscard]] bool looks_like_blas_bench_table(const std::string& text);

/// The GEMM records of every row. A row that does not parse (wrong field count, m/n/k/us not positive
/// numbers) is skipped and counted in one warning naming its lines. Throws InputError "PATH: RULE" when
/// no row parses, or a header lacks m, n, k or us.
[[nodiscard]] MeasurementSet parse_blas_bench_table(const std::string& text, const std::string& path);

}  // namespace trainsim::calibrate
