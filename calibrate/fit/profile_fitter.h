// From a profile with directives to a fitted profile: runs the target fits in dependency order (the launch
// time before the best streaming rate, the peak before the GEMM curve, the memory curve before the kind
// factors, the all-reduce table before the latencies), then completes the sources table.
#pragma once

#include <string>

#include "calibrate/fit/fit_report.h"
#include "calibrate/fit/fit_state.h"

namespace trainsim::calibrate {

struct FitResult {
    OrderedJson profile;
    FitReport report;
};

/// Fits every directive of `doc` from `measurements` and names the result `name`. `json` labels messages
/// with the spec or base file. Throws InputError when a directive cannot be fitted, a directive sits at a
/// path that is not fittable, or two sources share an id with different citations.
[[nodiscard]] FitResult fit_profile(OrderedJson doc, const MeasurementSet& measurements,
                                    const StrictJson& json, const FitOptions& options,
                                    const std::string& name);

/// Every path a directive may sit at, in the order the fits run.
[[nodiscard]] const std::vector<std::string>& fittable_paths();

/// Writes `profile` to `path` so that it appears whole or not at all, and only if the simulator's loader
/// accepts it: written beside the target under the profile's name, loaded with
/// cost::load_hardware_profile, then renamed. The file name must be the profile's name plus ".json".
void write_profile_checked(const OrderedJson& profile, const std::string& path);

}  // namespace trainsim::calibrate
