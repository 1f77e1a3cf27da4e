#include "sim/program/iteration_program.h"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "sim/core/input_error.h"
#include "sim/program/backward_split.h"
#include "sim/program/layer_op_lists.h"
#include "sim/program/op_lowering.h"
#include "sim/program/overlapped_pair.h"
#include "sim/program/stage_op_lists.h"
#include "sim/program/variability.h"
#include "sim/schedule/schedule.h"
#include "sim/workload/fsdp_ops.h"
#include "sim/workload/mtp_block.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_ops.h"

namespace trainsim::program {
namespace {

using config::RecomputeGranularity;
using workload::OpList;

class IterationBuilder {
public:
    IterationBuilder(const config::Scenario& sc, const cost::CostModel& cost, const Fold& fold,
                     const recompute::RecomputePlan* plan)
        : sc_(sc), layout_(sc), pricing_(cost, layout_, sc), pricing_cost_(cost), fold_(fold), plan_(plan),
          layers_(sc, out_.op_lists) {
        const auto& par = sc.parallelism;
        p_ = par.pipeline_model_parallel_size;
        v_ = par.virtual_pipeline_model_parallel_size;
        const workload::LayerShape shape = workload::layer_shape_of(sc);
        p2p_bytes_ = Bytes{shape.sequence_sharded_elements() * 2};
        layer_parameters_ = workload::layer_parameters_per_rank(shape);
        fsdp_ = workload::shards_parameters(sc) && sc.parallelism.data_parallel_size_with_cp() > 1;
        if (fsdp_) {
            fsdp_gather_ = own(workload::fsdp_parameter_gather(layer_parameters_));
            fsdp_reduce_ = own(workload::fsdp_gradient_reduce_scatter(layer_parameters_));
        }
        stage_lists_.emplace(sc, out_.op_lists, fsdp_,
                             sc.training.overlap_grad_reduce &&
                                 sc.parallelism.data_parallel_size_with_cp() > 1);
    }

