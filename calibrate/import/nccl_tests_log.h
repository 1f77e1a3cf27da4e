// Reader for the text output of NVIDIA's nccl-tests (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// sendrecv_perf): one row per size with count, type, redop, root, then time, algbw, busbw and #wrong for
// the out-of-place and the in-place run. Header lines start with '#'.
#pragma once

#include <optional>
#include <string>

#include "calibrate/measure/measurement.h"

namespace trainsim::calibrate {

/// What the log may not say itself. A log names its collective in "# Collective test starting: X_perf"
/// (nccl-tests >= 2.13) or anywhere as "X_perf"; its ranks in the "#  Rank N Group ... on HOST" lines or
/// "# nThread T nGpus G" (one process); its nodes by the distinct hosts of the Rank lines. A value given
/// here must agree with the log's when both exist.
struct NcclLogOptions {
    std::optional<cost::CollectiveKind> op;
    std::optional<int> ranks;
    std::optional<int> nodes;
};

/// Reads the log at `path`. Every row gives up to two records (out-of-place and in-place); a group of
/// "N/A" columns gives none. Strict: a malformed row, an algbw that is not size/time, or a busbw that is
/// not algbw times the collective's factor is one InputError line "PATH:LINE: RULE".
[[nodiscard]] MeasurementSet read_nccl_tests_log(const std::string& path, const NcclLogOptions& options = {});

/// The same from text already in memory; `path` labels messages and gives the source id.
[[nodiscard]] MeasurementSet parse_nccl_tests_log(const std::string& text, const std::string& path,
                                                  const NcclLogOptions& options = {});

}  // namespace trainsim::calibrate
