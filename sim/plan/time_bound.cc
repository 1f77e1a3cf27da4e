#include "sim/plan/time_bound.h"

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "sim/parallel/expert_layout.h"
#include "sim/parallel/layout.h"
#include "sim/program/op_pricing.h"
#include "sim/schedule/schedule.h"
#include "sim/workload/fp32_embedding_gradients.h"
#include "sim/workload/mtp_block.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_layers.h"
#include "sim/workload/stage_ops.h"
#include "sim/workload/transformer_layer.h"

namespace trainsim::plan {
namespace {

using config::RecomputeGranularity;

// Whether every rank starts with F(0, chunk 0) and ends with B(m − 1, chunk 0), as the bound's chains
// assume (true of GPipe, 1F1B and Megatron's interleaved order).
bool starts_and_ends_as_assumed(const config::Scenario& sc) {
    const std::int64_t p = sc.parallelism.pipeline_model_parallel_size;
    const std::int64_t m = sc.num_microbatches();
    const auto sched = schedule::make_schedule(sc.schedule, schedule::pipeline_shape(sc));
    const schedule::Step first{schedule::Pass::Forward, 0, 0};
    const schedule::Step last{schedule::Pass::Backward, static_cast<std::int32_t>(m - 1), 0};
    for (std::int64_t r = 0; r < p; ++r) {
        const std::vector<schedule::Step> steps = sched->steps(r);
        if (steps.empty() || !(steps.front() == first) || !(steps.back() == last)) {
            return false;
        }
    }
    return true;
}

class ComputePricer {
public:
    ComputePricer(const config::Scenario& sc, const cost::CostModel& cost)
        : layout_(sc), pricing_(cost, layout_, sc) {
        // The expert groups differ in how many nodes they span (a group of a later pipeline stage, or
        // one not aligned to a node, may straddle one more): keep one GPU of each distinct combination of
        // the EP, expert-TP and tp_ep spans, so that each expert collective is priced at the least any GPU
        // pays for it.
        if (const parallel::ExpertLayout* experts = pricing_.experts()) {
            std::vector<std::array<parallel::GroupSpan, 3>> seen;
            for (std::int64_t rank = 0; rank < layout_.world_size(); ++rank) {
                const std::array<parallel::GroupSpan, 3> spans{experts->expert_parallel_group(rank),
                                                               experts->expert_tensor_group(rank),
                                                               experts->expert_tensor_and_model_group(rank)};
                if (std::find(seen.begin(), seen.end(), spans) == seen.end()) {
                    seen.push_back(spans);
                    expert_sites_.push_back(layout_.coordinates(rank));
                }
            }
        }
    }

    // The compute stream's share of an op list: every op but the collectives, unslowed; plus each
    // blocking collective of the tensor-parallel stream (TP's, and the experts' dispatch and combine
    // all-to-all) between two compute ops of the list. Such a collective starts after the compute
    // before it and the compute after it waits for its end, so the compute stream idles for at least
    // its duration (several of them queue on the one stream).
    [[nodiscard]] SimTime compute(const workload::OpList& ops) const {
        SimTime total{};
        SimTime blocked{};  // blocking collectives since the last compute op
        bool computed = false;
        for (const workload::Op& op : ops) {
            if (op.kind != workload::OpKind::Collective) {
                total += to_sim_time(pricing_.duration(op, {0, 0, 0})) + blocked;
                blocked = SimTime{};
                computed = true;
            } else if (computed && op.blocking && op.stream == workload::OpStream::TensorComm) {
                blocked += collective(op);
            }
        }
        return total;
    }

private:
    [[nodiscard]] SimTime collective(const workload::Op& op) const {
        if (!workload::is_expert_token_group(op.group)) {
            return to_sim_time(pricing_.duration(op, {0, 0, 0}));  // every TP group alike
        }
        SimTime least = SimTime::max();
        for (const parallel::Coordinates& at : expert_sites_) {
            least = std::min(least, to_sim_time(pricing_.duration(op, at)));
        }
        return least;
    }