    IterationProgram build() {
        check_fits_profile(sc_, pricing_cost_.profile());
        check_profile_sections();
        if (plan_ == nullptr && sc_.training.recompute_granularity == RecomputeGranularity::Overlapped) {
            throw InputError("training.recompute_granularity=overlapped needs a recompute plan (trainsim run "
                             "chooses one with training.recompute_scheduler)");
        }
        if (plan_ != nullptr) {
            bool shape_ok = static_cast<std::int64_t>(plan_->layers.size()) == p_ && plan_->lookahead >= 0;
            for (std::size_t s = 0; shape_ok && s < plan_->layers.size(); ++s) {
                shape_ok = static_cast<std::int64_t>(plan_->layers[s].size()) ==
                           sc_.stage_num_layers(static_cast<std::int64_t>(s));
            }
            if (!shape_ok) {
                throw InputError("recompute plan: needs one entry per layer of each of the " +
                                 std::to_string(p_) +
                                 " stages (layers per stage: " + config::split_text(sc_.pipeline_split()) +
                                 ") and a lookahead of at least 0");
            }
        }
        sched_ = schedule::make_schedule(sc_.schedule, schedule::pipeline_shape(sc_));
        if (plan_ != nullptr && sc_.dualpipe_overlaps_pairs() &&
            sc_.parallelism.expert_model_parallel_size > 1) {
            out_.warnings.push_back(
                "parallelism.dualpipe_overlapped_forward_backward: with a recompute plan "
                "(recompute_granularity "
                "overlapped) each F&B pair runs its forward, then its backward, its expert all-to-alls not "
                "overlapped");
        }
        split_ = sched_->splits_backward();
        out_.weight_passes = split_;
        if (split_ && fsdp_) {
            throw InputError("schedule=" + std::string(config::to_string(sc_.schedule)) +
                             " splits each backward into B and W passes, which is not modelled with "
                             "parallelism.data_parallel_sharding_strategy=optim_grads_params (FSDP)");
        }
        const std::int64_t t = sc_.parallelism.tensor_model_parallel_size;
        const std::int64_t c = sc_.parallelism.context_parallel_size;
        const std::int64_t d = sc_.parallelism.data_parallel_size;
        // Data-parallel replicas are identical only when each sits on the nodes the same way: when a
        // pipeline stage's t·c·d GPUs fill whole nodes or a node holds whole stages, and (with context
        // parallelism) a replica's t·c GPUs do the same. Otherwise some replicas' transfers cross nodes
        // where others' do not, and every replica is simulated.
        const std::int64_t g = sc_.hardware.gpus_per_node;
        auto aligned = [g](std::int64_t block) { return block % g == 0 || g % block == 0; };
        if (fold_.data && d > 1 && (!aligned(t * c * d) || !aligned(t * c))) {
            fold_.data = false;
            const std::string sizes =
                c > 1 ? "t*c=" + std::to_string(t * c) + ", t*c*d=" + std::to_string(t * c * d)
                      : "t*d=" + std::to_string(t * d);
            out_.warnings.push_back("fold: data-parallel replicas are placed differently on nodes (" + sizes +
                                    ", gpus_per_node=" + std::to_string(g) + "), so all " +
                                    std::to_string(d) + " are simulated");
        }
        if (sc_.hardware.network_model == config::NetworkModel::Flow) {
            out_.topology = std::make_shared<const network::Topology>(
                topology_spec(sc_, pricing_cost_.profile()), layout_.world_size());
            network_ =
                std::make_unique<NetworkFlows>(out_.program, out_.topology, pricing_cost_, layout_, fold_);
        }
        for (std::int64_t pp = 0; pp < p_; ++pp) {
            const std::vector<schedule::Step> steps = sched_->steps(pp);
            for (std::int64_t dp = 0; dp < (fold_.data ? 1 : d); ++dp) {
                for (std::int64_t tp = 0; tp < (fold_.tensor ? 1 : t); ++tp) {
                    build_gpu({tp, dp, pp}, steps);
                }
            }
        }
        // (Context-parallel ranks are always folded: with c > 1 each simulated GPU stands for c.)
        if (sc_.variability.mode == config::VariabilityMode::Expected && !fold_.tensor &&
            (!fold_.data || sc_.parallelism.data_parallel_size == 1) &&
            sc_.parallelism.context_parallel_size == 1) {
            out_.warnings.push_back(
                "variability.mode=expected: every simulated GPU stands for itself (no fold), "
                "so none is slowed; use variability.mode=sampled with --fold none");
        }
        if (sc_.variability.kernel_jitter &&
            ((fold_.tensor && sc_.parallelism.tensor_model_parallel_size > 1) ||
             (fold_.data && sc_.parallelism.data_parallel_size > 1) ||
             sc_.parallelism.context_parallel_size > 1)) {
            out_.warnings.push_back(
                "variability.kernel_jitter: a folded GPU draws one GPU's kernel jitter for all it stands "
                "for, so the waits for the slowest of its peers are not seen; use --fold none");
        }
        return std::move(out_);
    }

private:
    // The optional profile sections the scenario's knobs read.
    void check_profile_sections() const {
        const cost::HardwareProfile& profile = pricing_cost_.profile();
        if (sc_.parallelism.batch_p2p_sync && !profile.host) {
            throw InputError("parallelism.batch_p2p_sync=true needs the host section of profile " +
                             profile.name +
                             " (kernel launch and dispatch times; scenarios/hardware/README.md)");
        }
        if (sc_.variability.mode != config::VariabilityMode::Off && !profile.variability) {
            throw InputError("variability.mode=" + std::string(config::to_string(sc_.variability.mode)) +
                             " needs the variability section of profile " + profile.name +
                             " (gpu_slowdown_stddev; scenarios/hardware/README.md)");
        }
        if (sc_.variability.kernel_jitter &&
            (!profile.variability || !profile.variability->kernel_jitter_stddev)) {
            throw InputError(
                "variability.kernel_jitter=true needs variability.kernel_jitter_stddev in profile " +
                profile.name + " (scenarios/hardware/README.md)");
        }
    }

    const OpList* own(OpList ops) {
        out_.op_lists.push_back(std::make_unique<OpList>(std::move(ops)));
        return out_.op_lists.back().get();
    }

