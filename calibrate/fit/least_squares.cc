#include "calibrate/fit/least_squares.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <Eigen/Dense>

namespace trainsim::calibrate {

namespace {

// Hat-function weights of x on the knots: (index, weight) pairs, one or two.
std::vector<std::pair<std::size_t, double>> hat(const std::vector<double>& log_knots, double x) {
    const double u = std::log10(x);
    if (u <= log_knots.front()) {
        return {{0, 1.0}};
    }
    if (u >= log_knots.back()) {
        return {{log_knots.size() - 1, 1.0}};
    }
    const auto upper = std::upper_bound(log_knots.begin(), log_knots.end(), u);
    const auto j = static_cast<std::size_t>(upper - log_knots.begin()) - 1;
    const double t = (u - log_knots[j]) / (log_knots[j + 1] - log_knots[j]);
    return {{j, 1.0 - t}, {j + 1, t}};
}

std::vector<double> logs(const std::vector<double>& knots) {
    std::vector<double> u;
    for (std::size_t j = 0; j < knots.size(); ++j) {
        if (!(knots[j] > 0.0) || (j > 0 && !(knots[j] > knots[j - 1]))) {
            throw std::invalid_argument("knots must be positive and strictly increasing");
        }
        u.push_back(std::log10(knots[j]));
    }
    return u;
}

double squared_residual(const std::vector<double>& a0, const std::vector<double>& a1,
                        const std::vector<double>& rhs, double p0, double p1) {
    double s = 0.0;
    for (std::size_t i = 0; i < rhs.size(); ++i) {
        const double r = a0[i] * p0 + a1[i] * p1 - rhs[i];
        s += r * r;
    }
    return s;
}

// The 1-D least squares along the line a·p = b.
std::optional<std::pair<double, double>> on_line(const std::vector<double>& a0, const std::vector<double>& a1,
                                                 const std::vector<double>& rhs, const Constraint2& c) {
    const bool solve_p1 = std::abs(c.a1) >= std::abs(c.a0);
    if ((solve_p1 ? c.a1 : c.a0) == 0.0) {
        return std::nullopt;
    }
    // p_dep = (b − a_free·p_free) / a_dep; the residual is g·p_free − h.
    double gg = 0.0;
    double gh = 0.0;
    for (std::size_t i = 0; i < rhs.size(); ++i) {
        const double A_free = solve_p1 ? a0[i] : a1[i];
        const double A_dep = solve_p1 ? a1[i] : a0[i];
        const double a_free = solve_p1 ? c.a0 : c.a1;
        const double a_dep = solve_p1 ? c.a1 : c.a0;
        const double g = A_free - A_dep * a_free / a_dep;
        const double h = rhs[i] - A_dep * c.b / a_dep;
        gg += g * g;
        gh += g * h;
    }
    if (gg == 0.0) {
        return std::nullopt;
    }
    const double free = gh / gg;
    const double dep = (c.b - (solve_p1 ? c.a0 : c.a1) * free) / (solve_p1 ? c.a1 : c.a0);
    return solve_p1 ? std::make_pair(free, dep) : std::make_pair(dep, free);
}

}  // namespace

std::vector<double> auto_knots(std::vector<double> x, double min_decades) {
    std::sort(x.begin(), x.end());
    x.erase(std::unique(x.begin(), x.end()), x.end());
    std::vector<double> knots;
    for (const double v : x) {
        if (knots.empty() || std::log10(v) - std::log10(knots.back()) >= min_decades) {
            knots.push_back(v);
        }
    }
    if (!x.empty() && knots.back() != x.back()) {
        if (knots.size() > 1 && std::log10(x.back()) - std::log10(knots.back()) < 0.5 * min_decades) {
            knots.back() = x.back();
        } else {
            knots.push_back(x.back());
        }
    }
    return knots;
}

std::vector<double> fit_piecewise_log(const std::vector<double>& knots,
                                      const std::vector<std::optional<double>>& fixed,
                                      const std::vector<double>& x, const std::vector<double>& y,
                                      const std::vector<double>& w) {
    if (fixed.size() != knots.size() || x.size() != y.size() || (!w.empty() && w.size() != x.size())) {
        throw std::invalid_argument("fit_piecewise_log: sizes do not match");
    }
    const std::vector<double> u = logs(knots);
    std::vector<std::size_t> free;  // knot index of each unknown
    std::vector<long> column(knots.size(), -1);
    for (std::size_t j = 0; j < knots.size(); ++j) {
        if (!fixed[j]) {
            column[j] = static_cast<long>(free.size());
            free.push_back(j);
        }
    }
    std::vector<double> values(knots.size(), 0.0);
    for (std::size_t j = 0; j < knots.size(); ++j) {
        if (fixed[j]) {
            values[j] = *fixed[j];
        }
    }
    if (free.empty()) {
        return values;
    }
    Eigen::MatrixXd A =
        Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(x.size()), static_cast<Eigen::Index>(free.size()));
    Eigen::VectorXd b(static_cast<Eigen::Index>(x.size()));
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double s = w.empty() ? 1.0 : std::sqrt(w[i]);
        double rhs = y[i];
        for (const auto& [j, weight] : hat(u, x[i])) {
            if (column[j] >= 0) {
                A(static_cast<Eigen::Index>(i), column[j]) += s * weight;
            } else {
                rhs -= weight * *fixed[j];
            }
        }
        b(static_cast<Eigen::Index>(i)) = s * rhs;
    }
    for (std::size_t c = 0; c < free.size(); ++c) {
        if (A.col(static_cast<Eigen::Index>(c)).norm() == 0.0) {
            throw std::invalid_argument("no measurement near the knot at x=" +
                                        std::to_string(knots[free[c]]));
        }
    }
    const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(A);
    if (qr.rank() < static_cast<Eigen::Index>(free.size())) {
        throw std::invalid_argument("the measurements do not determine every free knot");
    }
    const Eigen::VectorXd solution = qr.solve(b);
    for (std::size_t c = 0; c < free.size(); ++c) {
        values[free[c]] = solution(static_cast<Eigen::Index>(c));
    }
    return values;
}

