#include "sim/config/scenario_schema.h"

#include <algorithm>

#include "sim/core/did_you_mean.h"
#include "sim/core/input_error.h"

namespace trainsim::config {

namespace {

const SectionSchema* find_section(std::string_view name) {
    const auto& sections = scenario_sections();
    const auto it = std::find_if(sections.begin(), sections.end(),
                                 [&](const SectionSchema& s) { return s.name == name; });
    return it == sections.end() ? nullptr : &*it;
}

bool contains(const std::vector<std::string>& keys, std::string_view key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// Every valid path: top-level keys and section.key.
const std::vector<std::string>& all_paths() {
    static const std::vector<std::string> paths = [] {
        std::vector<std::string> result = top_level_keys();
        for (const auto& section : scenario_sections()) {
            for (const auto& key : section.keys) {
                result.push_back(join_path(section.name, key));
            }
        }
        return result;
    }();
    return paths;
}

}  // namespace

const std::vector<SectionSchema>& scenario_sections() {
    static const std::vector<SectionSchema> sections{
        {"model",
         {"preset",
          "num_layers",
          "hidden_size",
          "num_attention_heads",
          "ffn_hidden_size",
          "seq_length",
          "padded_vocab_size",
          "num_query_groups",
          "kv_channels",
          "swiglu",
          "normalization",
          "position_embedding_type",
          "untie_embeddings_and_output_weights",
          "add_bias_linear",
          "qk_layernorm",
          "num_experts",
          "moe_router_topk",
          "moe_ffn_hidden_size",
          "moe_shared_expert_intermediate_size",
          "moe_layer_freq",
          "moe_token_dispatcher_type",
          "moe_expert_capacity_factor",
          "moe_pad_expert_input_to_capacity",
          "moe_grouped_gemm",
          "moe_shared_expert_overlap",
          "moe_load_skew",
          "multi_latent_attention",
          "q_lora_rank",
          "kv_lora_rank",
          "qk_head_dim",
          "qk_pos_emb_head_dim",
          "v_head_dim",
          "mtp_num_layers"}},
        {"parallelism",
         {"tensor_model_parallel_size",
          "pipeline_model_parallel_size",
          "data_parallel_size",
          "context_parallel_size",
          "cp_comm_type",
          "virtual_pipeline_model_parallel_size",
          "sequence_parallel",
          "tp_comm_overlap",
          "microbatch_group_size_per_vp_stage",
          "scatter_gather_tensors_in_pipeline",
          "layers_per_pipeline_stage",
          "overlap_p2p_comm",
          "batch_p2p_sync",
          "dualpipe_overlapped_forward_backward",
          "overlap_moe_expert_parallel_comm",
          "data_parallel_sharding_strategy",
          "decoder_first_pipeline_num_layers",
          "decoder_last_pipeline_num_layers",
          "account_for_embedding_in_pipeline_split",
          "account_for_loss_in_pipeline_split",
          "pipeline_model_parallel_layout",
          "expert_model_parallel_size",
          "expert_tensor_parallel_size"}},
        {"training",
         {"micro_batch_size",
          "global_batch_size",
          "recompute_granularity",
          "recompute_method",
          "recompute_num_layers",
          "recompute_modules",
          "num_microbatches_with_partial_activation_checkpoints",
          "recompute_scheduler",
          "recompute_memory_budget",
          "attention_backend",
          "use_distributed_optimizer",
          "overlap_grad_reduce",
          "ddp_bucket_size",
          "overlap_param_gather",
          "deallocate_pipeline_outputs",
          "fp8_format",
          "fp8_recipe",
          "fp8_split_accumulator",
          "cross_entropy_loss_fusion",
          "optimizer_param_copy",
          "zero_grad_buffer",
          "main_grads_dtype",
          "fp32_embedding_grads",
          "exp_avg_dtype",
          "exp_avg_sq_dtype",
          "store_params",
          "store_param_remainders",
          "tp_replicated_grad_allreduce"}},
        {"hardware",
         {"profile", "gpus_per_node", "network_model", "collective_contention", "compute_contention",
          "topology"}},
        {"hardware.topology",
         {"preset", "kind", "nodes_per_leaf", "oversubscription", "nodes_per_pod", "pod_oversubscription",
          "nvls", "sharp"}},
        {"variability", {"mode", "seed", "kernel_jitter"}},
    };
    return sections;
}

const std::vector<std::string>& top_level_keys() {
    static const std::vector<std::string> keys{"name",     "model",    "parallelism", "training",
                                               "schedule", "hardware", "variability"};
    return keys;
}

std::string suggest_path(std::string_view path) {
    const std::size_t dot = path.rfind('.');
    if (dot != std::string_view::npos) {
        // A known section with a misspelled key: compare within the section first.
        if (const SectionSchema* section = find_section(path.substr(0, dot))) {
            const std::string_view key = path.substr(dot + 1);
            const std::string match = closest_match(key, section->keys);
            if (!match.empty()) {
                return join_path(section->name, match);
            }
            // An abbreviation such as "hidden" for "hidden_size", when only one key starts with it.
            const auto abbreviates = [&](const std::string& k) { return !key.empty() && k.starts_with(key); };
            const auto& keys = section->keys;
            if (std::count_if(keys.begin(), keys.end(), abbreviates) == 1) {
                return join_path(section->name, *std::find_if(keys.begin(), keys.end(), abbreviates));
            }
        }
    }
    // A misspelled section or top-level key.
    std::string match = closest_match(path, all_paths());
    if (!match.empty()) {
        return match;
    }
    // A right key in the wrong place, e.g. "num_layers" at the top level or "model.micro_batch_size".
    const std::string_view last = dot == std::string_view::npos ? path : path.substr(path.rfind('.') + 1);
    for (const auto& section : scenario_sections()) {
        if (contains(section.keys, last)) {
            return join_path(section.name, last);
        }
    }
    return "";
}

std::string unknown_key_message(std::string_view path) {
    const std::string shown = printable_key(path);
    const std::string suggestion = suggest_path(path);
    if (!suggestion.empty()) {
        return shown + ": unknown key (did you mean " + suggestion + "?)";
    }
    const std::size_t dot = path.rfind('.');
    const SectionSchema* section =
        dot == std::string_view::npos ? nullptr : find_section(path.substr(0, dot));
    const std::vector<std::string>& allowed = section != nullptr ? section->keys : top_level_keys();
    return shown + ": unknown key (expected one of: " + comma_list(allowed) + ")";
}

bool is_known_path(std::string_view path) {
    return contains(all_paths(), path);
}

void check_known_keys(const Json& root) {
    for (const auto& [key, value] : root.items()) {
        if (key == kSchemaReferenceKey) {
            if (!value.is_string()) {
                throw InputError(std::string(kSchemaReferenceKey) +
                                 ": expected a string (the JSON Schema the file follows, for editors), got " +
                                 describe_json(value));
            }
            continue;
        }
        if (!contains(top_level_keys(), key)) {
            throw InputError(unknown_key_message(key));
        }
    }
    for (const auto& section : scenario_sections()) {
        // A dotted section ("hardware.topology") lies inside its parent's object.
        const Json* object = &root;
        std::string_view rest = section.name;
        while (object != nullptr && !rest.empty()) {
            const std::size_t dot = std::min(rest.find('.'), rest.size());
            const auto it = object->find(std::string(rest.substr(0, dot)));
            object = it == object->end() || !it->is_object() ? nullptr : &*it;
            rest = dot == rest.size() ? std::string_view{} : rest.substr(dot + 1);
        }
        if (object == nullptr) {
            continue;
        }
        for (const auto& [key, value] : object->items()) {
            if (!contains(section.keys, key)) {
                throw InputError(unknown_key_message(join_path(section.name, key)));
            }
        }
    }
}

}  // namespace trainsim::config
