// FSDP's per-layer traffic on one GPU (workload/fsdp_ops.h): a layer's weights all-gathered on the
// data-parallel stream before its forward and again before its backward, its gradients reduce-scattered
// right after its backward.
#pragma once

#include "sim/config/scenario.h"
#include "sim/program/layer_op_lists.h"
#include "sim/program/op_lowering.h"

namespace trainsim::program {

class FsdpLowering {
public:
    /// On with parallelism.data_parallel_sharding_strategy=optim_grads_params and d·c > 1; the two op
    /// lists are then built into `store`.
    FsdpLowering(const config::Scenario& scenario, OpListStore& store);

    [[nodiscard]] bool on() const { return gather_ != nullptr; }
    /// Issues one layer's weight all-gather and returns its task (-1 when off).
    [[nodiscard]] engine::TaskId gather(OpLowering& low, const StepContext& ctx) const;
    /// Issues one layer's gradient reduce-scatter (nothing when off).
    void reduce_scatter(OpLowering& low, const StepContext& ctx) const;

private:
    const workload::OpList* gather_ = nullptr;
    const workload::OpList* reduce_ = nullptr;
};

}  // namespace trainsim::program
