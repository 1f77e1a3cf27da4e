// The JSON of `trainsim whatif --format json` and of trainsim.whatif() in Python: the baseline's run
// report, its critical path, and one object per variation in rank order.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/whatif/sensitivity.h"

namespace trainsim::whatif {

[[nodiscard]] nlohmann::ordered_json to_json(const WhatIf& result);

}  // namespace trainsim::whatif
