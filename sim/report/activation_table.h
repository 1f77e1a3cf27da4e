// Activation memory per transformer layer under each memory-saving technique, as a share of the
// tensor-parallel-only baseline: Korthikanti Table 2 evaluated for a scenario's model and layout, the
// numbers behind the paper's Figure 7.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"
#include "sim/core/units.h"

namespace trainsim::report {

struct TechniqueRow {
    std::string technique;  // "tensor parallel (baseline)", "+ sequence parallel", ...
    Bytes per_layer{0};
    double share_of_baseline = 0.0;
};

struct ActivationTable {
    std::string name;
    std::vector<TechniqueRow> rows;
};

[[nodiscard]] ActivationTable activation_table(const config::Scenario& scenario);

void write_text(std::ostream& out, const std::vector<ActivationTable>& tables);
[[nodiscard]] nlohmann::ordered_json to_json(const std::vector<ActivationTable>& tables);

}  // namespace trainsim::report
