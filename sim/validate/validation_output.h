// Prints a validation report: a text table (simulated vs published, error, tolerance, verdict), JSON
// or CSV.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "sim/validate/validation_run.h"

namespace trainsim::validate {

void write_text(std::ostream& out, const ValidationReport& report);
void write_csv(std::ostream& out, const ValidationReport& report);
[[nodiscard]] nlohmann::ordered_json to_json(const ValidationReport& report);

/// The deviation as the case's tolerance is stated: "+4.9 %" (relative) or "+0.31 pp" / "+0.2 GiB".
[[nodiscard]] std::string format_error(const CaseResult& result);
/// "±10 %", "±2 pp", "≤ 20 % + 1 pp".
[[nodiscard]] std::string format_tolerance(const ValidationCase& spec);

}  // namespace trainsim::validate
