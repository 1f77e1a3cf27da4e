// "Did you mean" suggestions for misspelled keys and names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trainsim {

/// Levenshtein distance between two strings.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word`, or "" when none is close enough to be a plausible typo.
[[nodiscard]] std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace trainsim
