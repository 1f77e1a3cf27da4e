// training.overlap_param_gather on one GPU: the distributed optimizer's all-gather of the updated 16-bit
// parameters, bucket by bucket, during the first forward of each model chunk instead of one blocking
// all-gather after the step. The buckets are overlap_grad_reduce's gradient buckets (filled in backward
// order, closed once they hold workload::gradient_bucket_parameters), gathered in forward order. Before
// the forward of a bucket's parameters the GPU waits for that bucket's gather, issuing it first if it was
// not issued yet, and then issues the next bucket's: Megatron-Core's ParamAndGradBucketGroup::
// finish_param_sync from the forward pre-hook (distributed_data_parallel.py), and Apex's
// DistributedFusedAdam (NeMo 24.07's distributed_fused_adam with overlap_param_sync) whose pre-forward
// hook waits for the parameter's bucket and starts the next one (_param_copy, _try_start_bucket_param_sync).
// So the first bucket of a chunk is exposed and each later one runs beside the compute of the one before.
// The simulated iteration stands for the steady state: the gathers after the previous step run at its
// start.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/program/layer_op_lists.h"
#include "sim/program/op_lowering.h"

namespace trainsim::program {

class ParameterGather {
public:
    /// On with training.overlap_param_gather and d·c > 1; bucket op lists are built into `store`.
    ParameterGather(const config::Scenario& scenario, OpListStore& store);

    [[nodiscard]] bool on() const { return on_; }

    /// Starts a chunk's first forward of the iteration. `unit_parameters`: the parameters of each unit
    /// the chunk's forward runs, in forward order (the embedding, each layer, each MTP depth, the output
    /// layer: whichever the chunk holds, as its backward adds them to the gradient buckets).
    void begin_chunk(std::vector<std::int64_t> unit_parameters);
    /// Before unit `unit`'s forward: the wait for its bucket and the next bucket's gather (nothing
    /// outside begin_chunk … end_chunk, and nothing for a unit whose bucket was already waited for).
    void before(OpLowering& low, std::size_t unit, const StepContext& ctx);
    void end_chunk() { bucket_of_.clear(); }

    /// Gather order of each unit's bucket (0 is gathered first) for `unit_parameters` in forward order and
    /// buckets of `bucket_parameters`; -1 for a unit without parameters. Exposed for tests.
    [[nodiscard]] static std::vector<std::int32_t> buckets(const std::vector<std::int64_t>& unit_parameters,
                                                           std::int64_t bucket_parameters,
                                                           std::vector<std::int64_t>& bucket_sizes);

private:
    void issue(OpLowering& low, std::int32_t bucket, const StepContext& ctx);

    bool on_ = false;
    std::int64_t bucket_parameters_ = 0;
    OpListStore* store_ = nullptr;
    std::vector<std::int32_t> bucket_of_;     // by unit of the current chunk
    std::vector<std::int64_t> bucket_sizes_;  // parameters, in gather order
    std::vector<engine::TaskId> issued_;      // by bucket: its gather's task, -1 before it is issued
    std::int32_t waited_ = -1;                // the last bucket the compute waited for
    std::map<std::int64_t, const workload::OpList*> ops_;  // by bucket parameters
};

}  // namespace trainsim::program
