#include "sim/workload/stage_layers.h"

namespace trainsim::workload {

bool is_moe_layer(const config::Scenario& sc, std::int64_t layer) {
    return sc.model.moe && sc.model.moe->layer_is_moe.at(static_cast<std::size_t>(layer));
}

bool mixes_dense_and_moe_layers(const config::Scenario& sc) {
    if (!sc.model.moe) {
        return false;
    }
    const std::int64_t moe_layers = sc.model.moe->num_moe_layers();
    return moe_layers > 0 && moe_layers < sc.model.num_layers;
}

std::int64_t first_layer_of_chunk(const config::Scenario& sc, std::int64_t pipeline_rank,
                                  std::int64_t chunk) {
    return sc.first_layer_of_virtual_stage(sc.model_stage_of_chunk(pipeline_rank, chunk));
}

std::vector<std::int64_t> stage_layers(const config::Scenario& sc, std::int64_t pipeline_rank) {
    std::vector<std::int64_t> layers;
    for (std::int64_t c = 0; c < sc.parallelism.virtual_pipeline_model_parallel_size; ++c) {
        const std::int64_t first = first_layer_of_chunk(sc, pipeline_rank, c);
        for (std::int64_t j = 0; j < sc.chunk_num_layers(pipeline_rank, c); ++j) {
            layers.push_back(first + j);
        }
    }
    return layers;
}

}  // namespace trainsim::workload
