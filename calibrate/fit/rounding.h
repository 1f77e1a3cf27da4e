// How a fitted number is written: to the precision its data supports, so that a profile does not claim
// six digits from a 0.1 ms timer.
#pragma once

#include <string>

namespace trainsim::calibrate {

struct Rounding {
    enum class Mode { None, Decimals, Significant };
    /// Toward zero or away from it where a result must stay a bound: a latency below every measured
    /// time, a peak above every measured rate.
    enum class Direction { Nearest, Down, Up };
    Mode mode = Mode::None;
    int digits = 0;
    Direction direction = Direction::Nearest;

    [[nodiscard]] static Rounding none() { return {}; }
    [[nodiscard]] static Rounding decimals(int d) { return {Mode::Decimals, d, Direction::Nearest}; }
    [[nodiscard]] static Rounding significant(int d, Direction direction = Direction::Nearest) {
        return {Mode::Significant, d, direction};
    }

    /// The value rounded; for decimals, the double nearest to the decimal number (0.38, not
    /// 0.38000000000000006).
    [[nodiscard]] double apply(double v) const;
    /// "rounded to 2 decimals", "rounded to 4 significant digits", or "".
    [[nodiscard]] std::string describe() const;

private:
    [[nodiscard]] std::string verb() const;
};

/// A number for a note: up to 4 significant digits ("0.7418", "2.1e+09").
[[nodiscard]] std::string short_number(double v);

}  // namespace trainsim::calibrate
