#include "sim/workload/optimizer_state.h"

namespace trainsim::workload {

OptimizerStateBytes optimizer_state_bytes(const config::Scenario& sc) {
    const config::TrainingConfig& t = sc.training;
    OptimizerStateBytes b;
    b.gradient = config::bytes_of(t.main_grads_dtype);
    // Apex's int16 param_remainders_shard (distributed_fused_adam.py, tag 24.07, line 460) or its fp32
    // params_shard (line 452).
    constexpr std::int64_t kRemainderBytes = 2;
    b.master = t.store_params ? config::bytes_of(config::StateDtype::Fp32)
                              : (t.store_param_remainders ? kRemainderBytes : 0);
    b.exp_avg = config::bytes_of(t.exp_avg_dtype);
    b.exp_avg_sq = config::bytes_of(t.exp_avg_sq_dtype);
    return b;
}

std::int64_t gradient_bytes(const config::Scenario& sc) {
    return optimizer_state_bytes(sc).gradient;
}

std::int64_t adam_step_bytes_per_parameter(const config::Scenario& sc) {
    const OptimizerStateBytes b = optimizer_state_bytes(sc);
    const std::int64_t weight_as_master = sc.training.store_params ? 0 : b.weight;
    // Gradient read and norm read; master and moments read and written; 16-bit weight written.
    return 2 * b.gradient + 2 * b.state() + b.weight + weight_as_master;
}

}  // namespace trainsim::workload
