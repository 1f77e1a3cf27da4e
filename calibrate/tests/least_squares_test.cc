// The least-squares solvers recover known curves exactly from data that lies on them.
#include <gtest/gtest.h>

#include <cmath>

#include "calibrate/fit/least_squares.h"
#include "calibrate/fit/rounding.h"
#include "sim/cost/curve.h"

namespace trainsim::calibrate {
namespace {

TEST(PiecewiseLog, RecoversKnotValuesFromPointsBetweenThem) {
    const std::vector<double> knots = {1e2, 1e4, 1e6};
    const std::vector<double> truth = {0.2, 0.6, 0.9};
    std::vector<double> x;
    std::vector<double> y;
    for (double e = 2.0; e <= 6.0; e += 0.25) {  // 17 points, most between knots
        x.push_back(std::pow(10.0, e));
        y.push_back(eval_piecewise_log(knots, truth, x.back()));
    }
    const std::vector<double> fitted =
        fit_piecewise_log(knots, {std::nullopt, std::nullopt, std::nullopt}, x, y);
    for (std::size_t j = 0; j < knots.size(); ++j) {
        EXPECT_NEAR(fitted[j], truth[j], 1e-12);
    }
}

TEST(PiecewiseLog, HeldKnotsStayAndTheOthersFitAroundThem) {
    const std::vector<double> knots = {1e2, 1e4, 1e6};
    const std::vector<double> truth = {0.2, 0.6, 0.9};
    const std::vector<double> x = {3e2, 3e3, 3e4, 3e5};
    std::vector<double> y;
    for (const double v : x) {
        y.push_back(eval_piecewise_log(knots, truth, v));
    }
    const std::vector<double> fitted = fit_piecewise_log(knots, {0.2, std::nullopt, std::nullopt}, x, y);
    EXPECT_EQ(fitted[0], 0.2);
    EXPECT_NEAR(fitted[1], 0.6, 1e-12);
    EXPECT_NEAR(fitted[2], 0.9, 1e-12);
}

TEST(PiecewiseLog, EvaluatesLikeTheCostModel) {
    const cost::Curve c{{1e3, 1e5, 1e9}, {0.3, 0.5, 0.8}, "t"};
    for (const double x : {10.0, 1e3, 3e3, 1e5, 7.7e6, 1e9, 1e12}) {
        EXPECT_DOUBLE_EQ(eval_piecewise_log(c.x, c.y, x), cost::read_curve(c, x).y) << x;
    }
}

TEST(PiecewiseLog, AFreeKnotWithoutDataIsAnError) {
    EXPECT_THROW((void)fit_piecewise_log({1e2, 1e4, 1e6}, {0.1, std::nullopt, 0.9}, {1e6}, {0.9}),
                 std::invalid_argument);
}

TEST(AutoKnots, MeasuredSizesAtLeastTheSpacingApart) {
    const std::vector<double> x = {100, 150, 300, 1000, 1e4, 3e4, 4e4};
    EXPECT_EQ(auto_knots(x, 0.5), (std::vector<double>{100, 1000, 1e4, 4e4}));
    EXPECT_EQ(auto_knots({5.0}, 0.5), (std::vector<double>{5.0}));
}

TEST(FitScale, IsTheLeastSquaresRatio) {
    EXPECT_DOUBLE_EQ(fit_scale({2.0, 4.0, 6.0}, {1.0, 2.0, 3.0}), 2.0);
    EXPECT_DOUBLE_EQ(fit_scale({1.0, 3.0}, {1.0, 1.0}), 2.0);  // the mean
}

TEST(BoundedTwoParameterFit, UnconstrainedWhenFeasibleElseOnTheBoundary) {
    // y = 3 + 2·t at t = 0, 1, 2.
    const std::vector<double> ones = {1, 1, 1};
    const std::vector<double> t = {0, 1, 2};
    const std::vector<double> y = {3, 5, 7};
    const auto free = bounded_two_parameter_fit(ones, t, y, {{-1, 0, 0}, {0, -1, 0}});
    ASSERT_TRUE(free);
    EXPECT_NEAR(free->first, 3.0, 1e-12);
    EXPECT_NEAR(free->second, 2.0, 1e-12);
    // With p0 + p1 <= 4 the optimum lies on that line: minimise Σ(p0 + p1·t − y)² with p0 = 4 − p1.
    const auto bounded = bounded_two_parameter_fit(ones, t, y, {{-1, 0, 0}, {0, -1, 0}, {1, 1, 4}});
    ASSERT_TRUE(bounded);
    EXPECT_NEAR(bounded->first + bounded->second, 4.0, 1e-12);
    // p1 = Σ(t−1)(y−4) / Σ(t−1)² = (1 + 0 + 3) / 2 = 2, so p0 = 2.
    EXPECT_NEAR(bounded->second, 2.0, 1e-12);
}

TEST(Rounding, ToThePrecisionAndDirectionAsked) {
    EXPECT_EQ(Rounding::decimals(2).apply(0.7418), 0.74);
    EXPECT_EQ(Rounding::decimals(3).apply(0.63276), 0.633);
    EXPECT_EQ(Rounding::significant(3).apply(12345.0), 12300.0);
    EXPECT_EQ(Rounding::significant(3, Rounding::Direction::Down).apply(4.999), 4.99);
    EXPECT_EQ(Rounding::significant(3, Rounding::Direction::Up).apply(4.991), 5.0);
    EXPECT_EQ(Rounding::significant(4, Rounding::Direction::Up).apply(195.1), 195.1);  // on the grid already
    EXPECT_EQ(Rounding::none().apply(0.123456789), 0.123456789);
}

}  // namespace
}  // namespace trainsim::calibrate
