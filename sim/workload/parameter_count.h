// Parameters held by one GPU (one tensor-parallel rank of one pipeline stage), Megatron's layout.
#pragma once

#include <cstdint>

#include "sim/config/scenario.h"
#include "sim/workload/layer_shape.h"

namespace trainsim::workload {

/// One transformer layer's parameters on one TP rank: QKV and fc1 split by columns (with their
/// biases), projection and fc2 split by rows (their biases and both LayerNorms replicated).
[[nodiscard]] std::int64_t layer_parameters_per_rank(const LayerShape& shape);

struct StageParameters {
    std::int64_t transformer = 0;  // the stage's layers
    std::int64_t embedding = 0;    // word (v/t·h) and position (s·h) embeddings on the first stage;
                                   // the output layer's copy of the word embedding on the last (p > 1)
    std::int64_t final_layernorm = 0;
    [[nodiscard]] std::int64_t total() const { return transformer + embedding + final_layernorm; }
};

/// Parameters on one TP rank of pipeline rank `pipeline_rank` (all of its virtual chunks).
[[nodiscard]] StageParameters stage_parameters(const config::Scenario& scenario, std::int64_t pipeline_rank);

/// The word-embedding parameters on one TP rank (v/t · h), shared between first and last stage.
[[nodiscard]] std::int64_t word_embedding_parameters_per_rank(const config::Scenario& scenario);

/// The LayerShape of the scenario's transformer layers.
[[nodiscard]] LayerShape layer_shape_of(const config::Scenario& scenario);

}  // namespace trainsim::workload
