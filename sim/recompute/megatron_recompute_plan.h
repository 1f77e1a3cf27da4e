// Megatron's recompute policies compiled into a recomputation plan, so that one backward lowering
// serves them and the plans the recompute schedulers choose.
#pragma once

#include "sim/config/scenario.h"
#include "sim/recompute/recompute_plan.h"

namespace trainsim::recompute {

/// The plan of the scenario's training.recompute_granularity:
/// - none: every layer Keep; selective: every layer SelectiveOnDemand (what it recomputes,
///   training.recompute_modules, is in the layers' op lists);
/// - full, recompute_method uniform: each chunk's layers in checkpoint blocks of recompute_num_layers, a
///   block's first layer FullOnDemand and the rest FullChained (the last block of a chunk may be short);
///   block: the first recompute_num_layers layers of each chunk FullOnDemand, the rest Keep
///   (Megatron's transformer_block.py, _checkpointed_forward);
/// - full with num_microbatches_with_partial_activation_checkpoints N (Korthikanti Appendix C, as
///   Megatron's 1F1B schedule runs it): of every W + 1 micro-batches on rank r, W = min(p − r − 1, m) its
///   warm-up count, the first N keep everything.
/// Overlapped recomputation has no Megatron policy: its plan comes from the recompute search, and asking
/// for it here is an InputError.
[[nodiscard]] RecomputePlan megatron_recompute_plan(const config::Scenario& scenario);

}  // namespace trainsim::recompute
