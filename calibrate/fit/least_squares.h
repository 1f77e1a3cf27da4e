// The least-squares problems of the fits, solved with Eigen. Curves are piecewise linear in log10(x)
// because that is exactly how the cost model reads a profile curve (sim/cost/curve.cc): the fitted knot
// values are the curve, with no second approximation between fit and simulator.
#pragma once

#include <optional>
#include <vector>

namespace trainsim::calibrate {

/// Knots among the measured x: the smallest, then the next x at least `min_decades` beyond the last knot,
/// and the largest (which replaces the last knot when closer than half that spacing). Every knot is a
/// measured x, so every knot's hat function has data and the fit below is well posed.
[[nodiscard]] std::vector<double> auto_knots(std::vector<double> x, double min_decades);

/// Values at `knots` (strictly increasing, > 0) of the curve piecewise linear in log10(x) that minimises
/// Σ w_i (y_i − f(x_i))². `fixed[j]`, when set, holds knot j at that value. x outside the knots reads the
/// end value, as the cost model clamps. `w` empty means all weights 1. Throws std::invalid_argument when
/// the free knots are not determined by the data (a free knot whose hat function sees no point).
[[nodiscard]] std::vector<double> fit_piecewise_log(const std::vector<double>& knots,
                                                    const std::vector<std::optional<double>>& fixed,
                                                    const std::vector<double>& x,
                                                    const std::vector<double>& y,
                                                    const std::vector<double>& w = {});

/// The curve's value at x: linear in log10(x) between knots, clamped outside (as cost::read_curve).
[[nodiscard]] double eval_piecewise_log(const std::vector<double>& knots, const std::vector<double>& values,
                                        double x);

/// The factor s minimising Σ (y_i − s·c_i)²: Σ y c / Σ c².
[[nodiscard]] double fit_scale(const std::vector<double>& y, const std::vector<double>& c);

/// The factor s minimising Σ (s·c_i / y_i − 1)², the relative error: Σ (c/y) / Σ (c/y)². y_i > 0.
[[nodiscard]] double fit_relative_scale(const std::vector<double>& y, const std::vector<double>& c);

/// One linear inequality a·p <= b on two parameters p.
struct Constraint2 {
    double a0 = 0.0;
    double a1 = 0.0;
    double b = 0.0;
};

/// min ||A p − rhs||² over p = (p0, p1) subject to `constraints`: the unconstrained solution when it is
/// feasible, else the best feasible solution with one or two constraints active (the optimum of a
/// convex quadratic over a polygon lies on such a face). `a0`, `a1` are A's columns. Returns nothing when
/// no candidate is feasible.
[[nodiscard]] std::optional<std::pair<double, double>>
bounded_two_parameter_fit(const std::vector<double>& a0, const std::vector<double>& a1,
                          const std::vector<double>& rhs, const std::vector<Constraint2>& constraints);

}  // namespace trainsim::calibrate
