#include "calibrate/fit/rounding.h"

#include <array>
#include <cmath>
#include <cstdio>

namespace trainsim::calibrate {

double Rounding::apply(double v) const {
    if (mode == Mode::None || v == 0.0 || !std::isfinite(v)) {
        return v;
    }
    int decimals_kept = digits;
    if (mode == Mode::Significant) {
        decimals_kept = digits - 1 - static_cast<int>(std::floor(std::log10(std::abs(v))));
    }
    const auto round = [this](double x) {
        // A value already on the grid (up to the last bits of the scaling) stays there.
        const double nearest = std::round(x);
        if (direction == Direction::Nearest || std::abs(x - nearest) <= 1e-9 * std::abs(x)) {
            return nearest;
        }
        const bool toward_zero = direction == Direction::Down;
        return (x < 0.0) == toward_zero ? std::ceil(x) : std::floor(x);
    };
    if (decimals_kept >= 0) {
        // Integer over a power of ten: the division rounds once, to the double nearest the decimal.
        const double scale = std::pow(10.0, decimals_kept);
        return round(v * scale) / scale;
    }
    const double scale = std::pow(10.0, -decimals_kept);
    return round(v / scale) * scale;
}

std::string Rounding::verb() const {
    switch (direction) {
    case Direction::Down:
        return "rounded down";
    case Direction::Up:
        return "rounded up";
    case Direction::Nearest:
        break;
    }
    return "rounded";
}

std::string Rounding::describe() const {
    switch (mode) {
    case Mode::None:
        return "";
    case Mode::Decimals:
        return verb() + " to " + std::to_string(digits) + (digits == 1 ? " decimal" : " decimals");
    case Mode::Significant:
        return verb() + " to " + std::to_string(digits) + " significant digits";
    }
    return "";
}

std::string short_number(double v) {
    std::array<char, 32> buffer{};
    std::snprintf(buffer.data(), buffer.size(), "%.4g", v);
    return buffer.data();
}

}  // namespace trainsim::calibrate
