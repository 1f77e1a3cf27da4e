// What a fit did, target by target: the records it used, the residuals, the valid range. A summary goes
// into the profile (each fitted curve's or value's "note"); the whole report can be written as JSON.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/measure/json_writer.h"

namespace trainsim::calibrate {

/// One record against the fitted result, in the target's own quantity (an efficiency, GB/s, seconds).
struct Residual {
    std::string record;  // "S-DATA-RUN: gemm/m:64/..." or a record id
    double x = 0.0;      // where on the curve (FLOPs, bytes), or 0 for a single value
    double measured = 0.0;
    double fitted = 0.0;
    bool used = true;  // false: shown for comparison, not fitted (an excluded tag, a pinned point)

    [[nodiscard]] double relative() const { return measured / fitted - 1.0; }
};

struct TargetReport {
    std::string path;                 // e.g. "compute.gemm.efficiency_vs_flops"
    std::string method;               // one line: what was fitted, how
    std::vector<std::string> inputs;  // source ids of the files whose records were used
    std::vector<Residual> residuals;
    double x_min = std::numeric_limits<double>::quiet_NaN();  // the range the used records cover
    double x_max = std::numeric_limits<double>::quiet_NaN();
    std::vector<std::string> remarks;  // clamps, points held at the spec's value, ...
    std::vector<std::string>
        flags;  // results that are possible but not physical (a link above its line rate)

    /// "rms 1.2%, largest -3.4% (record)" over the used residuals, or "" when there are none.
    [[nodiscard]] std::string residual_summary() const;
    /// The rms of the used relative residuals; nullopt when there are none.
    [[nodiscard]] std::optional<double> rms() const;
    /// Whether the fit represents its data: rms within `tolerance` (a fraction) and no flag raised.
    [[nodiscard]] bool within(double tolerance) const;
    /// "ok (rms within 10%)", "OVER the 10% tolerance" or "FLAGGED: ..." for the fit's summary line.
    [[nodiscard]] std::string verdict(double tolerance) const;
    /// The note written into the profile: method, inputs, valid range (with `x_unit`), residuals, remarks.
    [[nodiscard]] std::string note(const std::string& x_unit) const;
};

struct FitReport {
    std::vector<TargetReport> targets;
    std::vector<std::string> warnings;

    [[nodiscard]] OrderedJson to_json() const;
};

}  // namespace trainsim::calibrate
