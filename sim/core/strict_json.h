// Strict JSON, the one reader of every input file (scenarios, sweeps, validation cases, hardware profiles,
// calibration measurements and fit specs): malformed text, repeated keys and absurd nesting are errors
// that say where, the same way for every kind of file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim {

/// Keys keep document order, so that "the first error" is the first one the user wrote.
using Json = nlohmann::ordered_json;

/// Parses `text`. Throws InputError:
/// - `SOURCE: invalid JSON at line L, column C: REASON` for malformed text (1-based; the column of the
///   character the parser stopped at, one past the last for an unexpected end of input);
/// - `SOURCE: PATH: duplicate key (each key may appear only once)` for a key repeated in one object,
///   which nlohmann would otherwise resolve silently (last one wins);
/// - `SOURCE: PATH: nested deeper than 64 levels of arrays and objects` (`SOURCE: nested ...` at the top).
[[nodiscard]] Json parse_strict_json(const std::string& text, const std::string& source);

/// A value as written in JSON, shortened to fit a one-line message: 4, "4", 4.5, null, {"a":1,...
[[nodiscard]] std::string describe_json(const Json& value);

/// A key made safe for a one-line message: control characters are escaped as in JSON.
[[nodiscard]] std::string printable_key(std::string_view key);

/// "a, b, c".
[[nodiscard]] std::string comma_list(const std::vector<std::string>& words);

/// `section.key`, or `key` at the top level (empty section).
[[nodiscard]] std::string join_path(std::string_view section, std::string_view key);

}  // namespace trainsim
