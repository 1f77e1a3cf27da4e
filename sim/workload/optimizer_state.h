// What the optimizer keeps per parameter and in which format (training.main_grads_dtype,
// exp_avg_dtype, exp_avg_sq_dtype, store_params, store_param_remainders): the bytes static memory holds,
// the data-parallel gradient reduction moves and the Adam step reads and writes.
#pragma once

#include <cstdint>

#include "sim/config/scenario.h"

namespace trainsim::workload {

/// Bytes per parameter of each piece of mixed-precision Adam's state. Megatron's default (its
/// distributed-optimizer guide): 16-bit weight 2, fp32 gradient 4, fp32 master 4, fp32 moments 4 + 4.
/// NeMo 24.07's Apex DistributedFusedAdam under megatron_amp_O2 (NeMo megatron_base_model.py, r2.0.0rc1,
/// lines 784-806): gradients in optim.grad_sync_dtype; optim.dtype fp32 stores 16-bit remainders (2)
/// instead of the fp32 master; optim.dtype bf16 keeps bf16 moments and no master copy at all (0).
struct OptimizerStateBytes {
    std::int64_t weight = 2;
    std::int64_t gradient = config::bytes_of(config::StateDtype::Fp32);
    std::int64_t master = 4;
    std::int64_t exp_avg = 4;
    std::int64_t exp_avg_sq = 4;

    /// What the distributed optimizer shards: master weight and both moments (12 by default).
    [[nodiscard]] std::int64_t state() const { return master + exp_avg + exp_avg_sq; }
};

[[nodiscard]] OptimizerStateBytes optimizer_state_bytes(const config::Scenario& scenario);

/// Bytes per gradient element in the gradient buffer and in the data-parallel reduction
/// (training.main_grads_dtype: 4 for fp32, Megatron's accumulate_allreduce_grads_in_fp32; 2 for bf16).
[[nodiscard]] std::int64_t gradient_bytes(const config::Scenario& scenario);

/// Bytes the Adam step moves per parameter on the GPU that owns it: read the gradient, the master
/// weight and both moments, write master and moments and the 16-bit weight, plus one more read of the
/// gradient for the norm used by gradient clipping. Default 4 + 4 + 8 + 4 + 8 + 2 + 4 = 34. Without an
/// fp32 master (store_params=false) the step reads the 16-bit weight as its master instead (2 more; with
/// store_param_remainders the remainder too, read and written).
[[nodiscard]] std::int64_t adam_step_bytes_per_parameter(const config::Scenario& scenario);

}  // namespace trainsim::workload
