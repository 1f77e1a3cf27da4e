// The measurement file, "trainsim-measurements/1": records with their sources, as JSON. `import` writes
// it from nccl-tests logs and benchmark output; calibrate/data/ keeps published numbers in it.
// The format is documented in calibrate/README.md.
#pragma once

#include <string>

#include "calibrate/measure/json_writer.h"
#include "calibrate/measure/measurement.h"

namespace trainsim::calibrate {

inline constexpr const char* kMeasurementSchema = "trainsim-measurements/1";

/// Reads a measurement file. `path` labels messages and gives the file's source id. Throws InputError
/// (one line: "PATH: KEY RULE") on anything malformed, an unknown key, a record that cites a source id
/// missing from the file's table, or two records with the same id.
[[nodiscard]] MeasurementSet read_measurement_file(const std::string& path);

/// The same from text already in memory.
[[nodiscard]] MeasurementSet parse_measurement_file(const std::string& text, const std::string& path);

/// The file for `set`: its records, its sources (the set's cited sources and its input files), and its
/// device facts. `description` says where the records came from.
[[nodiscard]] OrderedJson to_measurement_json(const MeasurementSet& set, const std::string& description);

}  // namespace trainsim::calibrate
