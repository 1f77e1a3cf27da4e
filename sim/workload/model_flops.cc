#include "sim/workload/model_flops.h"

namespace trainsim::workload {
namespace {

struct Terms {
    double B, L, s, h, f, V;
};

Terms terms_of(const config::Scenario& sc) {
    return Terms{
        static_cast<double>(sc.training.global_batch_size), static_cast<double>(sc.model.num_layers),
        static_cast<double>(sc.model.seq_length),           static_cast<double>(sc.model.hidden_size),
        static_cast<double>(sc.model.ffn_hidden_size),      static_cast<double>(sc.model.padded_vocab_size)};
}

// One layer's forward GEMMs for the whole batch (Korthikanti Appendix A with an MLP of size f): QKV 6Bsh²,
// projection 2Bsh², the two MLP GEMMs 4Bshf, QKᵀ and attention over V 4Bs²h. With f = 4h this is
// 24Bsh² + 4Bs²h, and the formulas below are Eq. 7, Eq. 8 and Narayanan's Eq. 3 exactly.
double layer_forward(const Terms& t) {
    return 8.0 * t.B * t.s * t.h * t.h + 4.0 * t.B * t.s * t.h * t.f + 4.0 * t.B * t.s * t.s * t.h;
}
double attention_forward(const Terms& t) {
    return 4.0 * t.B * t.s * t.s * t.h;
}
double logits_training(const Terms& t) {
    return 6.0 * t.B * t.s * t.h * t.V;
}  // forward + backward

}  // namespace

Flops model_flops_per_iteration(const config::Scenario& sc) {
    // Eq. 7: 72·B·L·s·h²·(1 + s/(6h) + V/(12hL)) = 3 × L layer forwards + the logits' forward and backward.
    const Terms t = terms_of(sc);
    return Flops{3.0 * t.L * layer_forward(t) + logits_training(t)};
}

Flops hardware_flops_per_iteration(const config::Scenario& sc) {
    const Terms t = terms_of(sc);
    switch (sc.training.recompute_granularity) {
    case config::RecomputeGranularity::Selective:
        // Eq. 8 as printed: s/(3h) in place of s/(6h), i.e. three more attention forwards per layer.
        return Flops{model_flops_per_iteration(sc).value + 3.0 * t.L * attention_forward(t)};
    case config::RecomputeGranularity::Full:
        // Narayanan Eq. 3: 96·B·s·l·h²·(1 + s/(6h) + V/(16lh)), the layers' forward counted twice.
        return Flops{4.0 * t.L * layer_forward(t) + logits_training(t)};
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
    return t.recompute_method != config::RecomputeMethod::Block &&
           !t.num_microbatches_with_partial_activation_checkpoints;
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
