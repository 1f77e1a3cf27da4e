// The points of a sweep's grid: point i is the mixed-radix number whose digits index the axes' values,
// the last axis varying fastest (nested loops in file order).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/sweep/sweep_spec.h"

namespace trainsim::sweep {

/// The value index on each axis of point `point` (< spec.size()).
[[nodiscard]] std::vector<std::size_t> axis_indices(const SweepSpec& spec, std::size_t point);

/// The `--set` overrides that turn the base into point `point`.
[[nodiscard]] std::vector<config::Override> point_overrides(const SweepSpec& spec, std::size_t point);

/// The point's axis values as CSV cell text (csv.h value_text), one per axis: the point's key in the CSV.
[[nodiscard]] std::vector<std::string> point_cells(const SweepSpec& spec, std::size_t point);

}  // namespace trainsim::sweep
