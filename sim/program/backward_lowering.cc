#include "sim/program/backward_lowering.h"

#include <memory>

#include "sim/core/input_error.h"
#include "sim/program/backward_split.h"
#include "sim/workload/stage_ops.h"

namespace trainsim::program {

using recompute::LayerRecompute;
using workload::OpList;

namespace {

// Refuses a plan that does not fit the scenario's stages.
void check_plan(const config::Scenario& sc, const recompute::RecomputePlan& plan, bool fsdp) {
    const std::int64_t p = sc.parallelism.pipeline_model_parallel_size;
    bool shape_ok = static_cast<std::int64_t>(plan.layers.size()) == p && plan.lookahead >= 0;
    for (std::size_t s = 0; shape_ok && s < plan.layers.size(); ++s) {
        shape_ok = static_cast<std::int64_t>(plan.layers[s].size()) ==
                   sc.stage_num_layers(static_cast<std::int64_t>(s));
    }
    if (!shape_ok) {
        throw InputError("recompute plan: needs one entry per layer of each of the " + std::to_string(p) +
                         " stages (layers per stage: " + config::split_text(sc.pipeline_split()) +
                         ") and a lookahead of at least 0");
    }
    bool stored_ok =
        plan.stored_microbatches.empty() || static_cast<std::int64_t>(plan.stored_microbatches.size()) == p;
    for (const recompute::StoredMicrobatches& m : plan.stored_microbatches) {
        stored_ok = stored_ok && m.period >= 1 && m.stored >= 0;
    }
    if (!stored_ok) {
        throw InputError("recompute plan: stored micro-batches need none or one entry per stage (" +
                         std::to_string(p) + "), each with a period of at least 1 and at least 0 stored");
    }
    // As scenario validation refuses overlapped recomputation with FSDP: the background lane would need the
    // layer's weights gathered for it too.
    if (fsdp && plan.has_overlap()) {
        throw InputError("recompute plan: overlapped recomputation is not modelled with "
                         "parallelism.data_parallel_sharding_strategy=optim_grads_params (FSDP)");
    }
    // A chained layer is recomputed from the one before it in its chunk, back to the block's first layer.
    for (std::int64_t s = 0; s < p; ++s) {
        for (std::int64_t c = 0; c < sc.parallelism.virtual_pipeline_model_parallel_size; ++c) {
            const std::int64_t before = sc.layers_before_chunk(s, c);
            for (std::int64_t j = 0; j < sc.chunk_num_layers(s, c); ++j) {
                if (plan.at(s, before + j) != LayerRecompute::FullChained) {
                    continue;
                }
                const LayerRecompute previous = j > 0 ? plan.at(s, before + j - 1) : LayerRecompute::Keep;
                if (previous != LayerRecompute::FullOnDemand && previous != LayerRecompute::FullChained) {
                    throw InputError("recompute plan: stage " + std::to_string(s) + " layer " +
                                     std::to_string(before + j) +
                                     " is full chained, which must follow a full on-demand or chained layer "
                                     "of its chunk");
                }
                if (fsdp) {
                    throw InputError("recompute plan: a full chained layer (a checkpoint block of several "
                                     "layers) is not modelled with FSDP, which gathers each layer's weights "
                                     "for its own recompute and backward");
                }
            }
        }
    }
}

}  // namespace

BackwardLowering::BackwardLowering(const config::Scenario& scenario, const recompute::RecomputePlan& plan,
                                   const LayerOpLists& layers, const FsdpLowering& fsdp, OpListStore& store)
    : sc_(scenario), plan_(plan), layers_(layers), fsdp_(fsdp), store_(store) {
    check_plan(sc_, plan_, fsdp_.on());
}

LayerRecompute BackwardLowering::planned(std::int64_t pp, std::int64_t chunk, std::int64_t layer_in_chunk,
                                         std::int64_t microbatch) const {
    return plan_.at(pp, sc_.layers_before_chunk(pp, chunk) + layer_in_chunk, microbatch);
}

const OpList& BackwardLowering::forward_of(std::int64_t pp, std::int64_t chunk, std::int64_t layer_in_chunk,
                                           std::int64_t microbatch, std::int64_t layer) const {
    const LayerOps& ops = layers_.at(layer);
    switch (planned(pp, chunk, layer_in_chunk, microbatch)) {
    case LayerRecompute::Keep:
        return *ops.forward_none;
    case LayerRecompute::SelectiveOnDemand:
    case LayerRecompute::SelectiveOverlapped:
        return *ops.forward_selective;
    case LayerRecompute::FullOnDemand:
    case LayerRecompute::FullOverlapped:
        return *ops.forward_checkpointed;
    case LayerRecompute::FullChained:
        return *ops.forward_unsaved;  // a checkpoint block keeps only its first layer's input
    }
    return *ops.forward_none;
}

void BackwardLowering::begin_step(bool bucketing, bool defer_weights) {
    bucketing_ = bucketing;
    defer_weights_ = defer_weights;
}

void BackwardLowering::end_step(OpLowering& low, const StepContext& ctx) {
    flush_bucket(low, ctx);
    bucketing_ = false;
    defer_weights_ = false;
}

// Overlapped recomputation is lowered first onto the background lane, last layer first: it may start
// once the layer's forward of this micro-batch is done and, with lookahead k ≥ 1, the step k steps
// earlier has begun, or with lookahead 0, the previous backward has finished the same layer. Returns,
// per layer of the chunk, the task its backward waits for (kNoTask where nothing runs in the background).
std::vector<engine::TaskId> BackwardLowering::lower_background(OpLowering& low, std::int64_t pp,
                                                               std::size_t step_index,
                                                               std::int64_t first_layer, StepContext ctx,
                                                               const RecomputeAnchors& anchors) const {
    const std::int64_t lc = sc_.chunk_num_layers(pp, ctx.chunk);
    std::vector<engine::TaskId> ready(static_cast<std::size_t>(lc), engine::kNoTask);
    std::vector<engine::TaskId> start_after;
    const auto lookahead = static_cast<std::size_t>(plan_.lookahead);
    if (lookahead > 0 && step_index >= lookahead &&
        anchors.step_start[step_index - lookahead] != engine::kNoTask) {
        start_after.push_back(anchors.step_start[step_index - lookahead]);
    }
    for (std::int64_t j = lc - 1; j >= 0; --j) {
        const LayerRecompute r = planned(pp, ctx.chunk, j, ctx.microbatch);
        if (!recompute::is_overlapped(r)) {
            continue;
        }
        ctx.layer = static_cast<std::int32_t>(first_layer + j);
        const OpList& ops = recompute::is_full(r) ? *layers_.at(ctx.layer).recompute
                                                  : *layers_.at(ctx.layer).recompute_selective;
        std::vector<engine::TaskId> after = start_after;
        // Its checkpointed inputs exist once this layer's forward of this micro-batch is done.
        const auto f = anchors.forward_done.find({ctx.microbatch, ctx.chunk, static_cast<std::int32_t>(j)});
        if (f != anchors.forward_done.end() && f->second != engine::kNoTask) {
            after.push_back(f->second);
        }
        if (lookahead == 0 && anchors.layer_freed[static_cast<std::size_t>(j)] != engine::kNoTask) {
            after.push_back(anchors.layer_freed[static_cast<std::size_t>(j)]);
        }
        ready[static_cast<std::size_t>(j)] = low.lower_background(ops, ctx, std::move(after));
    }
    return ready;
}

// Each layer, or full-recompute checkpoint block, in turn from the last: a block is recomputed from its
// first layer's stored input (the others chained from it, Megatron's CheckpointFunction over
// recompute_num_layers layers) and then its layers' backwards run, last first. With FSDP each layer's
// weights are gathered again (the next one prefetched) and its gradients reduce-scattered after its
// backward.
void BackwardLowering::lower_layers(OpLowering& low, std::int64_t pp, std::size_t step_index,
                                    std::int64_t first_layer, StepContext ctx, RecomputeAnchors& anchors) {
    auto plan_of = [&](std::int64_t j) { return planned(pp, ctx.chunk, j, ctx.microbatch); };
    const std::vector<engine::TaskId> ready =
        lower_background(low, pp, step_index, first_layer, ctx, anchors);
    engine::TaskId gathered = fsdp_.gather(low, ctx);
    std::int64_t j = sc_.chunk_num_layers(pp, ctx.chunk) - 1;
    while (j >= 0) {
        std::int64_t start = j;
        while (start > 0 && plan_of(start) == LayerRecompute::FullChained) {
            --start;
        }
        if (fsdp_.on()) {
            ctx.layer = static_cast<std::int32_t>(first_layer + j);
            const engine::TaskId next = j > 0 ? fsdp_.gather(low, ctx) : engine::kNoTask;
            low.wait_for(gathered);
            gathered = next;
        }
        for (std::int64_t k = start; k <= j; ++k) {
            ctx.layer = static_cast<std::int32_t>(first_layer + k);
            const LayerRecompute r = plan_of(k);
            if (r == LayerRecompute::FullOnDemand) {
                low.lower(*layers_.at(ctx.layer).recompute, ctx);
            } else if (r == LayerRecompute::FullChained) {
                low.lower(*layers_.at(ctx.layer).recompute_chained, ctx);
            }
        }
        for (std::int64_t k = j; k >= start; --k) {
            ctx.layer = static_cast<std::int32_t>(first_layer + k);
            const LayerRecompute r = plan_of(k);
            if (recompute::is_overlapped(r)) {
                low.wait_for(ready[static_cast<std::size_t>(k)]);
            }
            // Only selective on demand recomputes inside its backward; every other layer's backward finds
            // its activations stored or recomputed.
            const LayerOps& ops = layers_.at(ctx.layer);
            const OpList& backward =
                r == LayerRecompute::SelectiveOnDemand ? *ops.backward_selective : *ops.backward_plain;
            if (fsdp_.on()) {
                low.lower(backward, ctx);
                fsdp_.reduce_scatter(low, ctx);
            } else {
                lower_backward(low, backward, ctx, layers_.parameters_at(ctx.layer));
            }
            anchors.layer_freed[static_cast<std::size_t>(k)] = low.last_compute();
        }
        j = start - 1;
    }
}

// With the backward split only B runs now; W is kept for the step's Weight pass, which adds the
// gradients to the bucket.
void BackwardLowering::lower_backward(OpLowering& low, const OpList& ops, const StepContext& ctx,
                                      std::int64_t parameters, std::int64_t fp32_parameters) {
    if (!defer_weights_) {
        low.lower(ops, ctx);
        add_gradients(low, parameters, fp32_parameters, ctx);
        return;
    }
    auto [it, added] = splits_.try_emplace(&ops, nullptr, nullptr);
    if (added) {
        BackwardSplit parts = split_backward(ops);
        it->second = {own(std::move(parts.input_gradient)), own(std::move(parts.weight_gradient))};
    }
    if (!it->second.first->empty()) {
        low.lower(*it->second.first, ctx);
    }
    pending_weights_[{ctx.microbatch, ctx.chunk}].push_back(
        {ctx, it->second.second, parameters, fp32_parameters});
}

void BackwardLowering::lower_weight_gradients(OpLowering& low, const schedule::Step& step,
                                              const std::string& schedule) {
    const auto found = pending_weights_.find({step.microbatch, step.chunk});
    if (found == pending_weights_.end()) {
        throw InputError("schedule " + schedule + ": W" + std::to_string(step.microbatch) + ".c" +
                         std::to_string(step.chunk) + " runs before its B");
    }
    for (const PendingWeight& w : found->second) {
        if (!w.ops->empty()) {
            low.lower(*w.ops, w.ctx);
        }
        add_gradients(low, w.parameters, w.fp32_parameters, w.ctx);
    }
    pending_weights_.erase(found);
}

// Gradient buckets (overlap_grad_reduce): parameters whose gradients are final are added in backward
// order; a full bucket's reduction is issued at once, asynchronously.
void BackwardLowering::add_gradients(OpLowering& low, std::int64_t parameters, std::int64_t fp32_parameters,
                                     const StepContext& ctx) {
    if (!bucketing_) {
        return;
    }
    if (fp32_parameters > 0) {
        // NeMo's DistributedFusedAdam.init_params_bucket gives the fp32 embedding gradients buckets of
        // their own (nemo/core/optim/distributed_adam.py, r2.0.0rc1, lines 261-276), complete with this
        // backward: reduced at once, in fp32.
        reduce_bucket(low, fp32_parameters, fp32_parameters, ctx);
    }
    bucket_filled_ += parameters - fp32_parameters;
    if (bucket_filled_ >= workload::gradient_bucket_parameters(sc_)) {
        flush_bucket(low, ctx);
    }
}

void BackwardLowering::flush_bucket(OpLowering& low, const StepContext& ctx) {
    if (!bucketing_ || bucket_filled_ == 0) {
        return;
    }
    reduce_bucket(low, bucket_filled_, 0, ctx);
    bucket_filled_ = 0;
}

void BackwardLowering::reduce_bucket(OpLowering& low, std::int64_t parameters, std::int64_t fp32_parameters,
                                     const StepContext& ctx) {
    auto [it, added] = bucket_ops_.try_emplace({parameters, fp32_parameters}, nullptr);
    if (added) {
        it->second = own(workload::gradient_bucket_reduction(sc_, parameters, fp32_parameters));
    }
    StepContext at = ctx;
    at.layer = -1;
    low.lower(*it->second, at);
}

const OpList* BackwardLowering::own(OpList ops) {
    store_.push_back(std::make_unique<OpList>(std::move(ops)));
    return store_.back().get();
}

}  // namespace trainsim::program
