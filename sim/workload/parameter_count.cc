#include "sim/workload/parameter_count.h"

namespace trainsim::workload {

LayerShape layer_shape_of(const config::Scenario& sc) {
    LayerShape x;
    x.seq = sc.model.seq_length;
    x.micro_batch = sc.training.micro_batch_size;
    x.hidden = sc.model.hidden_size;
    x.heads = sc.model.num_attention_heads;
    x.ffn = sc.model.ffn_hidden_size;
    x.vocab = sc.model.padded_vocab_size;
    x.tp = sc.parallelism.tensor_model_parallel_size;
    x.sequence_parallel = sc.parallelism.sequence_parallel;
    x.fp8 = sc.training.fp8();
    return x;
}

std::int64_t layer_parameters_per_rank(const LayerShape& x) {
    const std::int64_t h = x.hidden;
    const std::int64_t f = x.ffn;
    const std::int64_t t = x.tp;
    const std::int64_t qkv = (3 * h * h + 3 * h) / t;
    const std::int64_t proj = h * h / t + h;
    const std::int64_t fc1 = (h * f + f) / t;
    const std::int64_t fc2 = f * h / t + h;
    const std::int64_t layernorms = 2 * 2 * h;
    return qkv + proj + fc1 + fc2 + layernorms;
}

std::int64_t word_embedding_parameters_per_rank(const config::Scenario& sc) {
    return sc.model.padded_vocab_size / sc.parallelism.tensor_model_parallel_size * sc.model.hidden_size;
}

StageParameters stage_parameters(const config::Scenario& sc, std::int64_t pipeline_rank) {
    const std::int64_t p = sc.parallelism.pipeline_model_parallel_size;
    StageParameters out;
    out.transformer = sc.stage_num_layers(pipeline_rank) * layer_parameters_per_rank(layer_shape_of(sc));
    const bool first = pipeline_rank == 0;
    const bool last = pipeline_rank == p - 1;
    if (first) {
        out.embedding += word_embedding_parameters_per_rank(sc) + sc.model.seq_length * sc.model.hidden_size;
    }
    if (last) {
        out.final_layernorm = 2 * sc.model.hidden_size;
        if (!first) {
            // Megatron keeps a copy of the word embedding on the last stage and all-reduces its gradient
            // with the first stage's (the weights are tied).
            out.embedding += word_embedding_parameters_per_rank(sc);
        }
    }
    return out;
}

}  // namespace trainsim::workload
