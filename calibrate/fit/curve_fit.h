// Fitting one profile curve from samples: the machinery every curve target shares (knots, fixed and
// derived points, rounding, clamping, residuals, the note).
//
// Methods, chosen with "method" in the directive:
//   least_squares  the curve piecewise linear in log10(x) through knots that minimises the squared relative
//                  error over all samples; knots from "points" (a point with a "y" is held there) or, without
//                  points, chosen among the measured x at least "knot_spacing" decades apart (default 0.5)
//   knot_mean      every point is given: a "y" (held; "checked_against": [ids] reports what those records
//                  say), "mean_of": [ids] (the mean of those records, the least-squares constant), or
//                  "extend": "flat" (the previous point's value, beyond the data)
//   table          one point per measured x, the mean of the samples there (a measured table, such as
//                  nccl-tests' busbw column)
#pragma once

#include <string>
#include <vector>

#include "calibrate/fit/directive.h"
#include "calibrate/fit/fit_report.h"
#include "sim/cost/curve.h"

namespace trainsim::calibrate {

/// One observation of a curve: a record, where it lies and its value in the curve's quantity.
struct Sample {
    std::string id;         // the record's id in its file (what "mean_of" names)
    std::string record;     // how notes name it: the id, or "SOURCE-ID: benchmark name"
    std::string source_id;  // its input file
    double x = 0.0;
    double y = 0.0;
    bool used = true;  // false: excluded (by a tag), compared with the result only
};

/// What a curve target is, for the shared machinery.
struct CurveTarget {
    std::string description;     // how a sample's y was obtained, for the note
    std::string x_unit;          // "FLOPs", "bytes"
    std::string default_method;  // least_squares or table
    Rounding default_rounding;
    double y_min = 0.0;  // results are clamped into [y_min, y_max], with a remark
    double y_max = 0.0;
    bool integer_x = false;     // sizes are written as JSON integers
    std::string fallback_kind;  // provenance when the directive gives none
    std::string fallback_source;
    std::vector<std::string_view> extra_options;  // the target's own options, besides the shared ones
};

struct FittedCurve {
    OrderedJson json;  // the curve object for the profile
    cost::Curve curve;
    TargetReport report;
};

/// Fits `samples` into the curve `directive` asks for. Throws InputError naming the directive's path for
/// a malformed directive, an id in "mean_of" that no sample has, or too few samples.
[[nodiscard]] FittedCurve fit_curve(const Directive& directive, const CurveTarget& target,
                                    const std::vector<Sample>& samples);

}  // namespace trainsim::calibrate
