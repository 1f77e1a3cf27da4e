#include "calibrate/fit/memory_bound_fit.h"

#include <algorithm>

#include "calibrate/fit/curve_fit.h"
#include "calibrate/fit/least_squares.h"
#include "sim/core/units.h"
#include "sim/cost/cost_model.h"

namespace trainsim::calibrate {

namespace {

constexpr const char* kLaunchPath = "memory_bound.launch_us";
constexpr const char* kEfficiencyCurvePath = "memory_bound.efficiency_vs_bytes";
constexpr const char* kHbmPath = "gpu.hbm_GBps";
constexpr double kMinMemoryEfficiency = 1e-4;

struct LaunchSetting {
    bool subtract = true;
    double us = 0.0;
    std::string text;
};

LaunchSetting launch_setting(const FitState& state, const Directive& d) {
    LaunchSetting l;
    l.subtract = d.flag("subtract_launch", true);
    if (l.subtract) {
        l.us = state.value(kLaunchPath, d.path());
        l.text = "(time - memory_bound.launch_us, " + short_number(l.us) + " us)";
    } else {
        l.text = "time (launch not subtracted)";
    }
    return l;
}

void fit_efficiency_curve(FitState& state) {
    const auto node = state.directive_node(kEfficiencyCurvePath);
    if (!node) {
        return;
    }
    const Directive d(kEfficiencyCurvePath, *node, state.json());
    const double hbm = state.value(kHbmPath, kEfficiencyCurvePath);
    const LaunchSetting launch = launch_setting(state, d);
    std::vector<std::string> names = d.list("kernels");
    if (names.empty()) {
        names = {"copy"};
    }
    std::vector<KernelKind> kinds;
    for (const std::string& n : names) {
        const auto k = kernel_kind_from(n);
        if (!k || *k == KernelKind::Empty) {
            d.fail_option("kernels", "names '" + n + "', which is not a streaming kernel");
        }
        if (*k == KernelKind::Rope || *k == KernelKind::CrossEntropy || *k == KernelKind::CrossEntropyFused) {
            d.fail_option("kernels",
                          "names '" + n +
                              "', a framework kernel with its own kind factor, not a streaming kernel");
        }
        kinds.push_back(*k);
    }
    std::vector<Sample> samples;
    std::vector<std::string> ids;
    std::size_t dropped = 0;
    for (const KernelMeasurement& k : state.measurements().kernels) {
        if (std::find(kinds.begin(), kinds.end(), k.kind) == kinds.end()) {
            continue;
        }
        if (launch.subtract && k.seconds <= launch.us * kSecondsPerMicrosecond) {
            ++dropped;  // no streaming time left to measure
            continue;
        }
        samples.push_back({k.origin.record, k.origin.record, k.origin.source_id,
                           static_cast<double>(k.bytes_moved),
                           streaming_GBps(k, launch.us, launch.subtract) / hbm, true});
        ids.push_back(k.origin.source_id);
    }
    if (samples.empty()) {
        d.fail("has no measurements of the kernels " + joined_ids(names) + " in the inputs");
    }
    CurveTarget target;
    target.description = "efficiency = bytes moved / " + launch.text + " / " + short_number(hbm) +
                         " GB/s (gpu.hbm_GBps), kernels " + joined_ids(names);
    if (dropped > 0) {
        target.description +=
            "; " + std::to_string(dropped) + " records no longer than the launch time left out";
    }
    target.x_unit = "bytes";
    target.default_method = "least_squares";
    target.default_rounding = Rounding::significant(4);
    target.y_min = kMinMemoryEfficiency;
    target.y_max = 1.0;
    target.integer_x = true;
    target.fallback_kind = "derived";
    target.fallback_source = joined_ids(ids) + ": least-squares fit of streaming-kernel timings";
    target.extra_options = {"kernels", "subtract_launch"};
    FittedCurve fitted = fit_curve(d, target, samples);
    state.set(kEfficiencyCurvePath, std::move(fitted.json), std::move(fitted.report));
}

void fit_kind_factor(FitState& state, cost::MemoryBoundKind kind) {
    const std::string path = kind_factor_path(kind);
    const auto node = state.directive_node(path);
    if (!node) {
        return;
    }
    const Directive d(path, *node, state.json());
    d.expect({"subtract_launch", "decimals", "significant"});
    const double hbm = state.value(kHbmPath, path);
    const cost::Curve curve = state.curve(kEfficiencyCurvePath, path);
    const LaunchSetting launch = launch_setting(state, d);
    const KernelKind kernel = kernel_measuring(kind);
    std::vector<double> measured;  // efficiency of each record
    std::vector<double> on_curve;  // the curve's efficiency at its size
    TargetReport r;
    r.path = path;
    std::vector<std::string> ids;
    for (const KernelMeasurement& k : state.measurements().kernels) {
        if (k.kind != kernel || (launch.subtract && k.seconds <= launch.us * kSecondsPerMicrosecond)) {
            continue;
        }
        const auto bytes = static_cast<double>(k.bytes_moved);
        measured.push_back(streaming_GBps(k, launch.us, launch.subtract) / hbm);
        on_curve.push_back(cost::read_curve(curve, bytes).y);
        r.residuals.push_back({k.origin.record, bytes, measured.back(), 0.0, true});
        ids.push_back(k.origin.source_id);
        r.x_min = r.residuals.size() == 1 ? bytes : std::min(r.x_min, bytes);
        r.x_max = r.residuals.size() == 1 ? bytes : std::max(r.x_max, bytes);
    }
    if (measured.empty()) {
        d.fail(std::string("has no measurements of the ") + to_string(kernel) + " kernel in the inputs");
    }
    const Rounding rounding = d.rounding(Rounding::significant(3));
    const double raw = fit_relative_scale(measured, on_curve);
    const double factor = rounding.apply(std::clamp(raw, kMinMemoryEfficiency, 1.0));
    if (raw > 1.0) {
        r.remarks.push_back("clamped to 1 from " + short_number(raw) + " (faster than the streaming curve)");
    }
    for (std::size_t i = 0; i < r.residuals.size(); ++i) {
        r.residuals[i].fitted = factor * on_curve[i];
    }
    r.inputs = {joined_ids(ids)};
    r.method = std::string("least-squares factor (relative residuals) of the ") + to_string(kernel) +
               " kernel's efficiency over memory_bound.efficiency_vs_bytes at its sizes; efficiency = bytes "
               "moved / " +
               launch.text + " / " + short_number(hbm) + " GB/s; " + rounding.describe();
    state.set_value(d, factor, "derived",
                    r.inputs.front() + ": " + to_string(kernel) + " timings over the curve", r, "bytes");
}

}  // namespace

std::string kind_factor_path(cost::MemoryBoundKind kind) {
    return std::string("memory_bound.kind_factors.") + cost::to_string(kind);
}

double streaming_GBps(const KernelMeasurement& k, double launch_us, bool subtract_launch) {
    if (!subtract_launch) {
        return k.achieved_GBps();
    }
    return static_cast<double>(k.bytes_moved) / (k.seconds - launch_us * kSecondsPerMicrosecond) /
           kBytesPerGB;
}

void fit_launch_target(FitState& state) {
    const auto node = state.directive_node(kLaunchPath);
    if (!node) {
        return;
    }
    const Directive d(kLaunchPath, *node, state.json());
    d.expect({"decimals", "significant"});
    std::vector<double> us;
    TargetReport r;
    r.path = kLaunchPath;
    std::vector<std::string> ids;
    for (const KernelMeasurement& k : state.measurements().kernels) {
        if (k.kind == KernelKind::Empty) {
            us.push_back(k.seconds / kSecondsPerMicrosecond);
            r.residuals.push_back({k.origin.record, 0.0, us.back(), 0.0, true});
            ids.push_back(k.origin.source_id);
        }
    }
    if (us.empty()) {
        d.fail("has no empty-kernel measurements in the inputs (kernel \"empty\")");
    }
    const Rounding rounding = d.rounding(Rounding::significant(3));
    const double launch = rounding.apply(fit_scale(us, std::vector<double>(us.size(), 1.0)));
    for (Residual& res : r.residuals) {
        res.fitted = launch;
    }
    r.inputs = {joined_ids(ids)};
    r.method = "mean time of " + std::to_string(us.size()) + " empty-kernel launches, " + rounding.describe();
    state.set_value(d, launch, "measured", r.inputs.front() + ": empty-kernel launches", r);
}

void fit_memory_bound_targets(FitState& state) {
    fit_efficiency_curve(state);
    for (const auto kind : cost::kMemoryBoundKinds) {
        fit_kind_factor(state, kind);
    }
}

}  // namespace trainsim::calibrate
