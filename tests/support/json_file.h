// Reading a JSON file (a trace, a report) from the tests, with nlohmann's parser compiled optimised.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace trainsim::testing {

/// Parses the JSON file at `path`; throws nlohmann::json::parse_error on bad JSON.
[[nodiscard]] __attribute__((visibility("default"))) nlohmann::json read_json_file(const std::string& path);

}  // namespace trainsim::testing
