// The metrics a validation case can compare, and the units each may be published in.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trainsim::validate {

/// What a metric measures; a case's unit must be one of its dimension's units.
enum class Dimension { Time, Percent, Bytes, FlopRate, TokenRate };

enum class Metric {
    // One transformer layer on one GPU for one micro-batch (`trainsim layer`, Korthikanti Table 4).
    PerLayerForwardTime,
    PerLayerBackwardTime,  // includes the recompute done in the backward
    PerLayerFwdPlusBwdTime,
    PerLayerRecomputeTime,
    /// (forward + backward) of the case over the same layer with no recompute and no sequence
    /// parallelism, minus 1 (Korthikanti §6.2 on Figure 8).
    PerLayerTimeOverheadVsNoRecomputeNoSp,
    PerLayerActivationMemory,  // what one layer keeps for its backward
    /// The case's per-layer activations over the tensor-parallel-only baseline's (Figure 7).
    ActivationMemoryFractionOfTpOnlyBaseline,
    /// 1 − (activations with selective recompute) / (activations storing everything), with the case's
    /// sequence parallelism (Korthikanti §5).
    ActivationMemorySavedBySelectiveVsStoringAll,
    // One training iteration (`trainsim run`).
    IterationTime,
    Mfu,
    Hfu,
    TflopsPerGpu,
    TokensPerSecond,
    PeakMemory,  // the largest peak over all ranks
    /// What freeing each stage's pipeline output once sent saves on the first stage: its activation
    /// memory at the peak without the optimisation minus with it (Korthikanti Appendix B).
    FirstStageActivationMemorySavingOutputTensorDealloc,
};

struct MetricInfo {
    Metric metric;
    const char* name;
    Dimension dimension;
    bool needs_iteration;  // a whole training iteration, not one layer or a formula
};

[[nodiscard]] const std::vector<MetricInfo>& all_metrics();
[[nodiscard]] const MetricInfo& info(Metric metric);
[[nodiscard]] std::optional<Metric> metric_from_name(const std::string& name);

/// A unit: its spelling and the factor from the metric's base unit (seconds, fraction, bytes,
/// FLOP/s, tokens/s) to it.
struct Unit {
    std::string name;
    double per_base = 1.0;  // value in this unit = value in the base unit × per_base
};

/// The unit spelled `name` for `dimension`, or nullopt when it is not one of the dimension's units.
[[nodiscard]] std::optional<Unit> unit_for(Dimension dimension, const std::string& name);

/// "s, ms, us" — the units a dimension accepts, for error messages.
[[nodiscard]] std::string unit_names(Dimension dimension);

[[nodiscard]] const char* to_string(Dimension dimension);

}  // namespace trainsim::validate
