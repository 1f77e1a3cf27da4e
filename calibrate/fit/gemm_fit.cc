#include "calibrate/fit/gemm_fit.h"

#include <algorithm>
#include <cmath>

#include "calibrate/fit/curve_fit.h"
#include "calibrate/fit/least_squares.h"
#include "sim/core/input_error.h"
#include "sim/core/units.h"

namespace trainsim::calibrate {

namespace {

constexpr const char* kCurvePath = "compute.gemm.efficiency_vs_flops";
constexpr const char* kFloorPath = "compute.gemm.min_kernel_us";
constexpr const char* kPeakPath = "gpu.peak_tflops";
constexpr const char* kSplitPath = "compute.gemm_fp8.split_accumulator_slowdown";

// The two dense-GEMM curves: 16-bit against the 16-bit peak, FP8 against the FP8 peak (the same wave model).
struct DenseCurve {
    const char* curve;
    const char* peak;
    GemmRecordPrecision precision;
};
constexpr DenseCurve kBf16Curve{kCurvePath, kPeakPath, GemmRecordPrecision::Bits16};
constexpr DenseCurve kFp8Curve{"compute.gemm_fp8.efficiency_vs_flops", "gpu.fp8_peak_tflops",
                               GemmRecordPrecision::Fp8Fast};
constexpr double kMinEfficiency = 1e-4;

bool has_any_tag(const GemmMeasurement& g, const std::vector<std::string>& tags) {
    return std::any_of(g.tags.begin(), g.tags.end(), [&](const std::string& t) {
        return std::find(tags.begin(), tags.end(), t) != tags.end();
    });
}

std::vector<std::string> ids_of(const std::vector<Sample>& samples) {
    std::vector<std::string> ids;
    for (const Sample& s : samples) {
        if (s.used) {
            ids.push_back(s.source_id);
        }
    }
    return ids;
}

void fit_curve_target(FitState& state, const DenseCurve& spec) {
    const auto node = state.directive_node(spec.curve);
    if (!node) {
        return;
    }
    const Directive d(spec.curve, *node, state.json());
    const double peak = state.value(spec.peak, spec.curve);
    const std::string wq = "compute.gemm.wave_quantization.";
    const int sms = static_cast<int>(state.value(wq + "num_sms", spec.curve));
    const int tile_m = static_cast<int>(state.value(wq + "tile_m", spec.curve));
    const int tile_n = static_cast<int>(state.value(wq + "tile_n", spec.curve));
    const std::vector<std::string> excluded = d.list("exclude_tags");

    std::vector<Sample> samples;
    bool any_corrected = false;
    for (const GemmMeasurement& g : state.measurements().gemms) {
        if (g.cls != cost::GemmClass::Dense || gemm_record_precision(g) != spec.precision) {
            continue;
        }
        const double wave = gemm_wave_factor(g.shape, sms, tile_m, tile_n);
        any_corrected = any_corrected || wave < 1.0;
        samples.push_back({g.origin.record, g.origin.record, g.origin.source_id, g.shape.flops().value,
                           g.achieved_tflops() / peak / wave, !has_any_tag(g, excluded)});
    }
    if (samples.empty()) {
        d.fail(spec.precision == GemmRecordPrecision::Fp8Fast
                   ? "has no FP8 dense GEMM measurements in the inputs (dtype fp8)"
                   : "has no 16-bit dense GEMM measurements in the inputs");
    }
    // A curve of fractions of the peak cannot hold a GEMM faster than the peak: capping it at 1 would
    // price every such GEMM slower than measured, silently. The peak is wrong for this device.
    const auto fastest =
        std::max_element(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) {
            return (a.used ? a.y : 0.0) < (b.used ? b.y : 0.0);
        });
    if (fastest->used && fastest->y > 1.0) {
        d.fail("cannot hold " + fastest->record + ": its efficiency (achieved TFLOP/s / gpu.peak_tflops " +
               short_number(peak) + " / wave factor) is " + short_number(fastest->y) +
               ", above 1; the peak is not this device's: give --peak-tflops (its datasheet dense 16-bit "
               "rate); or, for a shape with fewer output tiles than SMs, the library split K, which the wave "
               "model cannot hold: leave the record out");
    }
    CurveTarget target;
    target.description = "efficiency = achieved TFLOP/s / " + short_number(peak) + " (" + spec.peak +
                         ") / the wave factor of the shape on " + std::to_string(sms) + " SMs with " +
                         std::to_string(tile_m) + "x" + std::to_string(tile_n) + " tiles" +
                         (any_corrected ? "" : " (1 for every record)");
    if (!excluded.empty()) {
        std::string tags;
        for (const auto& t : excluded) {
            tags += (tags.empty() ? "" : ", ") + t;
        }
        target.description += "; records tagged " + tags + " are compared, not fitted";
    }
    target.x_unit = "FLOPs";
    target.default_method = "least_squares";
    target.default_rounding = Rounding::significant(4);
    target.y_min = kMinEfficiency;
    target.y_max = 1.0;
    target.fallback_kind = "derived";
    target.fallback_source = joined_ids(ids_of(samples)) + ": least-squares fit of " +
                             (spec.precision == GemmRecordPrecision::Fp8Fast ? "FP8 " : "") +
                             "dense GEMM timings";
    target.extra_options = {"exclude_tags"};
    FittedCurve fitted = fit_curve(d, target, samples);
    state.set(spec.curve, std::move(fitted.json), std::move(fitted.report));
}

void fit_floor_target(FitState& state) {
    const auto node = state.directive_node(kFloorPath);
    if (!node) {
        return;
    }
    const Directive d(kFloorPath, *node, state.json());
    d.expect({"decimals", "significant"});
    const auto& gemms = state.measurements().gemms;
    const auto shortest = std::min_element(
        gemms.begin(), gemms.end(), [](const auto& a, const auto& b) { return a.seconds < b.seconds; });
    if (shortest == gemms.end()) {
        d.fail("has no GEMM measurements in the inputs");
    }
    // The floor is a bound no GEMM goes below: the shortest call measured, rounded down.
    const Rounding rounding = d.rounding(Rounding::significant(3, Rounding::Direction::Down));
    const double us = rounding.apply(shortest->seconds * kMicrosecondsPerSecond);
    TargetReport r;
    r.path = kFloorPath;
    r.method = "the shortest GEMM call measured (" + shortest->origin.record + ", " +
               short_number(shortest->shape.flops().value) + " FLOPs), " + rounding.describe();
    r.inputs = {shortest->origin.source_id};
    state.set_value(d, us, "measured",
                    shortest->origin.source_id + ": shortest GEMM call, " + shortest->origin.record, r);
}

// compute.gemm_fp8.split_accumulator_slowdown: the shapes timed both ways (the same shape, input file and
// cited source), their split accumulator time summed over their fast accumulation time summed. Time-weighted,
// because the cost model multiplies every FP8 dgrad and wgrad GEMM's time by this one factor; small
// launch-bound shapes, whose ratios scatter widely, weigh what they cost. At least 1: a GPU on which both
// modes run alike may measure slightly below, which the profile does not accept.
void fit_split_accumulator_target(FitState& state) {
    const auto node = state.directive_node(kSplitPath);
    if (!node) {
        return;
    }
    const Directive d(kSplitPath, *node, state.json());
    d.expect({"decimals", "significant"});
    const auto& gemms = state.measurements().gemms;
    TargetReport r;
    r.path = kSplitPath;
    std::vector<double> ratios;
    double split_s = 0.0;
    double fast_s = 0.0;
    std::size_t unpaired = 0;
    for (const GemmMeasurement& split : gemms) {
        if (split.cls != cost::GemmClass::Dense ||
            gemm_record_precision(split) != GemmRecordPrecision::Fp8SplitAccumulator) {
            continue;
        }
        const auto fast = std::find_if(gemms.begin(), gemms.end(), [&](const GemmMeasurement& g) {
            return g.cls == cost::GemmClass::Dense &&
                   gemm_record_precision(g) == GemmRecordPrecision::Fp8Fast && g.shape == split.shape &&
                   g.origin.source_id == split.origin.source_id && g.origin.source == split.origin.source;
        });
        if (fast == gemms.end()) {
            ++unpaired;
            continue;
        }
        ratios.push_back(split.seconds / fast->seconds);
        split_s += split.seconds;
        fast_s += fast->seconds;
        r.residuals.push_back({split.origin.record, split.shape.flops().value, ratios.back(), 0.0, true});
        if (std::find(r.inputs.begin(), r.inputs.end(), split.origin.source_id) == r.inputs.end()) {
            r.inputs.push_back(split.origin.source_id);
        }
    }
    if (ratios.empty()) {
        d.fail(std::string("has no FP8 GEMM timed both with fast accumulation (dtype fp8) and with the split "
                           "accumulator (dtype ") +
               kFp8SplitAccumulatorDtype + ") in one input file");
    }
    if (unpaired > 0) {
        r.remarks.push_back(std::to_string(unpaired) + " split-accumulator record" +
                            (unpaired == 1 ? "" : "s") +
                            " without a fast-accumulation twin (same shape, file and source) left out");
    }
    const Rounding rounding = d.rounding(Rounding::significant(3));
    const double ratio = split_s / fast_s;
    const double fitted = rounding.apply(std::max(1.0, ratio));
    if (ratio < 1.0) {
        r.remarks.push_back("the measured ratio " + short_number(ratio) +
                            " is below 1 (both modes run alike here): held at 1");
    }
    for (Residual& res : r.residuals) {
        res.fitted = fitted;
    }
    const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
    r.method = "summed split-accumulator time / summed fast-accumulation time over " +
               std::to_string(ratios.size()) + " shape" + (ratios.size() == 1 ? "" : "s") + " (ratios " +
               short_number(*lo) + " to " + short_number(*hi) + "), " + rounding.describe();
    r.inputs = {joined_ids(r.inputs)};
    state.set_value(d, fitted, "measured",
                    r.inputs.front() + ": FP8 GEMM time with the split accumulator over fast accumulation, "
                                       "summed over the shapes timed both ways",
                    r);
}

void fit_attention_target(FitState& state, const std::string& key, cost::GemmClass cls) {
    const std::string path = "compute.attention." + key;
    const auto node = state.directive_node(path);
    if (!node) {
        return;
    }
    const Directive d(path, *node, state.json());
    d.expect({"decimals", "significant"});
    const double peak = state.value(kPeakPath, path);
    std::vector<double> y;
    TargetReport r;
    r.path = path;
    for (const GemmMeasurement& g : state.measurements().gemms) {
        if (g.cls == cls) {
            y.push_back(g.achieved_tflops() / peak);
            r.residuals.push_back({g.origin.record, 0.0, y.back(), 0.0, true});
            r.inputs.push_back(g.origin.source_id);
        }
    }
    if (y.empty()) {
        d.fail(std::string("has no ") + to_string(cls) + " GEMM measurements in the inputs");
    }
    if (const auto fastest = std::max_element(y.begin(), y.end()); *fastest > 1.0) {
        d.fail(
            "cannot hold " + r.residuals[static_cast<std::size_t>(fastest - y.begin())].record +
            ": its efficiency (achieved TFLOP/s / gpu.peak_tflops " + short_number(peak) + ") is " +
            short_number(*fastest) +
            ", above 1; the peak is not this device's: give --peak-tflops (its datasheet dense 16-bit rate)");
    }
    // The least-squares constant: the mean efficiency.
    const std::vector<double> ones(y.size(), 1.0);
    const Rounding rounding = d.rounding(Rounding::significant(3));
    const double fitted = rounding.apply(std::clamp(fit_scale(y, ones), kMinEfficiency, 1.0));
    for (Residual& res : r.residuals) {
        res.fitted = fitted;
    }
    r.inputs = {joined_ids(r.inputs)};
    r.method = "mean efficiency (achieved TFLOP/s / " + short_number(peak) + ") of " +
               std::to_string(y.size()) + " " + to_string(cls) + " batched GEMM" +
               (y.size() == 1 ? "" : "s") + ", " + rounding.describe();
    state.set_value(d, fitted, "derived",
                    r.inputs.front() + ": mean of the " + to_string(cls) + " GEMM timings", r);
}

}  // namespace

