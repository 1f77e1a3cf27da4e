#include "sim/plan/memory_bound.h"

#include <algorithm>
#include <limits>
#include <set>

#include "sim/memory/static_memory.h"
#include "sim/schedule/schedule.h"
#include "sim/workload/mtp_block.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_layers.h"
#include "sim/workload/stage_ops.h"
#include "sim/workload/transformer_layer.h"

namespace trainsim::plan {
namespace {

using config::RecomputeGranularity;

Bytes saved_by(const workload::OpList& ops) {
    Bytes total{0};
    for (const workload::Op& op : ops) {
        total += op.saved_bytes;
    }
    return total;
}

// What the layers of chunk `chunk` of pipeline rank `rank` keep, with the program builder's choice of
// forward per layer (iteration_program.cc): the checkpointed forward for a fully recomputed layer (under
// the block method, the first recompute_num_layers of the chunk), the stored one otherwise. Each layer by
// its kind: with moe_layer_freq a chunk may hold dense layers, MoE layers or both (DeepSeek-V3's first
// three layers are dense), each keeping what its own op list saves (program/layer_op_lists.h).
Bytes layers_saved_bytes(const config::Scenario& sc, std::int64_t rank, std::int64_t chunk) {
    const auto& t = sc.training;
    if (t.recompute_granularity == RecomputeGranularity::Overlapped) {
        return Bytes{0};  // what an overlapped plan keeps is chosen per layer at build time: no bound here
    }
    // Micro-batches exempted by Appendix C keep everything, which is more: the checkpointed count is the
    // bound for every micro-batch.
    const bool full = t.recompute_granularity == RecomputeGranularity::Full;
    const std::int64_t recomputed_in_chunk =
        !full ? 0
        : t.recompute_method == config::RecomputeMethod::Block
            ? t.recompute_num_layers.value_or(std::numeric_limits<std::int64_t>::max())
            : std::numeric_limits<std::int64_t>::max();
    const workload::LayerShape moe_shape = workload::layer_shape_of(sc);
    // Layers of each kind (0 dense, 1 MoE) that are checkpointed (0) or stored (1); their bytes are
    // computed once per kind and variant present (each builds the layer's op list).
    std::int64_t count[2][2] = {{0, 0}, {0, 0}};
    const std::int64_t first = workload::first_layer_of_chunk(sc, rank, chunk);
    for (std::int64_t j = 0; j < sc.chunk_num_layers(rank, chunk); ++j) {
        const bool moe = moe_shape.moe() && workload::is_moe_layer(sc, first + j);
        ++count[moe ? 1 : 0][j < recomputed_in_chunk ? 0 : 1];
    }
    const RecomputeGranularity stored = full ? RecomputeGranularity::None : t.recompute_granularity;
    Bytes total{0};
    for (int kind = 0; kind < 2; ++kind) {
        const workload::LayerShape shape = kind == 0 ? moe_shape.with_dense_mlp() : moe_shape;
        for (int variant = 0; variant < 2; ++variant) {
            if (count[kind][variant] > 0) {
                const Bytes layer = workload::layer_activation_bytes(
                    shape, variant == 0 ? RecomputeGranularity::Full : stored);
                total += Bytes{layer.value * count[kind][variant]};
            }
        }
    }
    return total;
}

}  // namespace

Bytes forward_saved_bytes(const config::Scenario& sc, std::int64_t rank, std::int64_t chunk) {
    const std::int64_t p = sc.parallelism.pipeline_model_parallel_size;
    const std::int64_t v = sc.parallelism.virtual_pipeline_model_parallel_size;
    // The schedule's placement, without building the schedule (ZB-V's is a greedy search).
    const std::int64_t virtual_stage = sc.model_stage_of_chunk(rank, chunk);
    const std::int64_t stages = sc.bidirectional_placement() ? p : p * v;
    const workload::LayerShape shape = workload::layer_shape_of(sc);
    Bytes bytes = layers_saved_bytes(sc, rank, chunk);
    if (virtual_stage == 0) {
        bytes += saved_by(workload::embedding_forward(shape));
    }
    if (virtual_stage == stages - 1) {
        bytes += saved_by(workload::output_forward(shape));
        if (sc.model.mtp_num_layers > 0) {  // the MTP depths (workload/mtp_block.h)
            const Bytes mtp =
                saved_by(workload::mtp_forward(workload::mtp_layer_shape(sc), workload::mtp_recompute(sc)));
            bytes += Bytes{mtp.value * sc.model.mtp_num_layers};
        }
    } else if (!sc.training.deallocate_pipeline_outputs && sc.chunk_num_layers(rank, chunk) > 0) {
        // (A chunk without layers passes on the tensor it received: it keeps nothing of its own.)
        bytes += Bytes{shape.sequence_sharded_elements() * 2};
    }
    return bytes;
}

Bytes memory_lower_bound(const config::Scenario& sc) {
    const std::int64_t p = sc.parallelism.pipeline_model_parallel_size;
    const std::int64_t v = sc.parallelism.virtual_pipeline_model_parallel_size;
    const auto sched = schedule::make_schedule(sc.schedule, schedule::pipeline_shape(sc));
    Bytes bound{0};
    for (const std::int64_t rank : std::set<std::int64_t>{0, std::min<std::int64_t>(1, p - 1), p - 1}) {
        // Forwards per chunk before the rank's first backward.
        std::vector<std::int64_t> forwards(static_cast<std::size_t>(v), 0);
        for (const schedule::Step& step : sched->steps(rank)) {
            if (step.pass == schedule::Pass::Backward) {
                break;
            }
            ++forwards[static_cast<std::size_t>(step.chunk)];
        }
        Bytes held = memory::static_bytes(sc, rank);
        for (std::int64_t c = 0; c < v; ++c) {
            held += Bytes{forward_saved_bytes(sc, rank, c).value * forwards[static_cast<std::size_t>(c)]};
        }
        bound = std::max(bound, held);
    }
    return bound;
}

}  // namespace trainsim::plan
