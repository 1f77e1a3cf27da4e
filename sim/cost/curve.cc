#include "sim/cost/curve.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace trainsim::cost {

CurveRead read_curve(const Curve& curve, double x) {
    // The loader guarantees at least one point and strictly increasing x > 0.
    if (x < curve.x.front()) {
        return {curve.y.front(), CurveRange::BelowFirst};
    }
    if (x > curve.x.back()) {
        return {curve.y.back(), CurveRange::AboveLast};
    }
    // First point with x_i >= x; x lies in (x_{i-1}, x_i], or equals x_0.
    const auto upper = std::lower_bound(curve.x.begin(), curve.x.end(), x);
    const auto i = static_cast<std::size_t>(std::distance(curve.x.begin(), upper));
    if (i == 0 || curve.x[i] == x) {
        return {curve.y[i], CurveRange::Inside};
    }
    const double lx0 = std::log10(curve.x[i - 1]);
    const double t = (std::log10(x) - lx0) / (std::log10(curve.x[i]) - lx0);
    return {curve.y[i - 1] + t * (curve.y[i] - curve.y[i - 1]), CurveRange::Inside};
}

}  // namespace trainsim::cost
