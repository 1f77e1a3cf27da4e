#include "sim/program/iteration_program.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>

#include "sim/core/input_error.h"
#include "sim/program/backward_lowering.h"
#include "sim/program/fsdp_lowering.h"
#include "sim/program/layer_op_lists.h"
#include "sim/program/op_lowering.h"
#include "sim/program/overlapped_pair.h"
#include "sim/program/parameter_gather.h"
#include "sim/program/stage_op_lists.h"
#include "sim/program/variability.h"
#include "sim/recompute/megatron_recompute_plan.h"
#include "sim/schedule/interleaved_schedule.h"
#include "sim/schedule/schedule.h"
#include "sim/workload/fp32_embedding_gradients.h"
#include "sim/workload/mtp_block.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_ops.h"

namespace trainsim::program {
namespace {

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
        fsdp_.emplace(sc, out_.op_lists);
        parameter_gather_.emplace(sc, out_.op_lists, v_);
        stage_lists_.emplace(sc, out_.op_lists, fsdp_->on(),
                             sc.training.overlap_grad_reduce &&
                                 sc.parallelism.data_parallel_size_with_cp() > 1);
    }

    IterationProgram build() {
        check_fits_profile(sc_, pricing_cost_.profile());
        check_profile_sections();
        if (plan_ == nullptr) {
            // Megatron's policy, compiled (overlapped has none: it needs the search's plan).
            compiled_plan_ = recompute::megatron_recompute_plan(sc_);
        }
        backward_.emplace(sc_, plan_ != nullptr ? *plan_ : compiled_plan_, layers_, *fsdp_, out_.op_lists);
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
        if (split_ && fsdp_->on()) {
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

    void build_gpu(const parallel::Coordinates& at, const std::vector<schedule::Step>& steps) {
        const auto gpu = engine::GpuId::from_index(out_.gpus.size());
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
        out_.gpus.push_back(SimulatedGpu{at, low.compute_stream(), engine::kNoStream, slowdown});
        if (sc_.training.zero_grad_buffer) {
            low.lower(stage_lists_->gradient_buffer_zeroing(at.pp),
                      StepContext{-1, -1, -1, Phase::Iteration});
        }
        const std::int64_t virtual_stages = sched_->model_stages(p_, v_);
        // overlap_param_gather with several chunks: the first two chunks' gathers open the iteration.
        parameter_gather_->begin_gpu();
        if (parameter_gather_->on() && parameter_gather_->dispatches_chunks()) {
            for (std::int32_t c = 0; c < std::min<std::int32_t>(2, static_cast<std::int32_t>(v_)); ++c) {
                dispatch_gathers(low, at, c);
            }
        }
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
        RecomputeAnchors anchors;
        anchors.step_start.assign(steps.size(), engine::kNoTask);
        std::int64_t most_chunk_layers = 0;
        for (std::int64_t c = 0; c < v_; ++c) {
            most_chunk_layers = std::max(most_chunk_layers, sc_.chunk_num_layers(at.pp, c));
        }
        anchors.layer_freed.assign(static_cast<std::size_t>(most_chunk_layers), engine::kNoTask);
        // Megatron's interleaved schedule without overlap_p2p_comm communicates once per forward-backward
        // pair in its steady state: F_k, B_k, then one batch_isend_irecv with F_k's output, B_k's gradient
        // and the receives of the next pair (schedules.py, send_forward_backward_recv_forward_backward).
        // So a forward followed by a backward sends its output after that backward, and the receives
        // of both are posted before the forward.
        const bool paired =
            !sc_.parallelism.overlap_p2p_comm && sc_.resolved_schedule() == config::ScheduleKind::Interleaved;
        // The schedule's warm-up forwards each send at once; every later forward pairs with the backward
        // after it.
        std::vector<char> steady_forward(steps.size(), 0);
        if (paired) {
            const std::int64_t warmup =
                dynamic_cast<const schedule::InterleavedSchedule&>(*sched_).warmup(at.pp);
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
        // chains, interleaved. Under a plan from the recompute search the pair runs forward then backward:
        // the plan's background recomputation and its anchors are placed against that order.
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
        std::vector<char> gathered_chunk(static_cast<std::size_t>(v_), 0);  // overlap_param_gather
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
            anchors.step_start[k] = low.last_compute();
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
                // The chunk's first forward of the iteration waits for its parameters, bucket by bucket;
                // with several chunks it dispatches the gathers of the chunk after next.
                std::size_t unit = 0;
                if (parameter_gather_->on() && gathered_chunk[static_cast<std::size_t>(step.chunk)] == 0) {
                    gathered_chunk[static_cast<std::size_t>(step.chunk)] = 1;
                    if (parameter_gather_->dispatches_chunks() && step.chunk + 1 >= 2 &&
                        step.chunk + 1 < v_) {
                        dispatch_gathers(low, at, step.chunk + 1);
                    }
                    prepare_gathers(at, step.chunk);
                    parameter_gather_->begin_chunk(step.chunk);
                }
                if (first) {
                    ctx.layer = kEmbeddingLayer;
                    parameter_gather_->before(low, unit++, ctx);
                    low.lower(layers_.embedding_forward(), ctx);
                    ctx.layer = -1;
                }
                engine::TaskId gathered = fsdp_->gather(low, ctx);
                for (std::int64_t j = 0; j < chunk_layers; ++j) {
                    ctx.layer = static_cast<std::int32_t>(first_layer + j);
                    parameter_gather_->before(low, unit++, ctx);
                    if (fsdp_->on()) {
                        // Prefetch the next layer's weights while this one computes.
                        const engine::TaskId next =
                            j + 1 < chunk_layers ? fsdp_->gather(low, ctx) : engine::kNoTask;
                        low.wait_for(gathered);
                        gathered = next;
                    }
                    low.lower(backward_->forward_of(at.pp, step.chunk, j, step.microbatch, ctx.layer), ctx);
                    anchors.forward_done[{step.microbatch, step.chunk, static_cast<std::int32_t>(j)}] =
                        low.last_compute();
                }
                ctx.layer = -1;
                if (last) {
                    lower_mtp_forwards(low, ctx, unit);
                    parameter_gather_->before(low, unit, ctx);
                    low.lower(layers_.output_forward(), ctx);
                }
                parameter_gather_->end_chunk();
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
                backward_->begin_step(overlap && k == last_backward[static_cast<std::size_t>(step.chunk)],
                                      false);
                backward_->lower_weight_gradients(low, step, sched_->name());
                backward_->end_step(low, ctx);
            } else {
                ctx.phase = Phase::Backward;
                backward_->begin_step(overlap && k == last_backward[static_cast<std::size_t>(step.chunk)],
                                      split_backwards.contains({step.microbatch, step.chunk}));
                if (in_pair) {
                    low.set_chain(PairChain::Backward);
                }
                if (last) {
                    backward_->lower_backward(low, layers_.output_backward(), ctx,
                                              output_layer_parameters(at),
                                              workload::fp32_tied_copy_parameters(sc_, at.pp));
                    lower_mtp_backwards(low, ctx, at);
                }
                backward_->lower_layers(low, at.pp, k, first_layer, ctx, anchors);
                ctx.layer = kEmbeddingLayer;
                if (first) {
                    backward_->lower_backward(low, layers_.embedding_backward(), ctx, embedding_parameters(),
                                              workload::fp32_input_embedding_parameters(sc_));
                }
                ctx.layer = -1;
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
                backward_->end_step(low, ctx);
            }
        }
        if (overlap || fsdp_->on()) {
            low.join_data_parallel();  // the optimizer waits for every gradient reduction
        }
        low.lower(stage_lists_->end_of_iteration(at.pp), StepContext{-1, -1, -1, Phase::Iteration});
    }

    // The MTP depths after the decoder's last layer (workload/mtp_block.h), each under its own layer index
    // (num_layers + depth) so that its activations go with its backward. Megatron runs them between the
    // decoder's final norm and the main logits; here the final norm is the output list's first op, after
    // them: the same kernels on the same stream, only that norm moved.
    // `unit`: the first depth's index among the chunk's forward units (ParameterGather), advanced past
    // the depths.
    void lower_mtp_forwards(OpLowering& low, StepContext ctx, std::size_t& unit) {
        for (std::int64_t depth = 0; depth < sc_.model.mtp_num_layers; ++depth) {
            ctx.layer = static_cast<std::int32_t>(sc_.model.num_layers + depth);
            parameter_gather_->before(low, unit++, ctx);
            low.lower(layers_.mtp_forward(), ctx);
        }
    }
    void lower_mtp_backwards(OpLowering& low, StepContext ctx, const parallel::Coordinates& at) {
        if (sc_.model.mtp_num_layers == 0) {
            return;
        }
        for (std::int64_t depth = sc_.model.mtp_num_layers - 1; depth >= 0; --depth) {
            ctx.layer = static_cast<std::int32_t>(sc_.model.num_layers + depth);
            backward_->lower_backward(low, layers_.mtp_backward(), ctx, mtp_depth_parameters(at, depth));
        }
    }
    // The parameters whose gradients an MTP depth's backward completes: the embedding copy's gradient is
    // complete after the first depth's backward, the last to run.
    [[nodiscard]] std::int64_t mtp_depth_parameters(const parallel::Coordinates& at,
                                                    std::int64_t depth) const {
        return workload::mtp_depth_parameters_per_rank(workload::mtp_layer_shape(sc_)) +
               (depth == 0 ? workload::mtp_embedding_copy_parameters(sc_, at.pp) : 0);
    }

    // Groups chunk `chunk`'s parameters into overlap_param_gather's buckets (once per GPU).
    void prepare_gathers(const parallel::Coordinates& at, std::int32_t chunk) {
        if (parameter_gather_->prepared(chunk)) {
            return;
        }
        const std::int64_t vs = sched_->stage_of(at.pp, chunk, p_);
        const std::int64_t stages = sched_->model_stages(p_, v_);
        parameter_gather_->prepare(chunk, forward_unit_parameters(at, vs == 0, vs == stages - 1,
                                                                  sc_.first_layer_of_virtual_stage(vs),
                                                                  sc_.chunk_num_layers(at.pp, chunk)));
    }
    void dispatch_gathers(OpLowering& low, const parallel::Coordinates& at, std::int32_t chunk) {
        prepare_gathers(at, chunk);
        parameter_gather_->dispatch(low, chunk, StepContext{0, chunk, -1, Phase::Forward});
    }

    // The parameters of each unit a chunk's forward runs, in forward order, as its backward adds them to
    // the gradient buckets (BackwardLowering::lower_backward): the embedding, the layers, the MTP depths
    // (the first with the embedding copy), the output layer.
    [[nodiscard]] std::vector<std::int64_t> forward_unit_parameters(const parallel::Coordinates& at,
                                                                    bool first, bool last,
                                                                    std::int64_t first_layer,
                                                                    std::int64_t chunk_layers) const {
        std::vector<std::int64_t> units;
        if (first) {
            units.push_back(embedding_parameters());
        }
        for (std::int64_t j = 0; j < chunk_layers; ++j) {
            units.push_back(layers_.parameters_at(first_layer + j));
        }
        if (last) {
            for (std::int64_t depth = 0; depth < sc_.model.mtp_num_layers; ++depth) {
                units.push_back(mtp_depth_parameters(at, depth));
            }
            units.push_back(output_layer_parameters(at));
        }
        return units;
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
    const recompute::RecomputePlan* plan_;    // the caller's (the recompute search's), or null
    recompute::RecomputePlan compiled_plan_;  // the scenario's Megatron policy, without plan_
    std::int64_t p_ = 1, v_ = 1;
    Bytes p2p_bytes_{0};
    RendezvousTable rendezvous_;
    std::unique_ptr<NetworkFlows> network_;  // hardware.network_model=flow
    std::unique_ptr<schedule::Schedule> sched_;
    bool split_ = false;  // the schedule runs W passes of their own
    IterationProgram out_;
    LayerOpLists layers_;  // builds into out_.op_lists, so it comes after out_
    std::optional<FsdpLowering> fsdp_;
    std::optional<ParameterGather> parameter_gather_;
    std::optional<StageOpLists> stage_lists_;
    std::optional<BackwardLowering> backward_;
};

}  // namespace

IterationProgram build_iteration(const config::Scenario& scenario, const cost::CostModel& cost,
                                 const Fold& fold, const recompute::RecomputePlan* plan) {
    return IterationBuilder(scenario, cost, fold, plan).build();
}

}  // namespace trainsim::program