    void build_gpu(const parallel::Coordinates& at, const std::vector<schedule::Step>& steps) {
        const auto gpu = static_cast<std::int32_t>(out_.gpus.size());
        OpLowering low(out_, pricing_, rendezvous_, members_policy(), gpu, at);
        low.set_network(network_.get());
        const auto& par = sc_.parallelism;
        if (par.scatter_gather_tensors_in_pipeline && !par.sequence_parallel &&
            par.tensor_model_parallel_size > 1) {
            low.set_pipeline_scatter_gather(par.tensor_model_parallel_size);
        }
        const cost::HardwareProfile& profile = pricing_cost_.profile();
        low.set_megatron_p2p(!par.overlap_p2p_comm, par.batch_p2p_sync ? &*profile.host : nullptr);
        double slowdown = 1.0;
        if (sc_.variability.mode != config::VariabilityMode::Off) {
            slowdown = compute_slowdown(sc_.variability, profile.variability->gpu_slowdown_stddev, layout_,
                                        fold_, at);
            low.set_compute_slowdown(slowdown, sc_.variability.mode != config::VariabilityMode::Sampled);
            if (sc_.variability.kernel_jitter) {
                low.set_kernel_jitter(*profile.variability->kernel_jitter_stddev, sc_.variability.seed);
            }
        }
        out_.gpus.push_back(SimulatedGpu{at, low.compute_stream(), -1, slowdown});
        if (sc_.training.zero_grad_buffer) {
            low.lower(stage_lists_->gradient_buffer_zeroing(at.pp),
                      StepContext{-1, -1, -1, Phase::Iteration});
        }
        const std::int64_t virtual_stages = sched_->model_stages(p_, v_);
        // With overlap_grad_reduce a chunk's gradients are final during its last backward: that is
        // when Megatron's DDP fills its buckets and launches their reductions.
        // (With the backward split, during its last W.)
        std::vector<std::size_t> last_backward(static_cast<std::size_t>(v_), 0);
        for (std::size_t k = 0; k < steps.size(); ++k) {
            if (steps[k].pass != schedule::Pass::Forward) {
                last_backward[static_cast<std::size_t>(steps[k].chunk)] = k;
            }
        }
        const bool overlap =
            sc_.training.overlap_grad_reduce && sc_.parallelism.data_parallel_size_with_cp() > 1;
        // For overlapped recomputation: the last compute task before each step (its completion is the
        // step's start) and the last compute task of each (micro-batch, chunk)'s forward.
        std::vector<engine::TaskId> markers(steps.size(), -1);
        std::map<std::array<std::int32_t, 3>, engine::TaskId> forward_done;  // (micro-batch, chunk, layer)
        // The last task of each layer's backward in the most recent backward step (lookahead 0).
        std::int64_t most_chunk_layers = 0;
        for (std::int64_t c = 0; c < v_; ++c) {
            most_chunk_layers = std::max(most_chunk_layers, sc_.chunk_num_layers(at.pp, c));
        }
        std::vector<engine::TaskId> layer_freed(static_cast<std::size_t>(most_chunk_layers), -1);
        // Megatron's interleaved schedule without overlap_p2p_comm communicates once per forward-backward
        // pair in its steady state: F_k, B_k, then one batch_isend_irecv with F_k's output, B_k's gradient
        // and the receives of the next pair (schedules.py, send_forward_backward_recv_forward_backward).
        // So a forward followed by a backward sends its output after that backward, and the receives
        // of both are posted before the forward.
        const bool paired =
            !sc_.parallelism.overlap_p2p_comm && sc_.resolved_schedule() == config::ScheduleKind::Interleaved;
        // The warm-up forwards (min((p - rank - 1)·2 + (v - 1)·group, m·v), as the schedule computes them)
        // each send at once; every later forward pairs with the backward after it.
        std::vector<char> steady_forward(steps.size(), 0);
        if (paired) {
            const std::int64_t group = sc_.parallelism.microbatch_group_size();
            const std::int64_t warmup =
                std::min((p_ - at.pp - 1) * 2 + (v_ - 1) * group, sc_.num_microbatches() * v_);
            std::int64_t forwards = 0;
            for (std::size_t k = 0; k < steps.size(); ++k) {
                if (steps[k].pass == schedule::Pass::Forward) {
                    steady_forward[k] = forwards++ >= warmup ? 1 : 0;
                }
            }
        }
        // DualPipe's F&B chunk pairs (Step::paired) communicate the same way.
        auto pairs_with_next = [&](std::size_t k) {
            return (steady_forward[k] != 0 || steps[k].paired) && k + 1 < steps.size() &&
                   steps[k + 1].pass == schedule::Pass::Backward;
        };
        // DualPipe's F&B pairs and Megatron's combined 1F1B overlapped (overlapped_pair.h): lowered as two
        // chains, interleaved. Under a recompute plan the pair runs forward then backward: the plan's
        // background recomputation and its markers are placed against that order.
        const bool overlap_pairs = plan_ == nullptr && sc_.overlaps_forward_backward_pairs();
        auto overlapped = [&](std::size_t k) {
            return overlap_pairs && steps[k].paired && pairs_with_next(k);
        };
        bool in_pair = false;  // lowering an overlapped pair's chains
        // The (micro-batch, chunk)s whose backward the schedule splits: it lists their W.
        std::set<std::pair<std::int32_t, std::int32_t>> split_backwards;
        for (const schedule::Step& step : steps) {
            if (step.pass == schedule::Pass::Weight) {
                split_backwards.insert({step.microbatch, step.chunk});
            }
        }
        std::vector<char> received(steps.size(), 0);
        auto receive_for = [&](std::size_t k) {
            if (received[k] != 0) {
                return;
            }
            received[k] = 1;
            const schedule::Step& step = steps[k];
            if (step.pass == schedule::Pass::Weight) {
                return;  // W needs nothing from another stage
            }
            const std::int64_t vs = sched_->stage_of(at.pp, step.chunk, p_);
            const bool forward = step.pass == schedule::Pass::Forward;
            const StepContext ctx{step.microbatch, step.chunk, -1,
                                  forward ? Phase::Forward : Phase::Backward};
            // In a V the stage after rank p − 1's chunk 0 is its own chunk 1: nothing to transfer.
            if (forward && vs != 0 && neighbour(at, vs - 1, step.chunk).pp != at.pp) {
                low.receive(Direction::Forward, neighbour(at, vs - 1, step.chunk), p2p_bytes_, ctx);
            } else if (!forward && vs != virtual_stages - 1 &&
                       neighbour(at, vs + 1, step.chunk).pp != at.pp) {
                low.receive(Direction::Backward, neighbour(at, vs + 1, step.chunk), p2p_bytes_, ctx);
            }
        };
        struct ForwardSend {
            parallel::Coordinates to;
            StepContext ctx;
            Bytes kept{0};
        };
        std::optional<ForwardSend> deferred;  // a forward's output, sent after the backward it pairs with
        for (std::size_t k = 0; k < steps.size(); ++k) {
            const schedule::Step& step = steps[k];
            markers[k] = low.last_compute();
            const std::int64_t vs = sched_->stage_of(at.pp, step.chunk, p_);
            const bool first = vs == 0;
            const bool last = vs == virtual_stages - 1;
            const std::int64_t first_layer = sc_.first_layer_of_virtual_stage(vs);
            const std::int64_t chunk_layers = sc_.chunk_num_layers(at.pp, step.chunk);
            StepContext ctx{step.microbatch, step.chunk, -1};
            receive_for(k);
            if (step.pass == schedule::Pass::Forward) {
                ctx.phase = Phase::Forward;
                if (pairs_with_next(k)) {
                    receive_for(k + 1);
                }
                if (overlapped(k)) {
                    low.begin_overlap(PairChain::Forward);
                    in_pair = true;
                }
                if (first) {
                    low.lower(layers_.embedding_forward(), ctx);
                }
                engine::TaskId gathered = fsdp_gather(low, ctx);
                for (std::int64_t j = 0; j < chunk_layers; ++j) {
                    ctx.layer = static_cast<std::int32_t>(first_layer + j);
                    if (fsdp_) {
                        // Prefetch the next layer's weights while this one computes.
                        const engine::TaskId next = j + 1 < chunk_layers ? fsdp_gather(low, ctx) : -1;
                        low.wait_for(gathered);
                        gathered = next;
                    }
                    low.lower(forward_of(at.pp, step.chunk, j, step.microbatch, ctx.layer), ctx);
                    forward_done[{step.microbatch, step.chunk, static_cast<std::int32_t>(j)}] =
                        low.last_compute();
                }
                ctx.layer = -1;
                if (last) {
                    lower_mtp_forwards(low, ctx);
                    low.lower(layers_.output_forward(), ctx);
                }
                if (!last && neighbour(at, vs + 1, step.chunk).pp != at.pp) {
                    // A kept output belongs with the chunk's last layer: its backward is when it goes. A
                    // chunk without layers (a layout's "E" or empty stage) passes on what it received or
                    // the embedding's output, which it does not keep.
                    StepContext output = ctx;
                    output.layer = static_cast<std::int32_t>(first_layer + chunk_layers - 1);
                    const bool kept = !sc_.training.deallocate_pipeline_outputs && chunk_layers > 0;
                    const ForwardSend send{neighbour(at, vs + 1, step.chunk), output,
                                           kept ? p2p_bytes_ : Bytes{0}};
                    if (pairs_with_next(k)) {
                        deferred = send;
                    } else {
                        low.send(Direction::Forward, send.to, p2p_bytes_, send.ctx, send.kept);
                    }
                }
            } else if (step.pass == schedule::Pass::Weight) {
                ctx.phase = Phase::Backward;
                bucketing_ = overlap && k == last_backward[static_cast<std::size_t>(step.chunk)];
                lower_weight_gradients(low, step);
                flush_bucket(low, ctx);
                bucketing_ = false;
            } else {
                ctx.phase = Phase::Backward;
                bucketing_ = overlap && k == last_backward[static_cast<std::size_t>(step.chunk)];
                defer_weights_ = split_backwards.contains({step.microbatch, step.chunk});
                if (in_pair) {
                    low.set_chain(PairChain::Backward);
                }
                if (last) {
                    lower_backward(low, layers_.output_backward(), ctx, output_layer_parameters(at));
                    lower_mtp_backwards(low, ctx, at);
                }
                if (plan_ != nullptr) {
                    lower_planned_backwards(low, at.pp, k, first_layer, ctx, markers, forward_done,
                                            layer_freed);
                } else {
                    lower_layer_backwards(low, first_layer, at.pp, ctx);
                }
                ctx.layer = -1;
                if (first) {
                    lower_backward(low, layers_.embedding_backward(), ctx, embedding_parameters());
                }
                if (in_pair) {
                    low.end_overlap();
                    in_pair = false;
                }
                if (deferred) {
                    low.send(Direction::Forward, deferred->to, p2p_bytes_, deferred->ctx, deferred->kept);
                    deferred.reset();
                }
                if (!first && neighbour(at, vs - 1, step.chunk).pp != at.pp) {
                    low.send(Direction::Backward, neighbour(at, vs - 1, step.chunk), p2p_bytes_, ctx);
                }
                flush_bucket(low, ctx);
                bucketing_ = false;
                defer_weights_ = false;
            }
        }
        if (overlap || fsdp_) {
            low.join_data_parallel();  // the optimizer waits for every gradient reduction
        }
        low.lower(stage_lists_->end_of_iteration(at.pp), StepContext{-1, -1, -1, Phase::Iteration});
    }

