// `--set key=value` overrides, applied to the scenario document before it is read and validated, so
// that an overridden value passes through exactly the checks a value in the file would.
#pragma once

#include <vector>

#include "sim/core/strict_json.h"
#include "sim/config/scenario.h"

namespace trainsim::config {

/// Sets each override's dotted path in `document` (an object), in order; later ones win. A path must
/// be a key of the schema (DESIGN.md §4) or a whole section; a missing section is created. Throws
/// InputError `--set PATH: unknown key (did you mean ...?)` for any other path.
void apply_overrides(Json& document, const std::vector<Override>& overrides);

}  // namespace trainsim::config
