#include "sim/sweep/grid.h"

#include "sim/sweep/csv.h"

namespace trainsim::sweep {

std::vector<std::size_t> axis_indices(const SweepSpec& spec, std::size_t point) {
    std::vector<std::size_t> digits(spec.axes.size(), 0);
    for (std::size_t a = spec.axes.size(); a-- > 0;) {
        const std::size_t radix = spec.axes[a].values.size();
        digits[a] = point % radix;
        point /= radix;
    }
    return digits;
}

std::vector<config::Override> point_overrides(const SweepSpec& spec, std::size_t point) {
    const std::vector<std::size_t> digits = axis_indices(spec, point);
    std::vector<config::Override> overrides;
    overrides.reserve(spec.axes.size());
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
        // The value as JSON text: the override parser reads valid JSON as JSON, so "1f1b" stays a string.
        overrides.push_back({spec.axes[a].key, spec.axes[a].values[digits[a]].dump()});
    }
    return overrides;
}

std::vector<std::string> point_cells(const SweepSpec& spec, std::size_t point) {
    const std::vector<std::size_t> digits = axis_indices(spec, point);
    std::vector<std::string> cells;
    cells.reserve(spec.axes.size());
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
        cells.push_back(value_text(spec.axes[a].values[digits[a]]));
    }
    return cells;
}

}  // namespace trainsim::sweep
