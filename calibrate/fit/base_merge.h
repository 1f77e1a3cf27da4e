// `fit --base PROFILE`: start from a complete profile and replace only what was measured. Each value the
// measurements can give gets a directive with default options; everything else, and the base's modelling
// assumptions, stay; the notes of the sections that changed say which members are new.
#pragma once

#include <string>
#include <vector>

#include "calibrate/fit/fit_state.h"

namespace trainsim::calibrate {

/// Puts a directive at every fittable path of `base` that `measurements` (and `options`) can give.
/// Returns the paths, in fit order.
[[nodiscard]] std::vector<std::string>
add_base_directives(OrderedJson& base, const MeasurementSet& measurements, const FitOptions& options);

/// The kind factors `base` keeps that were measured or derived against its memory_bound.efficiency_vs_bytes
/// when `fitted` (add_base_directives' paths) refits that curve: a factor scales the curve, so keeping it
/// over a new curve changes its kernel's speed. Empty when the curve is not refit.
[[nodiscard]] std::vector<std::string>
kind_factors_kept_over_a_refit_curve(const OrderedJson& base, const std::vector<std::string>& fitted);

/// After the fit: the description and the notes of the changed sections say what was fitted from what,
/// and what is the base's.
void describe_merge(OrderedJson& profile, const std::string& base_name,
                    const std::vector<std::string>& fitted, const MeasurementSet& measurements);

}  // namespace trainsim::calibrate
