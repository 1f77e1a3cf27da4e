// How the transformer layers are divided among pipeline ranks and their model chunks: uniform by
// default, the scenario's parallelism.layers_per_pipeline_stage (each rank's chunks equal), or a count
// per virtual stage (layers_per_virtual_stage, from Megatron's pipeline_model_parallel_layout).
#include "sim/config/scenario.h"

namespace trainsim::config {

std::int64_t Scenario::stage_num_layers(std::int64_t pipeline_rank) const {
    if (!parallelism.layers_per_virtual_stage.empty()) {
        std::int64_t layers = 0;
        for (std::int64_t c = 0; c < parallelism.virtual_pipeline_model_parallel_size; ++c) {
            layers += chunk_num_layers(pipeline_rank, c);
        }
        return layers;
    }
    if (!parallelism.layers_per_pipeline_stage.empty()) {
        return parallelism.layers_per_pipeline_stage.at(static_cast<std::size_t>(pipeline_rank));
    }
    // DualPipe: a rank holds stage r of one copy and stage p − 1 − r of the other, L/p layers each.
    return model.num_layers / parallelism.pipeline_model_parallel_size * (bidirectional_placement() ? 2 : 1);
}

std::int64_t Scenario::chunk_num_layers(std::int64_t pipeline_rank, std::int64_t chunk) const {
    if (!parallelism.layers_per_virtual_stage.empty()) {
        // Megatron's layout order: chunk c of rank r is virtual stage c·p + r.
        return parallelism.layers_per_virtual_stage.at(
            static_cast<std::size_t>(chunk * parallelism.pipeline_model_parallel_size + pipeline_rank));
    }
    return stage_num_layers(pipeline_rank) / parallelism.virtual_pipeline_model_parallel_size;
}

std::int64_t Scenario::layers_before_chunk(std::int64_t pipeline_rank, std::int64_t chunk) const {
    std::int64_t layers = 0;
    for (std::int64_t c = 0; c < chunk; ++c) {
        layers += chunk_num_layers(pipeline_rank, c);
    }
    return layers;
}

bool Scenario::uneven_split() const {
    return !parallelism.layers_per_pipeline_stage.empty() || !parallelism.layers_per_virtual_stage.empty();
}

std::int64_t Scenario::first_layer_of_virtual_stage(std::int64_t virtual_stage) const {
    const std::int64_t p = parallelism.pipeline_model_parallel_size;
    if (!uneven_split()) {
        return virtual_stage * chunk_num_layers(0, 0);
    }
    // Virtual stages run chunk-major (chunk 0 on ranks 0..p-1, then chunk 1, ...): add up the chunks
    // before this one.
    std::int64_t first = 0;
    for (std::int64_t u = 0; u < virtual_stage; ++u) {
        first += chunk_num_layers(u % p, u / p);
    }
    return first;
}

std::string split_text(const std::vector<std::int64_t>& split) {
    std::string text = "[";
    for (std::size_t i = 0; i < split.size(); ++i) {
        if (i > 0) {
            text += ',';
        }
        text += std::to_string(split[i]);
    }
    text += ']';
    return text;
}

std::vector<std::int64_t> Scenario::pipeline_split() const {
    std::vector<std::int64_t> split;
    for (std::int64_t r = 0; r < parallelism.pipeline_model_parallel_size; ++r) {
        split.push_back(stage_num_layers(r));
    }
    return split;
}

}  // namespace trainsim::config
