// How a scenario rule names the settings it refuses, and how it refuses them: shared by the rules of
// scenario_validation.cc and moe_validation.cc, so that every message reads "key=value ... must ...".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::config {

/// One setting of a product a rule constrains ("parallelism.data_parallel_size", 8).
struct Factor {
    std::string_view path;
    std::int64_t value;
};

/// "path=value".
[[nodiscard]] std::string show(std::string_view path, std::int64_t value);
[[nodiscard]] std::string show(const Factor& f);
/// "a=2 × b=3".
[[nodiscard]] std::string show(const std::vector<Factor>& factors);

/// Throws the InputError a broken rule reports (one line; exit status 2).
[[noreturn]] void fail(const std::string& message);

}  // namespace trainsim::config
