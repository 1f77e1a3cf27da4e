// FLOP counts per iteration in the Megatron convention (GEMMs only), DESIGN.md §6.
#pragma once

#include "sim/config/scenario.h"
#include "sim/core/units.h"

namespace trainsim::workload {

/// Korthikanti Eq. 7: 72·B·L·s·h²·(1 + s/(6h) + V/(12·h·L)), B the global batch, for an MLP of 4h;
/// the MLP term follows ffn_hidden_size when it is not 4h.
[[nodiscard]] Flops model_flops_per_iteration(const config::Scenario& scenario);

/// Hardware FLOPs: Eq. 7 without recompute; Korthikanti Eq. 8 as printed for selective
/// (72·B·L·s·h²·(1 + s/(3h) + V/(12hL))); Narayanan Eq. 3 for full (96·B·L·s·h²·(1 + s/(6h) + V/(16hL))).
[[nodiscard]] Flops hardware_flops_per_iteration(const config::Scenario& scenario);

/// Whether a published convention covers the scenario's recomputation: none, selective of the core
/// attention, or full recompute of every layer of every micro-batch. Otherwise (other recompute_modules,
/// block method, Appendix C partial checkpoints) hardware FLOPs are what the simulation executed (for
/// recompute_modules: the model FLOPs plus the recomputed GEMMs).
[[nodiscard]] bool hardware_flops_formula_applies(const config::Scenario& scenario);

/// Which convention model_flops_per_iteration follows, for the report: Korthikanti Eq. 7 for the GPT-3
/// layer, Megatron-LM's num_floating_point_operations (NeMo's "Model TFLOP/s/GPU") otherwise. The two
/// agree wherever both apply.
[[nodiscard]] const char* model_flops_convention(const config::Scenario& scenario);

/// Which convention hardware_flops_per_iteration used, for the report.
[[nodiscard]] const char* hardware_flops_convention(const config::Scenario& scenario);

}  // namespace trainsim::workload
