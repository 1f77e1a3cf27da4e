#include "sim/core/did_you_mean.h"

#include <algorithm>
#include <numeric>

namespace trainsim {

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    std::iota(row.begin(), row.end(), std::size_t{0});
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
    std::string best;
    std::size_t best_distance = 0;
    for (const auto& c : candidates) {
        const std::size_t d = edit_distance(word, c);
        if (best.empty() || d < best_distance) {
            best = c;
            best_distance = d;
        }
    }
    // A typo changes a few characters; beyond a third of the word it is a different word.
    const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
    return best_distance <= limit ? best : std::string{};
}

}  // namespace trainsim
