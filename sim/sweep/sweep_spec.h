// A sweep file: a base scenario and axes of overrides whose grid of combinations `trainsim sweep` runs.
//
//   {
//     "base": "../korthikanti-175b.json",               (a path, relative to the sweep file, or an object)
//     "axes": {
//       "parallelism.data_parallel_size": [1, 2, 4],               (a list of values)
//       "training.micro_batch_size": {"from": 1, "to": 4},         (an integer range, step 1)
//       "training.global_batch_size": {"from": 64, "to": 512, "factor": 2},   (64, 128, 256, 512)
//       "training.recompute_granularity": {"values": ["selective", "full"]}
//     }
//   }
//
// Axes are nested loops in file order: the first axis varies slowest. Every point is the base with one
// value of each axis applied as a `--set key=value` override, so a point passes exactly the checks a
// scenario file would.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/core/strict_json.h"

namespace trainsim::sweep {

struct Axis {
    std::string key;                   // a dotted scenario key, e.g. parallelism.data_parallel_size
    std::vector<Json> values;  // in sweep order; their CSV cells are distinct
};

struct SweepSpec {
    std::string source;        // the sweep file, for messages
    std::string base_path;     // the base scenario file, or "" when the base is inline
    std::string base_text;     // the base scenario's JSON text (the file's, or the inline object's)
    std::string default_name;  // the scenario name when the base has none
    std::vector<Axis> axes;

    /// The number of grid points: the product of the axes' lengths.
    [[nodiscard]] std::size_t size() const;
};

/// The most points a sweep may have: a guard against a range typo that would run for ever.
inline constexpr std::size_t kMaxSweepPoints = 10'000'000;

/// Parses a sweep document. `source` is its path (a relative base path is resolved against its
/// directory). Throws InputError naming the key and the rule for anything malformed: unknown keys,
/// a missing or unreadable base, an axis that is not a scenario key, an empty axis, a bad range,
/// values that would print as the same CSV cell, or more than kMaxSweepPoints points.
[[nodiscard]] SweepSpec parse_sweep(const std::string& json_text, const std::string& source);

/// Reads and parses a sweep file.
[[nodiscard]] SweepSpec load_sweep(const std::string& path);

}  // namespace trainsim::sweep
