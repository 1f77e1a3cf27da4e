// A measured or fitted cost curve y(x): points interpolated linearly in log10(x), clamped at the ends.
#pragma once

#include <string>
#include <vector>

namespace trainsim::cost {

/// A curve y(x) given by points, interpolated linearly in log10(x) and clamped at the ends
/// (a clamped read is reported as out of the calibrated range).
struct Curve {
    std::vector<double> x;  // strictly increasing, > 0
    std::vector<double> y;
    std::string source;  // where the points came from (the curve's or its points' "source" fields)
    friend bool operator==(const Curve&, const Curve&) = default;
};

/// Where a read fell relative to the curve's points.
enum class CurveRange { Inside, BelowFirst, AboveLast };

struct CurveRead {
    double y = 0.0;
    CurveRange range = CurveRange::Inside;
};

/// y at `x` (> 0). Log-x interpolation because the curves span many decades (1e8–1e14 FLOPs, 32 KiB–16 GiB)
/// and their measurements are spaced geometrically. A read exactly at the first or last point is Inside.
[[nodiscard]] CurveRead read_curve(const Curve& curve, double x);

}  // namespace trainsim::cost
