#include "sim/config/scenario_reader.h"

#include "sim/config/mla_reader.h"
#include "sim/config/model_presets.h"
#include "sim/config/moe_reader.h"
#include "sim/config/section_reader.h"
#include "sim/config/topology_presets.h"
#include "sim/core/did_you_mean.h"
#include "sim/core/input_error.h"

namespace trainsim::config {

namespace {

const ModelPreset& lookup_preset(const SectionReader& model, const std::string& name) {
    if (const ModelPreset* preset = find_model_preset(name)) {
        return *preset;
    }
    const std::vector<std::string> names = model_preset_names();
    const std::string match = closest_match(name, names);
    throw InputError(model.path("preset") + ": unknown preset " + describe_json(Json(name)) +
                     (match.empty() ? "" : " (did you mean \"" + match + "\"?)") +
                     "; known presets: " + comma_list(names));
}

// `{"preset": NAME}` gives every size; explicit keys beside it override the preset's values.
ModelConfig read_model(const Json& document) {
    const SectionReader r(document, "model");
    ModelConfig m;
    std::optional<std::int64_t> preset_ffn;
    const ModelPreset* preset = nullptr;
    if (const auto preset_name = r.string("preset")) {
        const ModelPreset& p = lookup_preset(r, *preset_name);
        preset = &p;
        m.preset = *preset_name;
        m.num_layers = r.positive_integer("num_layers").value_or(p.num_layers);
        m.hidden_size = r.positive_integer("hidden_size").value_or(p.hidden_size);
        m.num_attention_heads = r.positive_integer("num_attention_heads").value_or(p.num_attention_heads);
        m.seq_length = r.positive_integer("seq_length").value_or(p.seq_length);
        m.padded_vocab_size = r.positive_integer("padded_vocab_size").value_or(p.padded_vocab_size);
        preset_ffn = p.ffn_hidden_size;
    } else {
        constexpr std::string_view hint = " (give the model sizes, or model.preset)";
        m.num_layers = r.required_positive_integer("num_layers", hint);
        m.hidden_size = r.required_positive_integer("hidden_size", hint);
        m.num_attention_heads = r.required_positive_integer("num_attention_heads", hint);
        m.seq_length = r.required_positive_integer("seq_length", hint);
        m.padded_vocab_size = r.required_positive_integer("padded_vocab_size", hint);
    }
    m.num_query_groups = r.nullable_positive_integer("num_query_groups");
    m.kv_channels = r.nullable_positive_integer("kv_channels");
    m.swiglu = r.boolean("swiglu", preset != nullptr && preset->swiglu);
    m.normalization = r.enumeration("normalization", kNormalizationNames, /*nullable=*/false)
                          .value_or(preset != nullptr && preset->rmsnorm ? Normalization::RMSNorm
                                                                         : Normalization::LayerNorm);
    m.position_embedding_type =
        r.enumeration("position_embedding_type", kPositionEmbeddingTypeNames, /*nullable=*/false)
            .value_or(preset != nullptr && preset->rope ? PositionEmbeddingType::Rope
                                                        : PositionEmbeddingType::LearnedAbsolute);
    m.untie_embeddings_and_output_weights =
        r.boolean("untie_embeddings_and_output_weights",
                  preset != nullptr && preset->untie_embeddings_and_output_weights);
    m.add_bias_linear = r.boolean("add_bias_linear", preset == nullptr || preset->add_bias_linear);
    if (!r.has("num_query_groups") && preset != nullptr) {
        m.num_query_groups = preset->num_query_groups;
    }
    // 4h unless given (or fixed by the preset): derived from the final hidden size, so that overriding
    // a preset's hidden_size scales its MLP with it. With SwiGLU, Megatron's arguments.py shrinks the
    // default to int(4h·2/3 / 64)·64 so that the two up-projections hold about as many weights as 4h.
    const std::int64_t default_ffn = m.swiglu ? (4 * m.hidden_size * 2 / 3) / 64 * 64 : 4 * m.hidden_size;
    m.ffn_hidden_size = r.positive_integer("ffn_hidden_size").value_or(preset_ffn.value_or(default_ffn));
    if (!r.has("kv_channels") && preset != nullptr) {
        m.kv_channels = preset->kv_channels;
    }
    m.qk_layernorm = r.boolean("qk_layernorm", preset != nullptr && preset->qk_layernorm);
    m.moe = read_moe(r, preset, m);
    m.mla = read_mla(r, preset);
    if (const Json* mtp = r.value("mtp_num_layers"); mtp != nullptr && !mtp->is_null()) {
        // 0 is allowed (Megatron's None): no multi-token prediction.
        if (!mtp->is_number_integer() || mtp->get<std::int64_t>() < 0 ||
            mtp->get<std::int64_t>() > kMaxScenarioSize) {
            throw InputError(r.path("mtp_num_layers") + ": expected a non-negative integer, got " +
                             describe_json(*mtp));
        }
        m.mtp_num_layers = mtp->get<std::int64_t>();
    } else if (preset != nullptr) {
        m.mtp_num_layers = preset->mtp_num_layers;
    }
    return m;
}

ParallelConfig read_parallelism(const Json& document) {
    const SectionReader r(document, "parallelism");
    ParallelConfig p;
    p.tensor_model_parallel_size = r.required_positive_integer("tensor_model_parallel_size");
    p.pipeline_model_parallel_size = r.required_positive_integer("pipeline_model_parallel_size");
    p.data_parallel_size = r.positive_integer("data_parallel_size").value_or(1);
    p.context_parallel_size = r.positive_integer("context_parallel_size").value_or(1);
    p.cp_comm_type =
        r.enumeration("cp_comm_type", kCpCommTypeNames, /*nullable=*/false).value_or(CpCommType::P2p);
    // Megatron's default is None, meaning one chunk per rank.
    p.virtual_pipeline_model_parallel_size =
        r.nullable_positive_integer("virtual_pipeline_model_parallel_size").value_or(1);
    p.sequence_parallel = r.boolean("sequence_parallel", false);
    p.tp_comm_overlap = r.boolean("tp_comm_overlap", false);
    // Megatron's default group is p micro-batches (depth-first interleaving); 0 here means "p".
    p.microbatch_group_size_per_vp_stage = r.nullable_positive_integer("microbatch_group_size_per_vp_stage");
    p.scatter_gather_tensors_in_pipeline = r.boolean("scatter_gather_tensors_in_pipeline", true);
    p.layers_per_pipeline_stage = r.positive_integer_list("layers_per_pipeline_stage");
    p.overlap_p2p_comm = r.boolean("overlap_p2p_comm", ParallelConfig{}.overlap_p2p_comm);
    p.batch_p2p_sync = r.boolean("batch_p2p_sync", ParallelConfig{}.batch_p2p_sync);
    if (r.has("dualpipe_overlapped_forward_backward")) {
        p.dualpipe_overlapped_forward_backward = r.boolean("dualpipe_overlapped_forward_backward", true);
    }
    p.overlap_moe_expert_parallel_comm = r.boolean("overlap_moe_expert_parallel_comm", false);
    p.decoder_first_pipeline_num_layers = r.nullable_positive_integer("decoder_first_pipeline_num_layers");
    p.decoder_last_pipeline_num_layers = r.nullable_positive_integer("decoder_last_pipeline_num_layers");
    p.account_for_embedding_in_pipeline_split = r.boolean("account_for_embedding_in_pipeline_split", false);
    p.account_for_loss_in_pipeline_split = r.boolean("account_for_loss_in_pipeline_split", false);
    if (const Json* layout = r.value("pipeline_model_parallel_layout");
        layout != nullptr && !layout->is_null()) {
        // Megatron derives v from the layout's stage count and refuses a v given beside it that differs.
        p.pipeline_model_parallel_layout = parse_pipeline_layout(*layout);
        const std::int64_t v =
            layout_virtual_size(*p.pipeline_model_parallel_layout, p.pipeline_model_parallel_size);
        if (const Json* given = r.value("virtual_pipeline_model_parallel_size");
            given != nullptr && !given->is_null() && p.virtual_pipeline_model_parallel_size != v) {
            throw InputError("parallelism.virtual_pipeline_model_parallel_size=" +
                             std::to_string(p.virtual_pipeline_model_parallel_size) +
                             " conflicts with parallelism.pipeline_model_parallel_layout, whose " +
                             std::to_string(p.pipeline_model_parallel_layout->stages.size()) +
                             " stages over parallelism.pipeline_model_parallel_size=" +
                             std::to_string(p.pipeline_model_parallel_size) + " give " + std::to_string(v) +
                             " (Megatron)");
        }
        p.virtual_pipeline_model_parallel_size = v;
    }
    p.expert_model_parallel_size = r.positive_integer("expert_model_parallel_size").value_or(1);
    p.expert_tensor_parallel_size = r.nullable_positive_integer("expert_tensor_parallel_size");
    p.data_parallel_sharding_strategy =
        r.enumeration("data_parallel_sharding_strategy", kDataParallelShardingNames, /*nullable=*/false)
            .value_or(DataParallelSharding::NoShard);
    return p;
}

// Megatron-Core's recompute_modules for layers trainsim does not build (gated delta nets, manifold
// hyper-connections) fail with their own reason rather than as misspellings.
void refuse_unmodelled_recompute_modules(const SectionReader& r) {
    const Json* list = r.value("recompute_modules");
    if (list == nullptr || !list->is_array()) {
        return;
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
        const Json& name = (*list)[i];
        for (const char* unmodelled : {"gdn_norm_out", "gdp_in_proj", "gdp_qkv", "mhc"}) {
            if (name.is_string() && name.get_ref<const std::string&>() == unmodelled) {
                throw InputError(
                    r.path("recompute_modules") + "[" + std::to_string(i) + "]: \"" + unmodelled +
                    "\" recomputes part of a Megatron-Core layer trainsim does not model (gated delta "
                    "net, hyper-connections)");
            }
        }
    }
}

RecomputeModules read_recompute_modules(const std::vector<RecomputeModule>& names) {
    RecomputeModules modules = RecomputeModules::none();
    for (const RecomputeModule m : names) {
        modules.insert(m);  // Megatron tests membership: a repeated name is the same module
    }
    return modules;
}

TrainingConfig read_training(const Json& document) {
    const SectionReader r(document, "training");
    TrainingConfig t;
    t.micro_batch_size = r.required_positive_integer("micro_batch_size");
    t.global_batch_size = r.required_positive_integer("global_batch_size");
    t.recompute_granularity =
        r.enumeration("recompute_granularity", kRecomputeGranularityNames, /*nullable=*/true)
            .value_or(RecomputeGranularity::None);
    t.recompute_method = r.enumeration("recompute_method", kRecomputeMethodNames, /*nullable=*/true);
    t.recompute_num_layers = r.nullable_positive_integer("recompute_num_layers");
    refuse_unmodelled_recompute_modules(r);
    if (const auto modules = r.enumeration_list("recompute_modules", kRecomputeModuleNames)) {
        t.recompute_modules = read_recompute_modules(*modules);
    }
    t.recompute_scheduler = r.enumeration("recompute_scheduler", kRecomputeSchedulerNames, /*nullable=*/true)
                                .value_or(RecomputeScheduler::Heuristic);
    t.recompute_memory_budget = r.nullable_positive_integer("recompute_memory_budget");
    t.attention_backend = r.enumeration("attention_backend", kAttentionBackendNames, /*nullable=*/false)
                              .value_or(AttentionBackend::Unfused);
    t.use_distributed_optimizer = r.boolean("use_distributed_optimizer", false);
    t.optimizer_param_copy = r.boolean("optimizer_param_copy", TrainingConfig{}.optimizer_param_copy);
    t.zero_grad_buffer = r.boolean("zero_grad_buffer", TrainingConfig{}.zero_grad_buffer);
    t.main_grads_dtype = r.enumeration("main_grads_dtype", kMainGradsDtypeNames, /*nullable=*/false)
                             .value_or(TrainingConfig{}.main_grads_dtype);
    t.fp32_embedding_grads = r.boolean("fp32_embedding_grads", TrainingConfig{}.fp32_embedding_grads);
    t.exp_avg_dtype = r.enumeration("exp_avg_dtype", kExpAvgDtypeNames, /*nullable=*/false)
                          .value_or(TrainingConfig{}.exp_avg_dtype);
    t.exp_avg_sq_dtype = r.enumeration("exp_avg_sq_dtype", kExpAvgDtypeNames, /*nullable=*/false)
                             .value_or(TrainingConfig{}.exp_avg_sq_dtype);
    t.store_params = r.boolean("store_params", TrainingConfig{}.store_params);
    t.store_param_remainders = r.boolean("store_param_remainders", TrainingConfig{}.store_param_remainders);
    t.tp_replicated_grad_allreduce =
        r.boolean("tp_replicated_grad_allreduce", TrainingConfig{}.tp_replicated_grad_allreduce);
    t.overlap_grad_reduce = r.boolean("overlap_grad_reduce", false);
    t.ddp_bucket_size = r.nullable_positive_integer("ddp_bucket_size");
    t.overlap_param_gather = r.boolean("overlap_param_gather", TrainingConfig{}.overlap_param_gather);
    t.deallocate_pipeline_outputs = r.boolean("deallocate_pipeline_outputs", true);
    t.fp8_format = r.enumeration("fp8_format", kFp8FormatNames, /*nullable=*/true);
    t.fp8_recipe = r.enumeration("fp8_recipe", kFp8RecipeNames, /*nullable=*/true);
    t.fp8_split_accumulator = r.boolean("fp8_split_accumulator", TrainingConfig{}.fp8_split_accumulator);
    t.cross_entropy_loss_fusion = r.nullable_boolean("cross_entropy_loss_fusion");
    t.num_microbatches_with_partial_activation_checkpoints =
        r.nullable_positive_integer("num_microbatches_with_partial_activation_checkpoints");
    // `full` alone means what Korthikanti's "full recompute" baseline does: checkpoint every layer's
    // input, i.e. uniform with one layer per chunk. With `block` the count is the whole point, so it
    // has no default (validate_scenario reports it missing).
    if (t.recompute_granularity == RecomputeGranularity::Full) {
        if (!t.recompute_method) {
            t.recompute_method = RecomputeMethod::Uniform;
        }
        if (*t.recompute_method == RecomputeMethod::Uniform && !t.recompute_num_layers) {
            t.recompute_num_layers = 1;
        }
    }
    return t;
}

// hardware.topology: a preset's values first, then any key the scenario gives on top.
TopologyConfig read_topology(const Json& document) {
    const SectionReader r(document, "hardware.topology");
    TopologyConfig t;
    t.given = document.contains("hardware") && document["hardware"].is_object() &&
              document["hardware"].contains("topology");
    t.preset = r.string("preset");
    if (t.preset) {
        t = topology_preset(*t.preset, r.path("preset"));
        t.given = true;
    }
    t.kind = r.enumeration("kind", kFabricKindNames, /*nullable=*/false).value_or(t.kind);
    t.nodes_per_leaf = r.positive_integer("nodes_per_leaf").value_or(t.nodes_per_leaf);
    t.oversubscription = r.number_at_least("oversubscription", 1.0).value_or(t.oversubscription);
    t.nodes_per_pod = r.positive_integer("nodes_per_pod").value_or(t.nodes_per_pod);
    t.pod_oversubscription = r.number_at_least("pod_oversubscription", 1.0).value_or(t.pod_oversubscription);
    if (r.has("nvls")) {
        t.nvls = r.boolean("nvls", true);
    }
    t.sharp = r.boolean("sharp", t.sharp);
    return t;
}

HardwareConfig read_hardware(const Json& document) {
    const SectionReader r(document, "hardware");
    HardwareConfig h;
    const auto profile = r.string("profile");
    if (!profile) {
        throw InputError(r.path("profile") + ": required key is missing");
    }
    h.profile = *profile;
    h.gpus_per_node = r.positive_integer("gpus_per_node").value_or(8);
    h.network_model = r.enumeration("network_model", kNetworkModelNames, /*nullable=*/false)
                          .value_or(NetworkModel::Analytical);
    h.collective_contention =
        r.enumeration("collective_contention", kCollectiveContentionNames, /*nullable=*/false)
            .value_or(CollectiveContentionModel::FixedShare);
    h.compute_contention = r.enumeration("compute_contention", kComputeContentionNames, /*nullable=*/false)
                               .value_or(ComputeContention::Priced);
    h.topology = read_topology(document);
    return h;
}

VariabilityConfig read_variability(const Json& document) {
    const SectionReader r(document, "variability");
    VariabilityConfig v;
    v.mode = r.enumeration("mode", kVariabilityModeNames, /*nullable=*/false).value_or(VariabilityMode::Off);
    v.seed = r.positive_integer("seed").value_or(1);
    v.kernel_jitter = r.boolean("kernel_jitter", VariabilityConfig{}.kernel_jitter);
    return v;
}

}  // namespace

Scenario read_scenario(const Json& document, const std::string& default_name) {
    const SectionReader top(document, "");
    Scenario s;
    s.name = top.string("name").value_or(default_name);
    s.model = read_model(document);
    s.parallelism = read_parallelism(document);
    s.training = read_training(document);
    s.schedule = top.enumeration("schedule", kScheduleNames, /*nullable=*/false).value_or(ScheduleKind::Auto);
    s.hardware = read_hardware(document);
    s.variability = read_variability(document);
    resolve_pipeline_split(s);
    return s;
}

}  // namespace trainsim::config