    // Backward of a chunk's layers, last layer first. Fully recomputed layers are recomputed a
    // checkpoint block at a time (Megatron's uniform method checkpoints N layers together; block
    // checkpoints each of the first N layers on its own).
    void lower_layer_backwards(OpLowering& low, std::int64_t first_layer, std::int64_t pipeline_rank,
                               StepContext ctx) {
        std::int64_t j = sc_.chunk_num_layers(pipeline_rank, ctx.chunk) - 1;
        engine::TaskId gathered = fsdp_gather(low, ctx);
        while (j >= 0) {
            if (fsdp_) {
                // Each layer's weights again for its (recompute and) backward, the next one prefetched;
                // its gradients are reduce-scattered as soon as its backward is done.
                ctx.layer = static_cast<std::int32_t>(first_layer + j);
                const engine::TaskId next = j > 0 ? fsdp_gather(low, ctx) : -1;
                low.wait_for(gathered);
                gathered = next;
                if (recomputed(j, ctx.microbatch, pipeline_rank)) {
                    low.lower(*layers_.at(ctx.layer).recompute, ctx);
                    low.lower(*layers_.at(ctx.layer).backward_plain, ctx);
                } else {
                    low.lower(*layers_.at(ctx.layer).backward, ctx);
                }
                low.lower(*fsdp_reduce_, ctx);
                --j;
                continue;
            }
            if (!recomputed(j, ctx.microbatch, pipeline_rank)) {
                ctx.layer = static_cast<std::int32_t>(first_layer + j);
                lower_backward(low, *layers_.at(ctx.layer).backward, ctx, layers_.parameters_at(ctx.layer));
                --j;
                continue;
            }
            const std::int64_t block_start = j - (j % checkpoint_block());
            for (std::int64_t k = block_start; k <= j; ++k) {
                ctx.layer = static_cast<std::int32_t>(first_layer + k);
                low.lower(k == block_start ? *layers_.at(ctx.layer).recompute
                                           : *layers_.at(ctx.layer).recompute_chained,
                          ctx);
            }
            for (std::int64_t k = j; k >= block_start; --k) {
                ctx.layer = static_cast<std::int32_t>(first_layer + k);
                lower_backward(low, *layers_.at(ctx.layer).backward_plain, ctx,
                               layers_.parameters_at(ctx.layer));
            }
            j = block_start - 1;
        }
    }