double eval_piecewise_log(const std::vector<double>& knots, const std::vector<double>& values, double x) {
    const std::vector<double> u = logs(knots);
    double v = 0.0;
    for (const auto& [j, weight] : hat(u, x)) {
        v += weight * values[j];
    }
    return v;
}

double fit_scale(const std::vector<double>& y, const std::vector<double>& c) {
    Eigen::Map<const Eigen::VectorXd> Y(y.data(), static_cast<Eigen::Index>(y.size()));
    Eigen::Map<const Eigen::VectorXd> C(c.data(), static_cast<Eigen::Index>(c.size()));
    const double cc = C.squaredNorm();
    if (y.size() != c.size() || cc == 0.0) {
        throw std::invalid_argument("fit_scale: needs matching, non-zero data");
    }
    return Y.dot(C) / cc;
}

double fit_relative_scale(const std::vector<double>& y, const std::vector<double>& c) {
    std::vector<double> ratio;
    for (std::size_t i = 0; i < y.size() && i < c.size(); ++i) {
        if (!(y[i] > 0.0)) {
            throw std::invalid_argument("fit_relative_scale: measured values must be positive");
        }
        ratio.push_back(c[i] / y[i]);
    }
    // s·r_i ≈ 1 for every i: the least-squares s of ones against r.
    return fit_scale(std::vector<double>(ratio.size(), 1.0), ratio);
}

std::optional<std::pair<double, double>>
bounded_two_parameter_fit(const std::vector<double>& a0, const std::vector<double>& a1,
                          const std::vector<double>& rhs, const std::vector<Constraint2>& constraints) {
    std::vector<std::pair<double, double>> candidates;
    const auto n = static_cast<Eigen::Index>(rhs.size());
    Eigen::MatrixXd A(n, 2);
    for (Eigen::Index i = 0; i < n; ++i) {
        A(i, 0) = a0[static_cast<std::size_t>(i)];
        A(i, 1) = a1[static_cast<std::size_t>(i)];
    }
    const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(A);
    if (qr.rank() == 2) {
        const Eigen::VectorXd p = qr.solve(Eigen::Map<const Eigen::VectorXd>(rhs.data(), n));
        candidates.emplace_back(p(0), p(1));
    }
    for (const Constraint2& c : constraints) {
        if (const auto p = on_line(a0, a1, rhs, c)) {
            candidates.push_back(*p);
        }
    }
    for (std::size_t i = 0; i < constraints.size(); ++i) {
        for (std::size_t j = i + 1; j < constraints.size(); ++j) {
            const Constraint2& c = constraints[i];
            const Constraint2& d = constraints[j];
            const double det = c.a0 * d.a1 - c.a1 * d.a0;
            if (det != 0.0) {
                candidates.emplace_back((c.b * d.a1 - c.a1 * d.b) / det, (c.a0 * d.b - c.b * d.a0) / det);
            }
        }
    }
    std::optional<std::pair<double, double>> best;
    double best_residual = std::numeric_limits<double>::infinity();
    for (const auto& [p0, p1] : candidates) {
        bool feasible = true;
        for (const Constraint2& c : constraints) {
            const double scale = std::abs(c.a0 * p0) + std::abs(c.a1 * p1) + std::abs(c.b);
            feasible = feasible && c.a0 * p0 + c.a1 * p1 <= c.b + 1e-12 * scale;
        }
        const double r = squared_residual(a0, a1, rhs, p0, p1);
        if (feasible && r < best_residual) {
            best_residual = r;
            best = std::make_pair(p0, p1);
        }
    }
    return best;
}

}  // namespace trainsim::calibrate
