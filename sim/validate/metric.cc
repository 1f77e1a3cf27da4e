#include "sim/validate/metric.h"

#include <stdexcept>

#include "sim/core/units.h"

namespace trainsim::validate {

namespace {

struct UnitSpec {
    Dimension dimension;
    const char* name;
    double per_base;
};

// Bytes: GB and MB are decimal, GiB and MiB binary, as the words say; a paper's "GB" is often GiB, so
// a case must say which it means.
constexpr UnitSpec kUnits[] = {
    {Dimension::Time, "s", 1.0},
    {Dimension::Time, "ms", 1e3},
    {Dimension::Time, "us", 1e6},
    {Dimension::Percent, "%", 100.0},
    {Dimension::Bytes, "B", 1.0},
    {Dimension::Bytes, "KiB", 1.0 / 1024.0},
    {Dimension::Bytes, "MiB", 1.0 / (1024.0 * 1024.0)},
    {Dimension::Bytes, "GiB", 1.0 / kBytesPerGiB},
    {Dimension::Bytes, "MB", 1e-6},
    {Dimension::Bytes, "GB", 1e-9},
    {Dimension::FlopRate, "TFLOP/s", 1e-12},
    {Dimension::TokenRate, "tokens/s", 1.0},
};

}  // namespace

const std::vector<MetricInfo>& all_metrics() {
    static const std::vector<MetricInfo> metrics = {
        {Metric::PerLayerForwardTime, "per_layer_forward_time", Dimension::Time, false},
        {Metric::PerLayerBackwardTime, "per_layer_backward_time", Dimension::Time, false},
        {Metric::PerLayerFwdPlusBwdTime, "per_layer_fwd_plus_bwd_time", Dimension::Time, false},
        {Metric::PerLayerRecomputeTime, "per_layer_recompute_time", Dimension::Time, false},
        {Metric::PerLayerTimeOverheadVsNoRecomputeNoSp, "per_layer_time_overhead_vs_no_recompute_no_sp",
         Dimension::Percent, false},
        {Metric::PerLayerActivationMemory, "per_layer_activation_memory", Dimension::Bytes, false},
        {Metric::ActivationMemoryFractionOfTpOnlyBaseline, "activation_memory_fraction_of_tp_only_baseline",
         Dimension::Percent, false},
        {Metric::ActivationMemorySavedBySelectiveVsStoringAll,
         "activation_memory_saved_by_selective_vs_storing_all", Dimension::Percent, false},
        {Metric::IterationTime, "iteration_time", Dimension::Time, true},
        {Metric::Mfu, "mfu", Dimension::Percent, true},
        {Metric::Hfu, "hfu", Dimension::Percent, true},
        {Metric::TflopsPerGpu, "tflops_per_gpu", Dimension::FlopRate, true},
        {Metric::TokensPerSecond, "tokens_per_s", Dimension::TokenRate, true},
        {Metric::PeakMemory, "peak_memory", Dimension::Bytes, true},
        {Metric::FirstStageActivationMemorySavingOutputTensorDealloc,
         "first_stage_activation_memory_saving_output_tensor_dealloc", Dimension::Bytes, true},
    };
    return metrics;
}

const MetricInfo& info(Metric metric) {
    for (const MetricInfo& m : all_metrics()) {
        if (m.metric == metric) {
            return m;
        }
    }
    throw std::logic_error("validate: metric without an entry in all_metrics()");
}

std::optional<Metric> metric_from_name(const std::string& name) {
    for (const MetricInfo& m : all_metrics()) {
        if (name == m.name) {
            return m.metric;
        }
    }
    return std::nullopt;
}

std::optional<Unit> unit_for(Dimension dimension, const std::string& name) {
    for (const UnitSpec& u : kUnits) {
        if (u.dimension == dimension && name == u.name) {
            return Unit{u.name, u.per_base};
        }
    }
    return std::nullopt;
}

std::string unit_names(Dimension dimension) {
    std::string out;
    for (const UnitSpec& u : kUnits) {
        if (u.dimension == dimension) {
            out += (out.empty() ? "" : ", ") + std::string(u.name);
        }
    }
    return out;
}

const char* to_string(Dimension dimension) {
    switch (dimension) {
    case Dimension::Time:
        return "time";
    case Dimension::Percent:
        return "a percentage";
    case Dimension::Bytes:
        return "memory";
    case Dimension::FlopRate:
        return "a FLOP rate";
    case Dimension::TokenRate:
        return "a token rate";
    }
    return "?";
}

}  // namespace trainsim::validate
