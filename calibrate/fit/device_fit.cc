#include "calibrate/fit/device_fit.h"

#include <cmath>

#include "calibrate/fit/datasheet_peaks.h"
#include "calibrate/fit/memory_bound_fit.h"
#include "sim/core/units.h"

namespace trainsim::calibrate {

namespace {

const DeviceFacts* facts(const FitState& state) {
    return state.measurements().device ? &*state.measurements().device : nullptr;
}

// A fact of the device as a value; integer facts as JSON integers.
void set_fact(FitState& state, const Directive& d, const DeviceFact& fact, const std::string& source_id,
              bool integer) {
    d.expect({});
    TargetReport r;
    r.path = d.path();
    r.method = "device fact recorded by the benchmark run: " + fact.how;
    r.inputs = {source_id};
    OrderedJson value =
        integer ? OrderedJson(static_cast<std::int64_t>(std::llround(fact.value))) : OrderedJson(fact.value);
    state.set_value(d, std::move(value), fact.kind, source_id + ": " + fact.how, r);
}

void fit_peak(FitState& state) {
    const std::string path = "gpu.peak_tflops";
    const auto node = state.directive_node(path);
    if (!node) {
        return;
    }
    const Directive d(path, *node, state.json());
    d.expect({"decimals", "significant"});
    const DeviceFacts* f = facts(state);
    if (state.options().peak_tflops) {
        TargetReport r;
        r.path = path;
        r.method = "given with --peak-tflops";
        state.set_value(d, *state.options().peak_tflops, "datasheet", "S-USER: given with --peak-tflops", r);
        return;
    }
    if (f != nullptr && f->peak_tflops) {
        set_fact(state, d, *f->peak_tflops, f->source_id, false);
        return;
    }
    if (f != nullptr && !f->peak_is_best_measured) {
        if (const auto peak = datasheet_peak(f->name)) {
            TargetReport r;
            r.path = path;
            r.method = "the datasheet peak of " + f->name + " (" + peak->what + ")";
            state.doc()["sources"][kDatasheetSourceId] = kDatasheetCitation;
            state.set_value(d, peak->tflops, "datasheet", std::string(kDatasheetSourceId) + ": " + peak->what,
                            r);
            return;
        }
    }
    if (f == nullptr || !f->peak_is_best_measured || state.measurements().gemms.empty()) {
        d.fail(
            "is not among the device facts of the inputs; give --peak-tflops (the datasheet's dense 16-bit "
            "rate) or fit with --base PROFILE");
    }
    const GemmMeasurement* best = nullptr;
    for (const GemmMeasurement& g : state.measurements().gemms) {
        if (best == nullptr || g.achieved_tflops() > best->achieved_tflops()) {
            best = &g;
        }
    }
    // A bound every measured rate stays under: rounded up.
    const Rounding rounding = d.rounding(Rounding::significant(4, Rounding::Direction::Up));
    TargetReport r;
    r.path = path;
    r.method = "the best GEMM rate measured (" + best->origin.record + "), " + rounding.describe() +
               ": this device has no datasheet peak, so efficiencies are fractions of its best";
    r.inputs = {best->origin.source_id};
    state.set_value(d, rounding.apply(best->achieved_tflops()), "measured",
                    best->origin.source_id + ": best GEMM rate, " + best->origin.record, r);
}

void fit_hbm(FitState& state) {
    const std::string path = "gpu.hbm_GBps";
    const auto node = state.directive_node(path);
    if (!node) {
        return;
    }
    const Directive d(path, *node, state.json());
    d.expect({"decimals", "significant", "subtract_launch"});
    const DeviceFacts* f = facts(state);
    if (f != nullptr && f->hbm_GBps) {
        set_fact(state, d, *f->hbm_GBps, f->source_id, false);
        return;
    }
    if (f == nullptr || !f->hbm_is_best_measured) {
        d.fail("is not among the device facts of the inputs; fit with --base PROFILE");
    }
    const bool subtract = d.flag("subtract_launch", true);
    const double launch_us = subtract ? state.value("memory_bound.launch_us", path) : 0.0;
    const KernelMeasurement* best = nullptr;
    double best_GBps = 0.0;
    for (const KernelMeasurement& k : state.measurements().kernels) {
        if (k.kind == KernelKind::Copy && k.seconds > launch_us * kSecondsPerMicrosecond) {
            const double bw = streaming_GBps(k, launch_us, subtract);
            if (bw > best_GBps) {
                best_GBps = bw;
                best = &k;
            }
        }
    }
    if (best == nullptr) {
        d.fail("needs copy-kernel measurements longer than the launch time to take the best streaming rate");
    }
    const Rounding rounding = d.rounding(Rounding::significant(4, Rounding::Direction::Up));
    TargetReport r;
    r.path = path;
    r.method = "the best streaming rate of the copy kernel (" + best->origin.record + "), " +
               rounding.describe() + ": this device has no datasheet bandwidth";
    r.inputs = {best->origin.source_id};
    state.set_value(d, rounding.apply(best_GBps), "measured",
                    best->origin.source_id + ": best copy-kernel rate, " + best->origin.record, r);
}

// The CUDA compute capability the run reported (its `how` names the generation, e.g. "sm_90, Hopper"):
// what the simulator checks FP8 recipes against (MXFP8 needs 10.x).
void fit_capability(FitState& state) {
    const std::string path = "gpu.compute_capability";
    const auto node = state.directive_node(path);
    if (!node) {
        return;
    }
    const Directive d(path, *node, state.json());
    const DeviceFacts* f = facts(state);
    if (f == nullptr || !f->compute_capability) {
        d.fail(
            "is not among the device facts of the inputs (a CUDA run records it); fit with --base PROFILE");
    }
    set_fact(state, d, *f->compute_capability, f->source_id, false);
}

void fit_integer_fact(FitState& state, const std::string& path,
                      const std::optional<DeviceFact> DeviceFacts::*member) {
    const auto node = state.directive_node(path);
    if (!node) {
        return;
    }
    const Directive d(path, *node, state.json());
    const DeviceFacts* f = facts(state);
    if (f == nullptr || !(f->*member)) {
        d.fail("is not among the device facts of the inputs; fit with --base PROFILE");
    }
    set_fact(state, d, *(f->*member), f->source_id, true);
}

}  // namespace

void fit_device_targets(FitState& state) {
    fit_peak(state);
    fit_hbm(state);
    fit_integer_fact(state, "gpu.memory_visible_bytes", &DeviceFacts::memory_bytes);
    fit_capability(state);
    fit_integer_fact(state, "node.gpus_per_node", &DeviceFacts::gpus_per_node);
    fit_integer_fact(state, "compute.gemm.wave_quantization.num_sms", &DeviceFacts::num_sms);
}

}  // namespace trainsim::calibrate
