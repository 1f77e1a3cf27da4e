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
// With several model chunks per rank (v > 1) the gathers are dispatched a chunk at a time instead, as
// Megatron's interleaved schedule does with align_param_gather (its default there; schedules.py calls
// param_sync_func): chunks 0 and 1 at the start of the iteration, chunk c ≥ 2 when chunk c − 1's first
// forward starts (Megatron aligns it across the pipeline ranks at about that point), and the compute still
// waits bucket by bucket. NeMo 24.07 passes Apex's bucket launch as that same param_sync_func.
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
    /// On with training.overlap_param_gather and d·c > 1; bucket op lists are built into `store`. `chunks`:
    /// the model chunks a rank holds (v); with more than one the chunks' gathers are dispatched whole.
    ParameterGather(const config::Scenario& scenario, OpListStore& store, std::int64_t chunks);

    [[nodiscard]] bool on() const { return on_; }
    /// Whether a chunk's buckets are dispatched together (v > 1) rather than one ahead of the compute.
    [[nodiscard]] bool dispatches_chunks() const { return chunks_.size() > 1; }

    /// Resets the per-iteration state (a GPU's program starts).
    void begin_gpu();
    /// Groups chunk `chunk`'s parameters into buckets, once per GPU. `unit_parameters`: the parameters of
    /// each unit the chunk's forward runs, in forward order (the embedding, each layer, each MTP depth, the
    /// output layer: whichever the chunk holds, as its backward adds them to the gradient buckets).
    void prepare(std::int32_t chunk, const std::vector<std::int64_t>& unit_parameters);
    [[nodiscard]] bool prepared(std::int32_t chunk) const;
    /// Issues every bucket of a prepared chunk not issued yet.
    void dispatch(OpLowering& low, std::int32_t chunk, const StepContext& ctx);
    /// Starts chunk `chunk`'s first forward of the iteration (prepared first): its units wait from here to
    /// end_chunk.
    void begin_chunk(std::int32_t chunk);
    /// Before unit `unit`'s forward: the wait for its bucket (issuing it if not issued yet) and, one ahead,
    /// the next bucket's gather (nothing outside begin_chunk … end_chunk, and nothing for a unit whose
    /// bucket was already waited for).
    void before(OpLowering& low, std::size_t unit, const StepContext& ctx);
    void end_chunk() { current_ = -1; }

    /// Gather order of each unit's bucket (0 is gathered first) for `unit_parameters` in forward order and
    /// buckets of `bucket_parameters`; -1 for a unit without parameters. Exposed for tests.
    [[nodiscard]] static std::vector<std::int32_t> buckets(const std::vector<std::int64_t>& unit_parameters,
                                                           std::int64_t bucket_parameters,
                                                           std::vector<std::int64_t>& bucket_sizes);

private:
    struct Chunk {
        bool prepared = false;
        std::vector<std::int32_t> bucket_of;     // by unit
        std::vector<std::int64_t> bucket_sizes;  // parameters, in gather order
        std::vector<engine::TaskId> issued;      // by bucket: its gather's task, kNoTask before it is issued
        std::int32_t waited = -1;                // the last bucket the compute waited for
    };
    void issue(OpLowering& low, Chunk& chunk, std::int32_t bucket, const StepContext& ctx);

    bool on_ = false;
    std::int64_t bucket_parameters_ = 0;
    OpListStore* store_ = nullptr;
    std::vector<Chunk> chunks_;                            // by model chunk of the GPU being built
    std::int32_t current_ = -1;                            // the chunk between begin_chunk and end_chunk
    std::map<std::int64_t, const workload::OpList*> ops_;  // by bucket parameters
};

}  // namespace trainsim::program