    // The forward op list of layer j of a chunk for one micro-batch.
    [[nodiscard]] const OpList& forward_of(std::int64_t pp, std::int64_t chunk, std::int64_t j,
                                           std::int64_t microbatch, std::int64_t layer) const {
        if (plan_ == nullptr) {
            if (!recomputed(j, microbatch, pp)) {
                return *layers_.at(layer).forward_stored;
            }
            // A checkpointed group keeps only its first layer's input.
            return j % checkpoint_block() == 0 ? *layers_.at(layer).forward_checkpointed
                                               : *layers_.at(layer).forward_unsaved;
        }
        const recompute::LayerRecompute r = plan_->at(pp, sc_.layers_before_chunk(pp, chunk) + j);
        if (recompute::is_full(r)) {
            return *layers_.at(layer).forward_checkpointed;
        }
        return recompute::is_selective(r) ? *layers_.at(layer).forward_selective
                                          : *layers_.at(layer).forward_none;
    }

    // Backward of a chunk's layers under a recompute plan. Overlapped recomputation is lowered first onto
    // the background lane, last layer first: it may start once the layer's forward of this micro-batch
    // is done and, with lookahead k ≥ 1, the step k steps earlier has begun, or with lookahead 0, the
    // previous backward has finished the same layer; each layer's backward waits for its recomputation.
    void lower_planned_backwards(OpLowering& low, std::int64_t pp, std::size_t step_index,
                                 std::int64_t first_layer, StepContext ctx,
                                 const std::vector<engine::TaskId>& markers,
                                 const std::map<std::array<std::int32_t, 3>, engine::TaskId>& forward_done,
                                 std::vector<engine::TaskId>& layer_freed) {
        const std::int64_t lc = sc_.chunk_num_layers(pp, ctx.chunk);
        const std::int64_t before = sc_.layers_before_chunk(pp, ctx.chunk);
        auto plan_of = [&](std::int64_t j) { return plan_->at(pp, before + j); };
        std::vector<engine::TaskId> ready(static_cast<std::size_t>(lc), -1);
        std::vector<engine::TaskId> start_after;
        const auto lookahead = static_cast<std::size_t>(plan_->lookahead);
        if (lookahead > 0 && step_index >= lookahead && markers[step_index - lookahead] >= 0) {
            start_after.push_back(markers[step_index - lookahead]);
        }
        for (std::int64_t j = lc - 1; j >= 0; --j) {
            if (recompute::is_overlapped(plan_of(j))) {
                ctx.layer = static_cast<std::int32_t>(first_layer + j);
                const OpList& ops = recompute::is_full(plan_of(j))
                                        ? *layers_.at(ctx.layer).recompute
                                        : *layers_.at(ctx.layer).recompute_selective;
                std::vector<engine::TaskId> after = start_after;
                // Its checkpointed inputs exist once this layer's forward of this micro-batch is done.
                const auto f = forward_done.find({ctx.microbatch, ctx.chunk, static_cast<std::int32_t>(j)});
                if (f != forward_done.end() && f->second >= 0) {
                    after.push_back(f->second);
                }
                if (lookahead == 0 && layer_freed[static_cast<std::size_t>(j)] >= 0) {
                    after.push_back(layer_freed[static_cast<std::size_t>(j)]);
                }
                ready[static_cast<std::size_t>(j)] = low.lower_background(ops, ctx, std::move(after));
            }
        }
        for (std::int64_t j = lc - 1; j >= 0; --j) {
            ctx.layer = static_cast<std::int32_t>(first_layer + j);
            switch (plan_of(j)) {
            case recompute::LayerRecompute::Keep:
                lower_backward(low, *layers_.at(ctx.layer).backward_plain, ctx,
                               layers_.parameters_at(ctx.layer));
                break;
            case recompute::LayerRecompute::SelectiveOnDemand:
                lower_backward(low, *layers_.at(ctx.layer).backward_selective, ctx,
                               layers_.parameters_at(ctx.layer));
                break;
            case recompute::LayerRecompute::FullOnDemand:
                low.lower(*layers_.at(ctx.layer).recompute, ctx);
                lower_backward(low, *layers_.at(ctx.layer).backward_plain, ctx,
                               layers_.parameters_at(ctx.layer));
                break;
            case recompute::LayerRecompute::SelectiveOverlapped:
            case recompute::LayerRecompute::FullOverlapped:
                low.wait_for(ready[static_cast<std::size_t>(j)]);
                lower_backward(low, *layers_.at(ctx.layer).backward_plain, ctx,
                               layers_.parameters_at(ctx.layer));
                break;
            }
            layer_freed[static_cast<std::size_t>(j)] = low.last_compute();
        }
    }

