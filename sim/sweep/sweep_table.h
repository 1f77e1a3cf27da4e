// The sweep's CSV table: one row per grid point, the axis values first (the row's key), then the
// DESIGN.md §5 contract fields of the point's report, and an `error` column that is empty unless the
// point could not be simulated (then the metric cells are empty).
#pragma once

#include <string>
#include <vector>

#include "sim/sweep/point_runner.h"
#include "sim/sweep/sweep_spec.h"

namespace trainsim::sweep {

/// The metric columns after the axes, in order.
[[nodiscard]] const std::vector<std::string>& metric_columns();

/// The header line (with its LF): the axis keys, then metric_columns().
[[nodiscard]] std::string header_line(const SweepSpec& spec);

/// One whole row (with its LF) for a point with axis cells `cells` (grid.h point_cells).
[[nodiscard]] std::string row_line(const std::vector<std::string>& cells, const PointOutcome& outcome);

}  // namespace trainsim::sweep
