// Numbers in one-line messages (loader errors, cost warnings): "%g", so that the same value always reads
// the same way, e.g. 1e+08 or 2.1e+09.
#pragma once

#include <array>
#include <cstdio>
#include <string>

namespace trainsim::cost {

[[nodiscard]] inline std::string format_number(double v) {
    std::array<char, 32> buffer{};
    std::snprintf(buffer.data(), buffer.size(), "%g", v);
    return buffer.data();
}

}  // namespace trainsim::cost
