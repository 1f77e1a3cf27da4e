// Engine time as its own type (issue 24): integer nanoseconds that no longer pass for a byte count, a
// micro-batch count or an index. It holds the same int64 as before, so it costs nothing: same size, same
// order, same hash, same printed digits.
#pragma once

#include <cmath>
#include <compare>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>

namespace trainsim {

/// Simulated time inside the engine: integer nanoseconds, so event order is exact and reproducible. A
/// point in time and a duration share the type (a start plus a duration is an end). Seconds become a
/// SimTime only through to_sim_time (units.h), which rounds once; hence no constructor from a double.
class SimTime {
public:
    constexpr SimTime() = default;
    constexpr explicit SimTime(std::int64_t ns) : ns_(ns) {}
    template <typename T>
    requires(std::floating_point<T> || std::same_as<T, bool>) explicit SimTime(T) = delete;

    /// The latest representable time: "never", or an unbounded window's end.
    [[nodiscard]] static constexpr SimTime max() { return SimTime{std::numeric_limits<std::int64_t>::max()}; }
    /// The earliest representable time: an unbounded window's start.
    [[nodiscard]] static constexpr SimTime min() { return SimTime{std::numeric_limits<std::int64_t>::min()}; }

    /// The integer nanoseconds, for where a raw integer is really wanted (a JSON field in ns, a hash).
    [[nodiscard]] constexpr std::int64_t ns() const { return ns_; }

    friend constexpr bool operator==(SimTime, SimTime) = default;
    friend constexpr auto operator<=>(SimTime, SimTime) = default;

    [[nodiscard]] constexpr SimTime operator-() const { return SimTime{-ns_}; }
    [[nodiscard]] friend constexpr SimTime operator+(SimTime a, SimTime b) { return SimTime{a.ns_ + b.ns_}; }
    [[nodiscard]] friend constexpr SimTime operator-(SimTime a, SimTime b) { return SimTime{a.ns_ - b.ns_}; }
    constexpr SimTime& operator+=(SimTime o) {
        ns_ += o.ns_;
        return *this;
    }
    constexpr SimTime& operator-=(SimTime o) {
        ns_ -= o.ns_;
        return *this;
    }

    /// `count` repetitions of a duration. Only an integer count: a fractional scale of engine time must
    /// say how it rounds.
    template <std::integral N> [[nodiscard]] friend constexpr SimTime operator*(N count, SimTime t) {
        return SimTime{static_cast<std::int64_t>(count) * t.ns_};
    }
    template <std::integral N> [[nodiscard]] friend constexpr SimTime operator*(SimTime t, N count) {
        return SimTime{t.ns_ * static_cast<std::int64_t>(count)};
    }
    /// A duration shared out over `count` (a mean per call), truncated toward zero as int64 division.
    template <std::integral N> [[nodiscard]] friend constexpr SimTime operator/(SimTime t, N count) {
        return SimTime{t.ns_ / static_cast<std::int64_t>(count)};
    }

    friend std::ostream& operator<<(std::ostream& out, SimTime t) { return out << t.ns_; }

private:
    std::int64_t ns_ = 0;
};

inline namespace literals {
/// `60_ns`: a literal engine time, for tests and tables written in integer nanoseconds.
[[nodiscard]] consteval SimTime operator""_ns(unsigned long long ns) {
    return SimTime{static_cast<std::int64_t>(ns)};
}
}  // namespace literals

/// `t` scaled by a factor (a slowdown, a jitter, a share of a span), rounded to the nearest nanosecond.
[[nodiscard]] inline SimTime scaled(SimTime t, double factor) {
    return SimTime{std::llround(static_cast<double>(t.ns()) * factor)};
}

/// a / b as a real number (a share of a span): the only division of two times.
[[nodiscard]] constexpr double ratio(SimTime a, SimTime b) {
    return static_cast<double>(a.ns()) / static_cast<double>(b.ns());
}

}  // namespace trainsim

// numeric_limits of a class it does not know answers SimTime{} (0) for max() without a word; these answer
// int64's, so a generic caller gets SimTime::max() and SimTime::min().
template <> struct std::numeric_limits<trainsim::SimTime> : std::numeric_limits<std::int64_t> {
    [[nodiscard]] static constexpr trainsim::SimTime min() noexcept { return trainsim::SimTime::min(); }
    [[nodiscard]] static constexpr trainsim::SimTime lowest() noexcept { return trainsim::SimTime::min(); }
    [[nodiscard]] static constexpr trainsim::SimTime max() noexcept { return trainsim::SimTime::max(); }
};

template <> struct std::hash<trainsim::SimTime> {
    [[nodiscard]] std::size_t operator()(trainsim::SimTime t) const noexcept {
        return std::hash<std::int64_t>{}(t.ns());
    }
};
