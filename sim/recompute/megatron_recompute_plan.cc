#include "sim/recompute/megatron_recompute_plan.h"

#include <algorithm>

#include "sim/core/input_error.h"

namespace trainsim::recompute {

namespace {

// Layer `j` of a chunk under full recompute.
LayerRecompute full_layer(const config::TrainingConfig& t, std::int64_t j) {
    const std::int64_t n = t.recompute_num_layers.value_or(1);
    if (t.recompute_method == config::RecomputeMethod::Block) {
        return j < n ? LayerRecompute::FullOnDemand : LayerRecompute::Keep;
    }
    return j % n == 0 ? LayerRecompute::FullOnDemand : LayerRecompute::FullChained;
}

}  // namespace

RecomputePlan megatron_recompute_plan(const config::Scenario& scenario) {
    const config::TrainingConfig& t = scenario.training;
    if (t.recompute_granularity == config::RecomputeGranularity::Overlapped) {
        throw InputError("training.recompute_granularity=overlapped needs a recompute plan (trainsim run "
                         "chooses one with training.recompute_scheduler)");
    }
    const std::int64_t p = scenario.parallelism.pipeline_model_parallel_size;
    const std::int64_t v = scenario.parallelism.virtual_pipeline_model_parallel_size;
    RecomputePlan plan;
    for (std::int64_t rank = 0; rank < p; ++rank) {
        std::vector<LayerRecompute>& stage = plan.layers.emplace_back();
        for (std::int64_t chunk = 0; chunk < v; ++chunk) {
            for (std::int64_t j = 0; j < scenario.chunk_num_layers(rank, chunk); ++j) {
                switch (t.recompute_granularity) {
                case config::RecomputeGranularity::Selective:
                    stage.push_back(LayerRecompute::SelectiveOnDemand);
                    break;
                case config::RecomputeGranularity::Full:
                    stage.push_back(full_layer(t, j));
                    break;
                case config::RecomputeGranularity::None:
                case config::RecomputeGranularity::Overlapped:  // refused above
                    stage.push_back(LayerRecompute::Keep);
                    break;
                }
            }
        }
    }
    if (t.recompute_granularity == config::RecomputeGranularity::Full) {
        if (const auto n = t.num_microbatches_with_partial_activation_checkpoints) {
            // The rank's warm-up forwards plus the one of the steady state: the most micro-batches in flight.
            for (std::int64_t rank = 0; rank < p; ++rank) {
                plan.stored_microbatches.push_back(
                    {std::min(p - rank - 1, scenario.num_microbatches()) + 1, *n});
            }
        }
    }
    return plan;
}

}  // namespace trainsim::recompute
