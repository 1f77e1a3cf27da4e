// The names `run` gives its benchmarks, which the importer parses back: a family, then key:value fields,
// e.g. "gemm/m:8192/n:2304/k:6144/batch:1/class:dense/dtype:bf16". The name is the record: nothing about a
// measurement lives only in Google Benchmark's counters.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "calibrate/measure/measurement.h"

namespace trainsim::calibrate {

struct BenchmarkName {
    std::string family;  // "gemm", "kernel" or "collective"
    std::vector<std::pair<std::string, std::string>> fields;

    [[nodiscard]] std::string text() const;
};

/// What a benchmark measures, before it is measured.
[[nodiscard]] BenchmarkName gemm_benchmark_name(const cost::GemmShape& shape, cost::GemmClass cls,
                                                const std::string& dtype);
[[nodiscard]] BenchmarkName kernel_benchmark_name(KernelKind kind, std::int64_t bytes_moved,
                                                  const std::string& dtype);
[[nodiscard]] BenchmarkName collective_benchmark_name(cost::CollectiveKind op, int ranks, int nodes,
                                                      std::int64_t bytes, const std::string& dtype);

/// Splits a name into family and fields. Segments Google Benchmark appends ("manual_time",
/// "iterations:5", "repeats:3", "min_time:0.1", "threads:1", ...) are dropped. Returns an empty family
/// when a segment is neither key:value nor one of those.
[[nodiscard]] BenchmarkName parse_benchmark_name(std::string_view name);

}  // namespace trainsim::calibrate
