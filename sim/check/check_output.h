// A comparison as text (a table), JSON (one object) or CSV (one row per op, phase and the iteration).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "sim/check/comparison.h"

namespace trainsim::check {

struct CheckHeader {
    std::string scenario;
    std::vector<std::string> measured;  // the trace files
};

void write_text(std::ostream& out, const CheckHeader& header, const Comparison& c);
[[nodiscard]] nlohmann::json to_json(const CheckHeader& header, const Comparison& c);
/// Columns: level (op, phase, iteration), op, phase, count, measured_s, simulated_s, error.
void write_csv(std::ostream& out, const Comparison& c);

}  // namespace trainsim::check
