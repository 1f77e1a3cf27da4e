// The profile being fitted, as JSON with directives at the paths to fit, and what every target fit needs:
// the measurements, the values other targets produced (a fit reads the peak, a curve, a group size), the
// report, the options of the command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibrate/fit/directive.h"
#include "calibrate/fit/fit_report.h"
#include "calibrate/measure/measurement.h"
#include "sim/cost/curve.h"

namespace trainsim::calibrate {

struct FitOptions {
    std::optional<double> peak_tflops;  // --peak-tflops: the datasheet peak, when no device fact gives it
    std::optional<double> nic_line_rate_GBps;  // --nic-gbits / 8: a fitted NIC rate above it is flagged
};

class FitState {
public:
    /// `doc` is the profile with directives; `json` labels messages (the spec or base file).
    FitState(OrderedJson doc, const MeasurementSet& measurements, const StrictJson& json, FitOptions options);

    [[nodiscard]] const MeasurementSet& measurements() const { return measurements_; }
    [[nodiscard]] const FitOptions& options() const { return options_; }
    [[nodiscard]] const StrictJson& json() const { return json_; }
    [[nodiscard]] FitReport& report() { return report_; }
    [[nodiscard]] OrderedJson& doc() { return doc_; }

    /// A copy of the directive at `path` (a dotted profile path), if that path holds one. The copy keeps
    /// the Directive valid while the fit replaces the node.
    [[nodiscard]] std::optional<OrderedJson> directive_node(const std::string& path) const;
    [[nodiscard]] bool has_directive(const std::string& path) const {
        return directive_node(path).has_value();
    }

    /// The number of the value object at `path`, after its own fit. Throws InputError naming `needed_by`
    /// when the path holds no number (still a directive that could not be fitted, or missing).
    [[nodiscard]] double value(const std::string& path, const std::string& needed_by) const;
    /// The curve at `path`, likewise.
    [[nodiscard]] cost::Curve curve(const std::string& path, const std::string& needed_by) const;

    /// Replaces the node at `path` with a fitted result and records its report.
    void set(const std::string& path, OrderedJson node, const TargetReport& report);

    /// Writes a fitted value object at the directive's path: its provenance from the directive when it
    /// gives one, else the fallback; its note the directive's note, then the report's.
    void set_value(const Directive& directive, OrderedJson value, const std::string& fallback_kind,
                   const std::string& fallback_source, const TargetReport& report,
                   const std::string& x_unit = "");

    /// A value object {"value", "kind", "source", "note"}.
    [[nodiscard]] static OrderedJson value_object(OrderedJson value, const std::string& kind,
                                                  const std::string& source, const std::string& note);

private:
    [[nodiscard]] const OrderedJson* find(const std::string& path) const;

    OrderedJson doc_;
    const MeasurementSet& measurements_;
    const StrictJson& json_;
    FitOptions options_;
    FitReport report_;
};

/// "S-DATA-A, S-DATA-B" for a list of source ids (in the order given, without repeats).
[[nodiscard]] std::string joined_ids(const std::vector<std::string>& ids);

}  // namespace trainsim::calibrate
