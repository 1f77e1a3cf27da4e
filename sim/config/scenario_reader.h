// Turns a scenario document (already overridden, keys already checked) into a Scenario: types are
// checked here and Megatron's defaults filled in; cross-key rules are left to validate_scenario.
#pragma once

#include <string>

#include "sim/core/strict_json.h"
#include "sim/config/scenario.h"

namespace trainsim::config {

/// Turns Megatron-Core's uneven-split keys (decoder_first/last_pipeline_num_layers,
/// account_for_embedding/loss_in_pipeline_split, pipeline_model_parallel_layout) into
/// parallelism.layers_per_pipeline_stage or, where a rank's chunks differ, layers_per_virtual_stage, with
/// Megatron's rules. Throws InputError naming the keys and the rule.
void resolve_pipeline_split(Scenario& scenario);

/// Reads every section of `document`. `default_name` is the name when the document has none.
/// Throws InputError for a missing required key, a wrong type or a size out of range.
[[nodiscard]] Scenario read_scenario(const Json& document, const std::string& default_name);

}  // namespace trainsim::config
