// Strong unit types used at module boundaries: a duration cannot be passed where a byte count is
// expected. Inside a module plain doubles are fine; at the boundary the type says the unit.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>

#include "sim/core/sim_time.h"

namespace trainsim {

/// A duration in seconds (double). Costs are computed in seconds and rounded to SimTime once.
struct Seconds {
    double value = 0.0;
    constexpr Seconds() = default;
    constexpr explicit Seconds(double v) : value(v) {}
    constexpr auto operator<=>(const Seconds&) const = default;
    constexpr Seconds operator+(Seconds o) const { return Seconds{value + o.value}; }
    constexpr Seconds operator-(Seconds o) const { return Seconds{value - o.value}; }
    constexpr Seconds operator*(double f) const { return Seconds{value * f}; }
    constexpr Seconds& operator+=(Seconds o) {
        value += o.value;
        return *this;
    }
};

/// A byte count. Signed so that differences (frees) are representable; 2^63 bytes is far beyond any GPU.
struct Bytes {
    std::int64_t value = 0;
    constexpr Bytes() = default;
    constexpr explicit Bytes(std::int64_t v) : value(v) {}
    constexpr auto operator<=>(const Bytes&) const = default;
    constexpr Bytes operator+(Bytes o) const { return Bytes{value + o.value}; }
    constexpr Bytes operator-(Bytes o) const { return Bytes{value - o.value}; }
    constexpr Bytes& operator+=(Bytes o) {
        value += o.value;
        return *this;
    }
};

/// A count of floating-point operations (multiply and add counted separately). Double: 530B-scale
/// iterations exceed 2^63.
struct Flops {
    double value = 0.0;
    constexpr Flops() = default;
    constexpr explicit Flops(double v) : value(v) {}
    constexpr auto operator<=>(const Flops&) const = default;
    constexpr Flops operator+(Flops o) const { return Flops{value + o.value}; }
    constexpr Flops& operator+=(Flops o) {
        value += o.value;
        return *this;
    }
};

// Unit conversions, defined once (profiles give µs, GB/s and TFLOP/s; reports print GiB).
inline constexpr double kNanosecondsPerSecond = 1e9;
inline constexpr double kSecondsPerNanosecond = 1e-9;
inline constexpr double kMicrosecondsPerSecond = 1e6;
inline constexpr double kSecondsPerMicrosecond = 1e-6;
inline constexpr double kBytesPerGB = 1e9;  // decimal, as NCCL and datasheets count bandwidth
inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kFlopsPerTflop = 1e12;

/// A byte count in GiB (2^30 bytes), as the reports print memory.
[[nodiscard]] constexpr double to_gib(Bytes b) {
    return static_cast<double>(b.value) / kBytesPerGiB;
}

/// Thrown by to_sim_time: an InputError naming the cost and the limit.
[[noreturn]] void throw_beyond_sim_time(Seconds s);

/// The one place where a cost in seconds becomes engine time: round to the nearest nanosecond. A cost
/// SimTime cannot hold (292 years), or one that is not a number, is an InputError: llround's result
/// would be unspecified, and sizes that large make every other figure meaningless anyway.
[[nodiscard]] inline SimTime to_sim_time(Seconds s) {
    const double ns = s.value * kNanosecondsPerSecond;
    if (!(ns > -9.2e18 && ns < 9.2e18)) {  // inside ±2^63 ≈ 9.22e18, and false for NaN
        throw_beyond_sim_time(s);
    }
    return SimTime{std::llround(ns)};
}
[[nodiscard]] inline Seconds to_seconds(SimTime t) {
    return Seconds{static_cast<double>(t.ns()) / kNanosecondsPerSecond};
}

}  // namespace trainsim
