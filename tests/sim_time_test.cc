// Engine time is its own type (issue 24): an integer no longer passes for a SimTime nor a SimTime for an
// integer, Seconds or Bytes, and it must cost what the int64 it replaced cost. Also the one GiB conversion.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <type_traits>
#include <unordered_set>

#include "sim/core/units.h"

namespace trainsim {
namespace {

// No implicit conversion either way.
static_assert(!std::is_convertible_v<std::int64_t, SimTime>);
static_assert(!std::is_convertible_v<int, SimTime>);
static_assert(!std::is_convertible_v<SimTime, std::int64_t>);
static_assert(!std::is_constructible_v<std::int64_t, SimTime>);
static_assert(!std::is_convertible_v<SimTime, double>);
// Nor with the other units: a duration in seconds goes through to_sim_time, which rounds once.
static_assert(!std::is_constructible_v<SimTime, double>);
static_assert(!std::is_constructible_v<SimTime, Seconds>);
static_assert(!std::is_constructible_v<SimTime, Bytes>);
static_assert(!std::is_constructible_v<SimTime, bool>);
static_assert(!std::is_constructible_v<Seconds, SimTime>);
static_assert(!std::is_constructible_v<Bytes, SimTime>);
// Two times divide only through ratio(), a double: no integer count that truncates unseen.
static_assert(!std::is_invocable_v<std::divides<>, SimTime, SimTime>);
// Explicitly from an integer only.
static_assert(std::is_constructible_v<SimTime, std::int64_t> && std::is_constructible_v<SimTime, int>);
// Comparisons and sums only with SimTimes; scaling only by an integer count.
static_assert(!std::is_invocable_v<std::less<>, SimTime, int>);
static_assert(!std::is_invocable_v<std::equal_to<>, SimTime, std::int64_t>);
static_assert(!std::is_invocable_v<std::plus<>, SimTime, int>);
static_assert(!std::is_invocable_v<std::multiplies<>, SimTime, SimTime>);
static_assert(!std::is_invocable_v<std::multiplies<>, SimTime, double>);
static_assert(std::is_invocable_r_v<SimTime, std::multiplies<>, int, SimTime>);
// Same size and layout as the int64 it replaced: per-task timing arrays keep their footprint.
static_assert(sizeof(SimTime) == sizeof(std::int64_t) && std::is_trivially_copyable_v<SimTime>);
// A generic caller's numeric_limits gets the int64 bounds, not a default-constructed zero.
static_assert(std::numeric_limits<SimTime>::max() == SimTime::max());
static_assert(SimTime::max().ns() == std::numeric_limits<std::int64_t>::max());
static_assert(SimTime::min().ns() == std::numeric_limits<std::int64_t>::min());

TEST(SimTime, DefaultIsZeroAndReadsBackItsNanoseconds) {
    EXPECT_EQ(SimTime{}.ns(), 0);
    EXPECT_EQ(SimTime{1'500}.ns(), 1'500);
    EXPECT_EQ(1'500_ns, SimTime{1'500});
    EXPECT_EQ((-3_ns).ns(), -3);
}

TEST(SimTime, ArithmeticAndComparisonsByHand) {
    const SimTime a{70};
    const SimTime b{30};
    EXPECT_EQ(a + b, 100_ns);
    EXPECT_EQ(a - b, 40_ns);
    EXPECT_EQ(b - a, -40_ns);
    SimTime c = a;
    c += b;
    EXPECT_EQ(c, 100_ns);
    c -= a;
    EXPECT_EQ(c, 30_ns);
    EXPECT_EQ(3 * b, 90_ns);
    EXPECT_EQ(b * std::int64_t{4}, 120_ns);
    EXPECT_EQ(a / 3, 23_ns);  // a mean per call truncates, as int64 division did
    EXPECT_EQ(ratio(a, b), 70.0 / 30.0);
    EXPECT_LT(b, a);
    EXPECT_GT(a, b);
    EXPECT_LE(b, 30_ns);
    EXPECT_NE(a, b);
    EXPECT_EQ(std::max(a, b), a);
}

TEST(SimTime, ScaledRoundsToTheNearestNanosecond) {
    EXPECT_EQ(scaled(10_ns, 0.25), 3_ns);  // 2.5 rounds away from zero, as llround
    EXPECT_EQ(scaled(10_ns, 0.24), 2_ns);  // 2.4
    EXPECT_EQ(scaled(1'000_ns, 1.5), 1'500_ns);
    EXPECT_EQ(scaled(7_ns, -1.0), -7_ns);
}

TEST(SimTime, SecondsRoundTripThroughTheOneConversion) {
    EXPECT_EQ(to_sim_time(Seconds{1.5e-6}), 1'500_ns);
    EXPECT_EQ(to_sim_time(Seconds{2.4e-9}), 2_ns);
    EXPECT_EQ(to_seconds(2'500'000'000_ns).value, 2.5);
}

TEST(SimTime, HashesAndPrintsAsItsInteger) {
    EXPECT_EQ(std::hash<SimTime>{}(42_ns), std::hash<std::int64_t>{}(42));
    const std::unordered_set<SimTime> times{1_ns, 2_ns, 1_ns};
    EXPECT_EQ(times.size(), 2u);
    std::ostringstream out;
    out << 1'234_ns << ' ' << -5_ns;
    EXPECT_EQ(out.str(), "1234 -5");
}

TEST(ToGib, ConvertsBytesByHand) {
    EXPECT_EQ(to_gib(Bytes{1LL << 30}), 1.0);
    EXPECT_EQ(to_gib(Bytes{3LL << 29}), 1.5);
    EXPECT_EQ(to_gib(Bytes{0}), 0.0);
    EXPECT_EQ(to_gib(Bytes{-(1LL << 31)}), -2.0);
    static_assert(to_gib(Bytes{80LL << 30}) == 80.0);
}

}  // namespace
}  // namespace trainsim