GemmRecordPrecision gemm_record_precision(const GemmMeasurement& g) {
    if (g.dtype == kFp8SplitAccumulatorDtype) {
        return GemmRecordPrecision::Fp8SplitAccumulator;
    }
    return g.dtype.starts_with("fp8") || g.dtype == "e4m3" || g.dtype == "e5m2" ? GemmRecordPrecision::Fp8Fast
                                                                                : GemmRecordPrecision::Bits16;
}

double gemm_wave_factor(const cost::GemmShape& shape, int num_sms, int tile_m, int tile_n) {
    const double flops = shape.flops().value;
    const auto ceil_div = [](std::int64_t a, std::int64_t b) { return static_cast<double>((a + b - 1) / b); };
    const double tiles =
        ceil_div(shape.m, tile_m) * ceil_div(shape.n, tile_n) * static_cast<double>(shape.batch);
    const double cube_tiles = std::pow(flops / 2.0, 2.0 / 3.0) / (static_cast<double>(tile_m) * tile_n);
    const double fill = std::min(1.0, tiles / num_sms);
    const double cube_fill = std::min(1.0, cube_tiles / num_sms);
    return std::min(1.0, fill / cube_fill);
}

void fit_gemm_targets(FitState& state) {
    fit_curve_target(state, kBf16Curve);
    fit_curve_target(state, kFp8Curve);
    fit_split_accumulator_target(state);
    fit_floor_target(state);
    fit_attention_target(state, "score_efficiency", cost::GemmClass::AttentionScore);
    fit_attention_target(state, "over_value_efficiency", cost::GemmClass::AttentionOverValue);
}

}  // namespace trainsim::calibrate
