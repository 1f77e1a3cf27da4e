// Megatron-Core's uneven pipeline splits (get_num_layers_to_build in megatron/core/transformer):
// decoder_first/last_pipeline_num_layers fix the first and last stage and divide the rest evenly;
// account_for_embedding/loss_in_pipeline_split count the embedding and the loss as one layer each, so
// that L + 1 (+ 1) divide evenly over p and the first (last) stage builds one transformer layer fewer.
// Both become parallelism.layers_per_pipeline_stage (account_for_* with interleaving, whose first and last
// chunks differ from the rest, and pipeline_model_parallel_layout become layers_per_virtual_stage), which
// the rest of the simulator reads.
#include <string>

#include "sim/config/scenario_reader.h"
#include "sim/core/input_error.h"

namespace trainsim::config {

namespace {

std::string show_parallelism(const char* key, std::int64_t value) {
    return std::string("parallelism.") + key + "=" + std::to_string(value);
}

std::vector<std::int64_t> decoder_first_last_split(const Scenario& s) {
    const ParallelConfig& par = s.parallelism;
    const std::int64_t p = par.pipeline_model_parallel_size;
    std::int64_t remaining = s.model.num_layers;
    std::int64_t stages = p;
    std::string given;
    for (const auto& [key, value] :
         {std::pair{"decoder_first_pipeline_num_layers", par.decoder_first_pipeline_num_layers},
          std::pair{"decoder_last_pipeline_num_layers", par.decoder_last_pipeline_num_layers}}) {
        if (value) {
            remaining -= *value;
            --stages;
            given += (given.empty() ? "" : " and ") + show_parallelism(key, *value);
        }
    }
    if (stages < 1) {
        throw InputError(given + " need parallelism.pipeline_model_parallel_size=" + std::to_string(p) +
                         " to have a stage left for the other layers");
    }
    if (remaining < stages || remaining % stages != 0) {
        throw InputError("model.num_layers=" + std::to_string(s.model.num_layers) + " minus " + given +
                         " leaves " + std::to_string(remaining) +
                         " layers, which must divide evenly among the " + std::to_string(stages) +
                         " other pipeline stages (Megatron)");
    }
    std::vector<std::int64_t> split(static_cast<std::size_t>(p), remaining / stages);
    if (par.decoder_first_pipeline_num_layers) {
        split.front() = *par.decoder_first_pipeline_num_layers;
    }
    if (par.decoder_last_pipeline_num_layers) {
        split.back() = *par.decoder_last_pipeline_num_layers;
    }
    return split;
}

std::vector<std::int64_t> account_for_split(const Scenario& s) {
    const ParallelConfig& par = s.parallelism;
    const std::int64_t p = par.pipeline_model_parallel_size;
    const std::int64_t v = par.virtual_pipeline_model_parallel_size;
    const std::int64_t extra = (par.account_for_embedding_in_pipeline_split ? 1 : 0) +
                               (par.account_for_loss_in_pipeline_split ? 1 : 0);
    const std::int64_t slots = s.model.num_layers + extra;
    const std::string accounted = "model.num_layers=" + std::to_string(s.model.num_layers) + " plus the " +
                                  std::to_string(extra) + " layer(s) accounted for the embedding and loss";
    if (v == 1 && (slots % p != 0 || slots / p < 2)) {
        throw InputError(accounted + " must be divisible by parallelism.pipeline_model_parallel_size=" +
                         std::to_string(p) + " with at least 2 per stage (Megatron)");
    }
    // With interleaving Megatron divides each rank's slots among its chunks and takes the embedding's
    // (loss's) slot from the first (last) virtual stage only, which may leave it no transformer layer.
    if (slots % p != 0 || slots / p % v != 0) {
        throw InputError(accounted + " must be divisible by parallelism.pipeline_model_parallel_size=" +
                         std::to_string(p) + " and each rank's share by " +
                         "parallelism.virtual_pipeline_model_parallel_size=" + std::to_string(v) +
                         " (Megatron)");
    }
    std::vector<std::int64_t> split(static_cast<std::size_t>(p * v), slots / p / v);
    if (par.account_for_embedding_in_pipeline_split) {
        --split.front();
    }
    if (par.account_for_loss_in_pipeline_split) {
        --split.back();
    }
    return split;
}

}  // namespace

void resolve_pipeline_split(Scenario& s) {
    ParallelConfig& par = s.parallelism;
    const bool first_last = par.decoder_first_pipeline_num_layers || par.decoder_last_pipeline_num_layers;
    const bool account =
        par.account_for_embedding_in_pipeline_split || par.account_for_loss_in_pipeline_split;
    if (par.pipeline_model_parallel_layout) {
        if (first_last || account) {
            throw InputError(
                "parallelism.pipeline_model_parallel_layout cannot be combined with "
                "decoder_first/last_pipeline_num_layers or account_for_embedding/loss_in_pipeline_"
                "split (Megatron)");
        }
        if (!par.layers_per_pipeline_stage.empty()) {
            throw InputError("parallelism.layers_per_pipeline_stage cannot be combined with "
                             "parallelism.pipeline_model_parallel_layout");
        }
        par.layers_per_virtual_stage = layout_layers_per_virtual_stage(
            *par.pipeline_model_parallel_layout, par.pipeline_model_parallel_size, s.model.num_layers,
            s.model.mtp_num_layers);
        return;
    }
    if (!first_last && !account) {
        return;
    }
    if (!par.layers_per_pipeline_stage.empty()) {
        throw InputError("parallelism.layers_per_pipeline_stage cannot be combined with Megatron's "
                         "decoder_first/last_pipeline_num_layers or account_for_*_in_pipeline_split");
    }
    if (first_last && account) {
        throw InputError("parallelism.decoder_first/last_pipeline_num_layers cannot be combined with "
                         "account_for_embedding/loss_in_pipeline_split (Megatron)");
    }
    if (par.pipeline_model_parallel_size < 2) {
        throw InputError(
            "Megatron's uneven pipeline split needs parallelism.pipeline_model_parallel_size > 1");
    }
    if (first_last) {
        par.layers_per_pipeline_stage = decoder_first_last_split(s);
    } else if (par.virtual_pipeline_model_parallel_size > 1) {
        par.layers_per_virtual_stage = account_for_split(s);
    } else {
        par.layers_per_pipeline_stage = account_for_split(s);
    }
}

}  // namespace trainsim::config
