// The backward passes of the simulated GPUs: each chunk's layers as the recompute plan says (Megatron's
// policies compiled by recompute/megatron_recompute_plan.h, or the recompute search's plans), FSDP's
// per-layer gathers and reduce-scatters, the zero-bubble schedules' deferred weight-gradient (W) parts,
// and the gradient buckets of overlap_grad_reduce. One builder-wide object: the split and bucket op
// lists it makes are shared by every GPU.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/program/fsdp_lowering.h"
#include "sim/program/layer_op_lists.h"
#include "sim/program/op_lowering.h"
#include "sim/recompute/recompute_plan.h"
#include "sim/schedule/schedule.h"

namespace trainsim::program {

/// What overlapped recomputation on one GPU waits for, recorded while its steps are lowered.
struct RecomputeAnchors {
    /// The last compute task before each step (its completion is the step's start).
    std::vector<engine::TaskId> step_start;
    /// The last compute task of each (micro-batch, chunk, layer in the chunk)'s forward.
    std::map<std::array<std::int32_t, 3>, engine::TaskId> forward_done;
    /// The last task of each layer's (by layer in the chunk) backward in the most recent backward step.
    std::vector<engine::TaskId> layer_freed;
};

class BackwardLowering {
public:
    /// Throws InputError when `plan` does not fit the scenario's stages.
    BackwardLowering(const config::Scenario& scenario, const recompute::RecomputePlan& plan,
                     const LayerOpLists& layers, const FsdpLowering& fsdp, OpListStore& store);

    /// The forward op list of layer `layer_in_chunk` (model layer `layer`) of micro-batch `microbatch`:
    /// what it stores is what the plan recomputes.
    [[nodiscard]] const workload::OpList& forward_of(std::int64_t pp, std::int64_t chunk,
                                                     std::int64_t layer_in_chunk, std::int64_t microbatch,
                                                     std::int64_t layer) const;

    /// Starts a backward or W step: `bucketing`, its gradients go into buckets (the chunk's last backward
    /// with overlap_grad_reduce); `defer_weights`, a backward lowers B alone and keeps W for the step the
    /// schedule lists.
    void begin_step(bool bucketing, bool defer_weights);
    /// Ends the step: the bucket filled so far is reduced.
    void end_step(OpLowering& low, const StepContext& ctx);

    /// The layers of the step's chunk, last first. `ctx` names the step (its layer is ignored).
    void lower_layers(OpLowering& low, std::int64_t pp, std::size_t step_index, std::int64_t first_layer,
                      StepContext ctx, RecomputeAnchors& anchors);
    /// A backward op list and the `parameters` whose gradients it makes final, `fp32_parameters` of them
    /// NeMo's fp32 embedding gradients (workload/fp32_embedding_gradients.h), a bucket of their own.
    void lower_backward(OpLowering& low, const workload::OpList& ops, const StepContext& ctx,
                        std::int64_t parameters, std::int64_t fp32_parameters = 0);
    /// The W pass of a (micro-batch, chunk): the weight gradients its B left, in the B's order.
    void lower_weight_gradients(OpLowering& low, const schedule::Step& step, const std::string& schedule);

private:
    [[nodiscard]] recompute::LayerRecompute
    planned(std::int64_t pp, std::int64_t chunk, std::int64_t layer_in_chunk, std::int64_t microbatch) const;
    [[nodiscard]] std::vector<engine::TaskId> lower_background(OpLowering& low, std::int64_t pp,
                                                               std::size_t step_index,
                                                               std::int64_t first_layer, StepContext ctx,
                                                               const RecomputeAnchors& anchors) const;
    void add_gradients(OpLowering& low, std::int64_t parameters, std::int64_t fp32_parameters,
                       const StepContext& ctx);
    void reduce_bucket(OpLowering& low, std::int64_t parameters, std::int64_t fp32_parameters,
                       const StepContext& ctx);
    void flush_bucket(OpLowering& low, const StepContext& ctx);
    const workload::OpList* own(workload::OpList ops);

    const config::Scenario& sc_;
    const recompute::RecomputePlan& plan_;
    const LayerOpLists& layers_;
    const FsdpLowering& fsdp_;
    OpListStore& store_;
    bool bucketing_ = false;
    std::int64_t bucket_filled_ = 0;
    // By the bucket's parameters and how many of them are fp32 embedding gradients.
    std::map<std::pair<std::int64_t, std::int64_t>, const workload::OpList*> bucket_ops_;
    // Each backward list's B and W parts (backward split only), by the list they come from.
    std::map<const workload::OpList*, std::pair<const workload::OpList*, const workload::OpList*>> splits_;
    struct PendingWeight {
        StepContext ctx;
        const workload::OpList* ops = nullptr;
        std::int64_t parameters = 0;
        std::int64_t fp32_parameters = 0;
    };
    bool defer_weights_ = false;  // the backward being lowered is B alone; its W step comes later
    // The W parts a B left, by (micro-batch, chunk), until the schedule's W step.
    std::map<std::pair<std::int32_t, std::int32_t>, std::vector<PendingWeight>> pending_weights_;
};

}  // namespace trainsim::program
