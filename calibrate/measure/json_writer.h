// Deterministic JSON text in the layout of the shipped hardware profiles: an object whose members are all
// scalars or lists of scalars (a value object, a curve point, an assumption, a record with tags) on one line,
// everything else one member per line.
// Fitted profiles and measurement files are reviewed as diffs, so the layout must not depend on anything
// but the document.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace trainsim::calibrate {

using OrderedJson = nlohmann::ordered_json;

/// The document as text, ending in a newline. Numbers: JSON integers as digits; floats in their shortest
/// round-trip form, with ".0" added when that form has neither a point nor an exponent (5.0, 18.0), so a
/// float stays a float when read back. The members of an object named "sources" are one per line even
/// though they are scalars (a citation table reads better that way).
[[nodiscard]] std::string to_profile_style_json(const OrderedJson& document);

/// A float in the same form, e.g. 1.7e+10, 0.28, 5.0.
[[nodiscard]] std::string format_json_float(double value);

}  // namespace trainsim::calibrate
