// JSON forms of the reports: the keys of DESIGN.md §5 are a contract.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/report/iteration_report.h"
#include "sim/report/layer_report.h"

namespace trainsim::report {

[[nodiscard]] nlohmann::ordered_json to_json(const IterationReport& report);
[[nodiscard]] nlohmann::ordered_json to_json(const LayerReport& report);
/// Where hidden recomputation ran, by the kind of wait (the breakdown's "hidden_recompute_in").
[[nodiscard]] nlohmann::ordered_json to_json(const HiddenRecompute& hidden);

}  // namespace trainsim::report