    // A backward op list and the gradients it makes final. With the backward split only B runs now;
    // W is kept for the step's Weight pass, which adds the gradients to the bucket.
    void lower_backward(OpLowering& low, const workload::OpList& ops, const StepContext& ctx,
                        std::int64_t parameters) {
        if (!defer_weights_) {
            low.lower(ops, ctx);
            add_gradients(low, parameters, ctx);
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
        pending_weights_[{ctx.microbatch, ctx.chunk}].push_back({ctx, it->second.second, parameters});
    }

    // The W pass of a (micro-batch, chunk): the weight gradients its B left, in the B's order.
    void lower_weight_gradients(OpLowering& low, const schedule::Step& step) {
        const auto found = pending_weights_.find({step.microbatch, step.chunk});
        if (found == pending_weights_.end()) {
            throw InputError("schedule " + sched_->name() + ": W" + std::to_string(step.microbatch) + ".c" +
                             std::to_string(step.chunk) + " runs before its B");
        }
        for (const PendingWeight& w : found->second) {
            if (!w.ops->empty()) {
                low.lower(*w.ops, w.ctx);
            }
            add_gradients(low, w.parameters, w.ctx);
        }
        pending_weights_.erase(found);
    }

    // FSDP: issues one layer's weight all-gather on the data-parallel stream and returns its task (-1
    // without FSDP).
    engine::TaskId fsdp_gather(OpLowering& low, const StepContext& ctx) {
        if (!fsdp_) {
            return -1;
        }
        low.lower(*fsdp_gather_, ctx);
        return low.last_data_collective();
    }

    // Gradient buckets (overlap_grad_reduce): parameters whose gradients are final are added in backward
    // order; a full bucket's reduction is issued at once, asynchronously.
    void add_gradients(OpLowering& low, std::int64_t parameters, const StepContext& ctx) {
        if (!bucketing_) {
            return;
        }
        bucket_filled_ += parameters;
        if (bucket_filled_ >= workload::gradient_bucket_parameters(sc_)) {
            flush_bucket(low, ctx);
        }
    }

    void flush_bucket(OpLowering& low, const StepContext& ctx) {
        if (!bucketing_ || bucket_filled_ == 0) {
            return;
        }
        auto [it, added] = bucket_ops_.try_emplace(bucket_filled_, nullptr);
        if (added) {
            it->second = own(workload::gradient_bucket_reduction(sc_, bucket_filled_));
        }
        StepContext at = ctx;
        at.layer = -1;
        low.lower(*it->second, at);
        bucket_filled_ = 0;
    }

    // The MTP depths after the decoder's last layer (workload/mtp_block.h), each under its own layer index
    // (num_layers + depth) so that its activations go with its backward. Megatron runs them between the
    // decoder's final norm and the main logits; here the final norm is the output list's first op, after
    // them: the same kernels on the same stream, only that norm moved.
    void lower_mtp_forwards(OpLowering& low, StepContext ctx) {
        for (std::int64_t depth = 0; depth < sc_.model.mtp_num_layers; ++depth) {
            ctx.layer = static_cast<std::int32_t>(sc_.model.num_layers + depth);
            low.lower(layers_.mtp_forward(), ctx);
        }
    }
    void lower_mtp_backwards(OpLowering& low, StepContext ctx, const parallel::Coordinates& at) {
        if (sc_.model.mtp_num_layers == 0) {
            return;
        }
        const std::int64_t depth_parameters =
            workload::mtp_depth_parameters_per_rank(workload::mtp_layer_shape(sc_));
        for (std::int64_t depth = sc_.model.mtp_num_layers - 1; depth >= 0; --depth) {
            ctx.layer = static_cast<std::int32_t>(sc_.model.num_layers + depth);
            // The embedding copy's gradient is complete after the first depth's backward, the last to run.
            const std::int64_t parameters =
                depth_parameters + (depth == 0 ? workload::mtp_embedding_copy_parameters(sc_, at.pp) : 0);
            lower_backward(low, layers_.mtp_backward(), ctx, parameters);
        }
    }

    // Parameters outside the layers, as workload::stage_parameters counts them.
    [[nodiscard]] std::int64_t embedding_parameters() const {
        return workload::word_embedding_parameters_per_rank(sc_) +
               workload::position_embedding_parameters(sc_);
    }
    [[nodiscard]] std::int64_t output_layer_parameters(const parallel::Coordinates& at) const {
        const workload::StageParameters s = workload::stage_parameters(sc_, at.pp);
        const bool own = workload::output_layer_has_own_weights(sc_, at.pp);
        return s.final_layernorm + (own ? workload::word_embedding_parameters_per_rank(sc_) : 0);
    }

    // Whether layer `layer_in_chunk` of micro-batch `microbatch` on pipeline rank `rank` is recomputed.
    [[nodiscard]] bool recomputed(std::int64_t layer_in_chunk, std::int64_t microbatch,
                                  std::int64_t rank) const {
        if (sc_.training.recompute_granularity != RecomputeGranularity::Full) {
            return false;
        }
        // Korthikanti Appendix C, as Megatron's 1F1B schedule implements it: of every W + 1 consecutive
        // micro-batches (W the rank's warm-up count, so W + 1 the most in flight) the first N keep all
        // their activations and the rest are checkpointed.
        if (const auto n = sc_.training.num_microbatches_with_partial_activation_checkpoints) {
            const std::int64_t in_flight = std::min(p_ - rank - 1, sc_.num_microbatches()) + 1;
            if (microbatch % in_flight < *n) {
                return false;
            }
        }
        const std::int64_t n = sc_.training.recompute_num_layers.value_or(1);
        if (sc_.training.recompute_method == config::RecomputeMethod::Block) {
            return layer_in_chunk < n;
        }
        return true;
    }

    [[nodiscard]] std::int64_t checkpoint_block() const {
        if (sc_.training.recompute_method == config::RecomputeMethod::Block) {
            return 1;
        }
        return sc_.training.recompute_num_layers.value_or(1);
    }

    // The GPU holding model stage `virtual_stage` of chunk `chunk`'s pipeline, beside `at`.
    [[nodiscard]] parallel::Coordinates neighbour(const parallel::Coordinates& at, std::int64_t virtual_stage,
                                                  std::int32_t chunk) const {
        return {at.tp, at.dp, sched_->rank_of(virtual_stage, chunk, p_)};
    }

    [[nodiscard]] GroupMembers members_policy() const {
        GroupMembers m;
        const std::int64_t t = sc_.parallelism.tensor_model_parallel_size;
        const std::int64_t d = sc_.parallelism.data_parallel_size;
        m.tensor = fold_.tensor ? 1 : t;
        m.data = fold_.data ? 1 : d;
        m.embedding = 2;
        m.model_parallel = p_ * m.tensor;
        return m;
    }

    const config::Scenario& sc_;
    parallel::Layout layout_;
    OpPricing pricing_;
    const cost::CostModel& pricing_cost_;
    Fold fold_;
    const recompute::RecomputePlan* plan_;
    std::int64_t p_ = 1, v_ = 1;
    Bytes p2p_bytes_{0};
    RendezvousTable rendezvous_;
    std::unique_ptr<NetworkFlows> network_;             // hardware.network_model=flow
    std::map<std::int64_t, const OpList*> bucket_ops_;  // by bucket parameters
    std::int64_t layer_parameters_ = 0;
    bool fsdp_ = false;  // optim_grads_params with d > 1
    const OpList* fsdp_gather_ = nullptr;
    const OpList* fsdp_reduce_ = nullptr;
    bool bucketing_ = false;
    std::int64_t bucket_filled_ = 0;
    std::unique_ptr<schedule::Schedule> sched_;
    bool split_ = false;  // the schedule runs W passes of their own
    // Each backward list's B and W parts (split_ only), by the list they come from.
    std::map<const OpList*, std::pair<const OpList*, const OpList*>> splits_;
    struct PendingWeight {
        StepContext ctx;
        const OpList* ops = nullptr;
        std::int64_t parameters = 0;
    };
    bool defer_weights_ = false;  // the backward being lowered is B alone; its W step comes later
    // The W parts a B left on this GPU, by (micro-batch, chunk), until the schedule's W step.
    std::map<std::pair<std::int32_t, std::int32_t>, std::vector<PendingWeight>> pending_weights_;
    IterationProgram out_;
    LayerOpLists layers_;  // builds into out_.op_lists, so it comes after out_
    std::optional<StageOpLists> stage_lists_;
};

}  // namespace

IterationProgram build_iteration(const config::Scenario& scenario, const cost::CostModel& cost,
                                 const Fold& fold, const recompute::RecomputePlan* plan) {
    return IterationBuilder(scenario, cost, fold, plan).build();
}

}  // namespace trainsim::program