    parallel::Layout layout_;
    program::OpPricing pricing_;
    std::vector<parallel::Coordinates> expert_sites_;  // one GPU per distinct set of expert spans
};

// One layer's forward and backward compute under the policy. Every forward variant the program builder
// picks (stored, checkpointed, unsaved) runs the same kernels: take the least of them.
struct LayerCompute {
    SimTime forward{};
    SimTime backward{};
};

LayerCompute layer_compute(const config::Scenario& sc, const ComputePricer& price,
                           const workload::LayerShape& shape) {
    LayerCompute out;
    out.forward = std::min({price.compute(workload::layer_forward(shape, RecomputeGranularity::None)),
                            price.compute(workload::layer_forward(shape, RecomputeGranularity::Selective)),
                            price.compute(workload::layer_forward(shape, RecomputeGranularity::Full)),
                            price.compute(workload::layer_forward_unsaved(shape))});
    const SimTime plain_backward = price.compute(workload::layer_backward(shape, RecomputeGranularity::None));
    out.backward = plain_backward;
    switch (sc.training.recompute_granularity) {
    case RecomputeGranularity::Selective:
        out.backward = std::min(
            plain_backward, price.compute(workload::layer_backward(shape, RecomputeGranularity::Selective)));
        break;
    case RecomputeGranularity::Full:
        if (sc.training.recompute_method != config::RecomputeMethod::Block &&
            !sc.training.num_microbatches_with_partial_activation_checkpoints) {
            // Every layer is recomputed before its backward, from its checkpoint or from the layer before.
            out.backward += std::min(price.compute(workload::layer_full_recompute(shape, true)),
                                     price.compute(workload::layer_full_recompute(shape, false)));
        }
        break;
    default:
        break;
    }
    return out;
}

}  // namespace

Seconds iteration_time_lower_bound(const config::Scenario& sc, const cost::CostModel& cost) {
    const std::int64_t p = sc.parallelism.pipeline_model_parallel_size;
    const std::int64_t v = sc.parallelism.virtual_pipeline_model_parallel_size;
    const std::int64_t m = sc.num_microbatches();
    const ComputePricer price(sc, cost);
    const workload::LayerShape shape = workload::layer_shape_of(sc);

    // Each kind of layer (dense, MoE: moe_layer_freq mixes them) priced once, if the model has it.
    LayerCompute kinds[2];
    const bool mixed = workload::mixes_dense_and_moe_layers(sc);
    if (!shape.moe() || mixed) {
        kinds[0] = layer_compute(sc, price, shape.with_dense_mlp());
    }
    if (shape.moe()) {
        kinds[1] = layer_compute(sc, price, shape);
    }
    const SimTime embedding_f = price.compute(workload::embedding_forward(shape));
    const SimTime embedding_b = price.compute(workload::embedding_backward(shape));
    const SimTime output_f = price.compute(workload::output_forward(shape));
    const SimTime output_b = price.compute(workload::output_backward(shape));
    // The MTP depths run on the last stage beside the output layer (workload/mtp_block.h).
    SimTime mtp_f{}, mtp_b{};
    if (sc.model.mtp_num_layers > 0) {
        const workload::LayerShape mtp = workload::mtp_layer_shape(sc);
        const workload::MtpRecompute recompute = workload::mtp_recompute(sc);
        mtp_f = sc.model.mtp_num_layers * price.compute(workload::mtp_forward(mtp, recompute));
        mtp_b = sc.model.mtp_num_layers * price.compute(workload::mtp_backward(mtp, recompute));
    }
    const bool overlap = sc.training.overlap_grad_reduce && sc.parallelism.data_parallel_size_with_cp() > 1;

    const bool chains = starts_and_ends_as_assumed(sc);
    // DualPipe runs m/2 micro-batches through each of a rank's two chunks (one per direction), its
    // chunk 1 holding stage p − 1 − r of a p-stage model; the others m through every chunk. Where each
    // chunk sits (so which rank runs the embedding and the output layer: rank 0 both in a V) is the
    // placement the program builder uses.
    const bool two_way = sc.bidirectional_placement();
    const std::int64_t per_chunk = two_way ? m / 2 : m;
    const std::int64_t stages = two_way ? p : p * v;
    SimTime bound{};
    SimTime fill{}, drain{};  // Σ_{k<r} F_k and Σ_{k<r} B_k
    SimTime end_0{};
    for (std::int64_t r = 0; r < p; ++r) {
        SimTime per_microbatch{}, first_forward{}, last_backward{};
        for (std::int64_t c = 0; c < v; ++c) {
            const std::int64_t vs = sc.model_stage_of_chunk(r, c);
            SimTime f{}, b{};
            const std::int64_t first = workload::first_layer_of_chunk(sc, r, c);
            for (std::int64_t j = 0; j < sc.chunk_num_layers(r, c); ++j) {
                const LayerCompute& layer =
                    kinds[shape.moe() && workload::is_moe_layer(sc, first + j) ? 1 : 0];
                f += layer.forward;
                b += layer.backward;
            }
            if (vs == 0) {
                f += embedding_f;
                b += embedding_b;
            }
            if (vs == stages - 1) {
                f += output_f + mtp_f;
                b += output_b + mtp_b;
            }
            per_microbatch += f + b;
            if (c == 0) {
                first_forward = f;
                last_backward = b;
            }
        }
        const bool tied = workload::holds_tied_embedding_copy(sc, r);
        const SimTime end = price.compute(workload::end_of_iteration(
            sc, workload::stage_parameters(sc, r).total(),
            tied ? workload::word_embedding_parameters_per_rank(sc) : 0, overlap, 0,
            workload::stage_parameters(sc, r).expert,
            /*tp_replicated_parameters=*/0, workload::fp32_gradient_parameters(sc, r)));
        if (r == 0) {
            end_0 = end;
        }
        bound = std::max(bound, (chains ? fill : SimTime{}) + per_chunk * per_microbatch +
                                    std::max(end, (chains ? drain : SimTime{}) + end_0));
        fill += first_forward;
        drain += last_backward;
    }
    return to_seconds(bound);
}

}  // namespace trainsim::plan
