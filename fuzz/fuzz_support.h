// Shared by the fuzz targets: the contract every rejected input must meet (DESIGN.md §5: one line
// that names the key and the rule), checked with abort() so that libFuzzer records the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace trainsim::fuzz {

/// Aborts (a finding) unless `message` is one non-empty line.
inline void require_one_line(std::string_view message) {
    if (message.empty() || message.find('\n') != std::string_view::npos) {
        std::fprintf(stderr, "error message is not one non-empty line: [%.*s]\n",
                     static_cast<int>(message.size()), message.data());
        std::abort();
    }
}

/// Aborts with `what` when `ok` is false. assert() would vanish under NDEBUG in a Release build.
inline void require(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "invariant broken: %s\n", what);
        std::abort();
    }
}

}  // namespace trainsim::fuzz
