#include "sim/plan/memory_bound.h"

#include <algorithm>
#include <set>

#include "sim/memory/static_memory.h"
#include "sim/schedule/schedule.h"
#include "sim/workload/parameter_count.h"
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

// What one layer keeps, with the program builder's choice of forward per layer (iteration_program.cc):
// the checkpointed forward for fully recomputed layers, the stored one otherwise.
Bytes layers_saved_bytes(const config::Scenario& sc, std::int64_t layers_per_chunk) {
    const workload::LayerShape shape = workload::layer_shape_of(sc);
    const auto& t = sc.training;
    switch (t.recompute_granularity) {
    case RecomputeGranularity::None:
    case RecomputeGranularity::Selective: {
        const Bytes layer = workload::layer_activation_bytes(shape, t.recompute_granularity);
        return Bytes{layer.value * layers_per_chunk};
    }
    case RecomputeGranularity::Full: {
        // Micro-batches exempted by Appendix C keep everything, which is more: the checkpointed count
        // is the bound for every micro-batch.
        const Bytes checkpointed = workload::layer_activation_bytes(shape, RecomputeGranularity::Full);
        if (t.recompute_method == config::RecomputeMethod::Block) {
            const std::int64_t n =
                std::min(t.recompute_num_layers.value_or(layers_per_chunk), layers_per_chunk);
            const Bytes stored = workload::layer_activation_bytes(shape, RecomputeGranularity::None);
            return Bytes{checkpointed.value * n + stored.value * (layers_per_chunk - n)};
        }
        return Bytes{checkpointed.value * layers_per_chunk};
    }
    case RecomputeGranularity::Overlapped:
        break;  // what an overlapped plan keeps is chosen per layer at build time: no bound here
    }
    return Bytes{0};
}

}  // namespace

Bytes forward_saved_bytes(const config::Scenario& sc, std::int64_t rank, std::int64_t chunk) {
    const std::int64_t p = sc.parallelism.pipeline_model_parallel_size;
    const std::int64_t v = sc.parallelism.virtual_pipeline_model_parallel_size;
    // The schedule's placement, without building the schedule (ZB-V's is a greedy search).
    const std::int64_t virtual_stage = sc.model_stage_of_chunk(rank, chunk);
    const std::int64_t stages = sc.bidirectional_placement() ? p : p * v;
    const workload::LayerShape shape = workload::layer_shape_of(sc);
    Bytes bytes = layers_saved_bytes(sc, sc.chunk_num_layers(rank));
    if (virtual_stage == 0) {
        bytes += saved_by(workload::embedding_forward(shape));
    }
    if (virtual_stage == stages - 1) {
        bytes += saved_by(workload::output_forward(shape));
    } else if (!sc.training.deallocate_pipeline_outputs) {
        bytes += Bytes{shape.sequence_sharded_elements() * 2};
    }
    return bytes;
}

Bytes memory_lower_bound(const config::Scenario& sc) {
    const std::int64_t p = sc.parallelism.pipeline_model_parallel_size;
    const std::int64_t v = sc.parallelism.virtual_pipeline_model_parallel_size;
    const auto sched =
        schedule::make_schedule(sc.schedule, {p, v, sc.num_microbatches(),
                                              sc.parallelism.microbatch_group_size_per_vp_stage.value_or(0)});
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
