// The op lists that run once per iteration on a pipeline rank, outside its micro-batches: zeroing the
// gradient buffer at the start (training.zero_grad_buffer) and the end of the iteration (gradient
// reductions, optimizer step, FP8 weight casts). One list per pipeline rank, as the parameters differ
// between stages; built when the rank's first GPU asks.
#pragma once

#include <cstdint>
#include <map>

#include "sim/config/scenario.h"
#include "sim/program/layer_op_lists.h"
#include "sim/workload/op.h"

namespace trainsim::program {

class StageOpLists {
public:
    /// `sharded`: FSDP shards the layers' weights and gradients over the d·c ranks. `gradients_reduced`:
    /// the data-parallel reduction ran in buckets during the backward (overlap_grad_reduce).
    StageOpLists(const config::Scenario& scenario, OpListStore& store, bool sharded, bool gradients_reduced);

    [[nodiscard]] const workload::OpList& gradient_buffer_zeroing(std::int64_t pipeline_rank);
    [[nodiscard]] const workload::OpList& end_of_iteration(std::int64_t pipeline_rank);

private:
    const workload::OpList* own(workload::OpList ops);

    const config::Scenario& sc_;
    OpListStore& store_;
    bool sharded_ = false;
    bool gradients_reduced_ = false;
    std::map<std::int64_t, const workload::OpList*> zeroing_;  // by pipeline rank
    std::map<std::int64_t, const workload::OpList*> end_;      // by pipeline rank
};

}  // namespace trainsim::program
