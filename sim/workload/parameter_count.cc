#include "sim/workload/parameter_count.h"

#include <string>

#include "sim/core/input_error.h"
#include "sim/workload/fp32_embedding_gradients.h"
#include "sim/workload/mla_attention.h"
#include "sim/workload/moe_layer.h"
#include "sim/workload/mtp_block.h"
#include "sim/workload/stage_layers.h"

namespace trainsim::workload {
namespace {

void refuse_unmodelled_moe(const config::Scenario& sc) {
    const auto refuse = [](const std::string& key, const std::string& what) {
        throw InputError(key + ": " + what + " is not simulated yet");
    };
    if (sc.model.add_bias_linear) {
        refuse("model.add_bias_linear", "experts with biases");
    }
    if (sc.parallelism.tp_comm_overlap) {
        refuse("parallelism.tp_comm_overlap", "TE userbuffers overlap with mixture of experts");
    }
    if (sc.training.overlap_grad_reduce && sc.parallelism.data_parallel_size_with_cp() > 1) {
        refuse("training.overlap_grad_reduce", "bucketed gradient reduction with experts");
    }
    if (sc.parallelism.data_parallel_sharding_strategy != config::DataParallelSharding::NoShard &&
        sc.parallelism.data_parallel_sharding_strategy != config::DataParallelSharding::Optim) {
        refuse("parallelism.data_parallel_sharding_strategy", "FSDP with experts");
    }
}

// mla_attention.h models MLA under TP (with or without SP), BF16 or FP8, flash/fused or unfused attention.
void refuse_unmodelled_mla(const config::Scenario& sc) {
    const auto refuse = [](const std::string& key, const std::string& what) {
        throw InputError(key + ": " + what +
                         " is not simulated yet (multi-latent attention is modelled with " +
                         "tensor and sequence parallelism, without TE userbuffers overlap)");
    };
    if (sc.parallelism.context_parallel_size > 1) {
        refuse("parallelism.context_parallel_size", "context parallelism with multi-latent attention");
    }
    if (sc.parallelism.tp_comm_overlap) {
        refuse("parallelism.tp_comm_overlap", "TE userbuffers overlap with multi-latent attention");
    }
}

}  // namespace

LayerShape layer_shape_of(const config::Scenario& sc) {
    // The layer op list, its memory and its pricing describe the dense GQA layer, MLA (mla_attention.h)
    // and the MoE MLP of moe_layer.h: refuse, rather than simulate as something else, what they do not model.
    // Parameter counts and model FLOPs (model_parameters.h, model_flops.h) are exact for all of them.
    if (sc.model.moe) {
        refuse_unmodelled_moe(sc);
    }
    if (sc.model.mla) {
        refuse_unmodelled_mla(sc);
    }
    refuse_unmodelled_mtp(sc);
    LayerShape x;
    // Every op but attention's key/value exchange sees only this rank's share of the sequence.
    x.seq = sc.model.seq_length / sc.parallelism.context_parallel_size;
    x.cp = sc.parallelism.context_parallel_size;
    x.cp_comm = sc.parallelism.cp_comm_type;
    x.micro_batch = sc.training.micro_batch_size;
    x.hidden = sc.model.hidden_size;
    x.heads = sc.model.num_attention_heads;
    x.ffn = sc.model.ffn_hidden_size;
    x.vocab = sc.model.padded_vocab_size;
    x.tp = sc.parallelism.tensor_model_parallel_size;
    x.sequence_parallel = sc.parallelism.sequence_parallel;
    x.tp_comm_overlap = sc.parallelism.tp_comm_overlap;
    x.recompute_modules = sc.training.selective_modules();
    x.fp8 = sc.training.fp8();
    x.fp8_split_accumulator = sc.training.fp8_split_accumulator;
    x.query_groups = sc.model.query_groups();
    x.kv_channels = sc.model.head_dim();
    x.swiglu = sc.model.swiglu;
    x.rmsnorm = sc.model.normalization == config::Normalization::RMSNorm;
    x.rope = sc.model.position_embedding_type == config::PositionEmbeddingType::Rope;
    x.bias = sc.model.add_bias_linear;
    x.flash_attention = sc.training.attention_backend != config::AttentionBackend::Unfused;
    x.cross_entropy_loss_fusion = sc.training.cross_entropy_loss_fusion;
    x.embedding_main_grad_bytes = embedding_gradient_bytes(sc);
    x.mla = sc.model.mla;
    if (sc.model.moe && sc.model.moe->num_moe_layers() > 0) {
        x.experts = sc.model.moe->num_experts;
        x.topk = sc.model.moe->router_topk;
        x.moe_ffn = sc.model.moe->ffn_hidden_size;
        x.ep = sc.parallelism.expert_model_parallel_size;
        x.etp = sc.parallelism.expert_tensor_parallel();
        x.load_skew = sc.model.moe->load_skew;
        x.capacity_factor = sc.model.moe->expert_capacity_factor.value_or(0.0);
        x.pad_to_capacity = sc.model.moe->pad_expert_input_to_capacity;
        x.shared_ffn = sc.model.moe->shared_expert_intermediate_size;
        x.shared_expert_overlap = x.shared_ffn > 0 && sc.model.moe->shared_expert_overlap;
        x.moe_dispatcher = sc.model.moe->token_dispatcher;
    }
    return x;
}

std::int64_t norm_parameters(const LayerShape& x) {
    return x.rmsnorm ? x.hidden : 2 * x.hidden;  // RMSNorm has a weight; LayerNorm a weight and a bias
}

std::int64_t layer_parameters_per_rank(const LayerShape& x) {
    const std::int64_t h = x.hidden;
    const std::int64_t t = x.tp;
    const std::int64_t bias = x.bias ? 1 : 0;
    // Column-parallel outputs are split over the t ranks (t divides heads, groups and ffn); the
    // row-parallel biases are replicated.
    const std::int64_t qkv_out = (x.heads + 2 * x.groups()) * x.head_dim() / t;
    const std::int64_t attn_out = x.local_heads() * x.head_dim();
    const std::int64_t fc1_out = x.fc1_local_width();
    const std::int64_t qkv = (h + bias) * qkv_out;
    const std::int64_t proj = attn_out * h + bias * h;
    const std::int64_t attention = x.mla ? mla_attention_parameters_per_rank(x) : qkv + proj;
    const std::int64_t fc1 = (h + bias) * fc1_out;
    const std::int64_t fc2 = x.ffn / t * h + bias * h;
    const std::int64_t mlp = x.moe() ? moe_mlp_parameters_per_rank(x) : fc1 + fc2;
    return attention + mlp + 2 * norm_parameters(x);
}

std::int64_t word_embedding_parameters_per_rank(const config::Scenario& sc) {
    return sc.model.padded_vocab_size / sc.parallelism.tensor_model_parallel_size * sc.model.hidden_size;
}

std::int64_t position_embedding_parameters(const config::Scenario& sc) {
    return sc.model.position_embedding_type == config::PositionEmbeddingType::LearnedAbsolute
               ? sc.model.seq_length * sc.model.hidden_size
               : 0;  // RoPE has no weights
}

bool output_layer_has_own_weights(const config::Scenario& sc, std::int64_t pipeline_rank) {
    if (!sc.holds_last_stage(pipeline_rank)) {
        return false;
    }
    // Untied: the output layer always has its own weights. Tied: Megatron keeps a copy of the word
    // embedding on the last stage when it is not also the first (in a V-shaped placement rank 0 holds
    // both, in DualPipe ranks 0 and p − 1 both do), and all-reduces its gradient with the first stage's.
    return sc.model.untie_embeddings_and_output_weights || !sc.holds_first_stage(pipeline_rank);
}

bool holds_tied_embedding_copy(const config::Scenario& sc, std::int64_t pipeline_rank) {
    const bool split_ends = !sc.holds_first_stage(sc.last_stage_rank());
    // MTP's embedding copy on the last stage is reduced the same way, tied or not (mtp_block.h).
    const bool shared = !sc.model.untie_embeddings_and_output_weights || sc.model.mtp_num_layers > 0;
    return shared && split_ends && (pipeline_rank == 0 || pipeline_rank == sc.last_stage_rank());
}

LayerShape layer_shape_of(const config::Scenario& sc, std::int64_t layer) {
    const LayerShape x = layer_shape_of(sc);
    return is_moe_layer(sc, layer) ? x : x.with_dense_mlp();
}

StageParameters stage_parameters(const config::Scenario& sc, std::int64_t pipeline_rank) {
    const LayerShape moe_shape = layer_shape_of(sc);
    const LayerShape dense_shape = moe_shape.with_dense_mlp();
    StageParameters out;
    // Each layer by its kind: with moe_layer_freq a stage may hold dense layers, MoE layers or both.
    for (const std::int64_t layer : stage_layers(sc, pipeline_rank)) {
        const bool moe = moe_shape.moe() && is_moe_layer(sc, layer);
        out.transformer += layer_parameters_per_rank(moe ? moe_shape : dense_shape);
        if (moe) {
            out.expert += moe_expert_parameters_per_rank(moe_shape);
        }
    }
    const LayerShape& shape = moe_shape;
    if (sc.holds_first_stage(pipeline_rank)) {
        out.embedding += word_embedding_parameters_per_rank(sc) + position_embedding_parameters(sc);
    }
    if (sc.holds_last_stage(pipeline_rank)) {
        out.final_layernorm = norm_parameters(shape);
    }
    if (output_layer_has_own_weights(sc, pipeline_rank)) {
        out.embedding += word_embedding_parameters_per_rank(sc);
    }
    const MtpStageParameters mtp = mtp_stage_parameters(sc, pipeline_rank);
    out.mtp = mtp.depths;
    out.expert += mtp.expert;
    out.embedding += mtp_embedding_copy_parameters(sc, pipeline_rank);
    return out;
}

}  // namespace trainsim::workload
