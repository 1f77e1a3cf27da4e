// Source ids of inputs that a base profile already uses for another citation. A profile fitted from a log
// and then refitted onto itself, or a user's log named like a shipped one, would otherwise collide in the
// fitted profile's sources table, and the error would name the base, not the input.
#pragma once

#include "calibrate/measure/json_writer.h"
#include "calibrate/measure/measurement.h"

namespace trainsim::calibrate {

/// Renames every source id of `measurements` (files, cited sources, records' origins and citation texts,
/// device facts) that `base_sources` (a profile's sources table) holds with a different citation: S-X
/// becomes S-X-2 (or the first free number). Returns the renamings as "S-X -> S-X-2" lines.
std::vector<std::string> rename_sources_taken_by(MeasurementSet& measurements,
                                                 const OrderedJson& base_sources);

/// `text` with every citation of `from` (as a whole id, not a prefix of a longer one) replaced by `to`.
[[nodiscard]] std::string replace_source_id(const std::string& text, const std::string& from,
                                            const std::string& to);

}  // namespace trainsim::calibrate
