#include "sim/workload/model_flops.h"

namespace trainsim::workload {
namespace {

struct Terms {
    double B, L, s, h, V;
};

Terms terms_of(const config::Scenario& sc) {
    return Terms{static_cast<double>(sc.training.global_batch_size), static_cast<double>(sc.model.num_layers),
                 static_cast<double>(sc.model.seq_length), static_cast<double>(sc.model.hidden_size),
                 static_cast<double>(sc.model.padded_vocab_size)};
}

}  // namespace

Flops model_flops_per_iteration(const config::Scenario& sc) {
    const Terms t = terms_of(sc);
    return Flops{72.0 * t.B * t.L * t.s * t.h * t.h * (1.0 + t.s / (6.0 * t.h) + t.V / (12.0 * t.h * t.L))};
}

Flops hardware_flops_per_iteration(const config::Scenario& sc) {
    const Terms t = terms_of(sc);
    switch (sc.training.recompute_granularity) {
    case config::RecomputeGranularity::Selective:
        return Flops{72.0 * t.B * t.L * t.s * t.h * t.h * (1.0 + t.s / (3.0 * t.h) + t.V / (12.0 * t.h * t.L))};
    case config::RecomputeGranularity::Full:
        return Flops{96.0 * t.B * t.L * t.s * t.h * t.h * (1.0 + t.s / (6.0 * t.h) + t.V / (16.0 * t.h * t.L))};
    default:
        return model_flops_per_iteration(sc);
    }
}

bool hardware_flops_formula_applies(const config::Scenario& sc) {
    const config::TrainingConfig& t = sc.training;
    if (t.recompute_granularity == config::RecomputeGranularity::Overlapped) {
        return false;  // the scheduler's plan decides, layer by layer
    }
    if (t.recompute_granularity != config::RecomputeGranularity::Full) {
        return true;
    }
    return t.recompute_method != config::RecomputeMethod::Block && !t.num_microbatches_with_partial_activation_checkpoints;
}

const char* hardware_flops_convention(const config::Scenario& sc) {
    if (!hardware_flops_formula_applies(sc)) {
        return "GEMM FLOPs the simulation executed, recompute included";
    }
    switch (sc.training.recompute_granularity) {
    case config::RecomputeGranularity::Selective:
        return "Korthikanti Eq. 8 as printed (selective recompute)";
    case config::RecomputeGranularity::Full:
        return "Narayanan Eq. 3 (full recompute: forward counted twice)";
    default:
        return "Korthikanti Eq. 7 (no recompute: hardware FLOPs = model FLOPs)";
    }
}

}  // namespace trainsim::workload
