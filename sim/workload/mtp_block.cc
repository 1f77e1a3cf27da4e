#include "sim/workload/mtp_block.h"

#include <string>
#include <utility>

#include "sim/core/input_error.h"
#include "sim/workload/element_bytes.h"
#include "sim/workload/fsdp_ops.h"
#include "sim/workload/moe_layer.h"
#include "sim/workload/op_list_builder.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_ops.h"
#include "sim/workload/tensor_parallel_linear.h"
#include "sim/workload/transformer_layer.h"

namespace trainsim::workload {
namespace {

using config::RecomputeGranularity;
using cost::CollectiveKind;
using cost::MemoryBoundKind;

// Appends `from` to `to`, its names prefixed "mtp." and its dependencies moved by the ops before it.
void append_ops(OpList& to, OpList from, bool recompute = false, bool keep_saved = true) {
    const auto offset = static_cast<std::int32_t>(to.size());
    for (Op& op : from) {
        op.name = "mtp." + op.name;
        for (std::int32_t& a : op.after) {
            a += offset;
        }
        if (op.host_waits_for >= 0) {
            op.host_waits_for += offset;
        }
        if (recompute) {
            op.is_recompute = true;
        }
        if (!keep_saved) {
            op.saved_bytes = Bytes{0};
        }
        to.push_back(std::move(op));
    }
}

RecomputeGranularity layer_policy(MtpRecompute r) {
    return r == MtpRecompute::Selective ? RecomputeGranularity::Selective : RecomputeGranularity::None;
}

// enorm, hnorm, the concatenation and eh_proj (_concat_embeddings). `keep` says whether the ops keep their
// tensors for the backward (not inside the checkpoint; there the checkpoint keeps its two inputs).
OpList projection_forward(const LayerShape& x, bool keep) {
    OpListBuilder ops(OpRole::Layer);
    const std::int64_t E = x.sequence_sharded_elements();
    const std::int64_t tokens = x.tokens();
    const auto saved = [keep](std::int64_t bytes) { return Bytes{keep ? bytes : 0}; };
    const char* norm = x.rmsnorm ? "rmsnorm" : "ln";
    // enorm keeps its input (the embedding's output). hnorm's input is the decoder's output after its
    // final norm, which the main output layer's logits GEMM keeps too (one tensor): nothing more here.
    ops.memory(std::string("enorm.") + norm, MemoryBoundKind::LayerNorm, 2 * E * kActivationBytes,
               saved(E * kActivationBytes));
    ops.memory(std::string("hnorm.") + norm, MemoryBoundKind::LayerNorm, 2 * E * kActivationBytes);
    // torch.cat((e, h), -1): read both halves, write the 2h-wide tensor eh_proj keeps (its sequence shard
    // with SP, which the backward gathers again).
    ops.memory("concat", MemoryBoundKind::Generic, 4 * E * kActivationBytes);
    if (x.tp > 1 && x.sequence_parallel) {
        ops.sync_collective("eh_proj.input_allgather", CollectiveKind::AllGather,
                            tokens * 2 * x.hidden * kActivationBytes);
    }
    ops.gemm("eh_proj", {tokens, x.hidden / x.tp, 2 * x.hidden}, saved(2 * E * kActivationBytes));
    if (x.tp > 1) {
        // gather_output=False, then gather_from_tensor_model_parallel_region: an all-gather of the
        // h/t-wide outputs and their concatenation along the last dimension (read and write s·b·h);
        // with SP the result is split along the sequence again (a view, no copy).
        ops.sync_collective("eh_proj.output_allgather", CollectiveKind::AllGather,
                            tokens * x.hidden * kActivationBytes);
        ops.memory("eh_proj.output_concat", MemoryBoundKind::Generic,
                   2 * tokens * x.hidden * kActivationBytes);
    }
    return ops.take();
}

OpList projection_backward(const LayerShape& x) {
    OpListBuilder ops(OpRole::Layer);
    const std::int64_t E = x.sequence_sharded_elements();
    const std::int64_t tokens = x.tokens();
    if (x.tp > 1) {
        if (x.sequence_parallel) {
            // The backward of the scatter to the sequence-parallel region gathers the sequence.
            ops.sync_collective("eh_proj.output_grad_allgather", CollectiveKind::AllGather,
                                tokens * x.hidden * kActivationBytes);
        }
        // The backward of the last-dimension gather keeps this rank's h/t columns (a strided copy).
        ops.memory("eh_proj.output_grad_split", MemoryBoundKind::Generic,
                   2 * tokens * (x.hidden / x.tp) * kActivationBytes);
    }
    column_parallel_backward(ops, x, tokens, 2 * x.hidden, x.hidden / x.tp, "eh_proj");
    // The concatenation's backward hands each norm a view of its half; the hnorm gradient is added to
    // the one the main output layer sends the decoder's output (read two, write one).
    const char* norm = x.rmsnorm ? "rmsnorm" : "ln";
    ops.memory(std::string("enorm.") + norm + ".bwd", MemoryBoundKind::LayerNorm, 3 * E * kActivationBytes);
    ops.memory(std::string("hnorm.") + norm + ".bwd", MemoryBoundKind::LayerNorm, 3 * E * kActivationBytes);
    ops.memory("hidden_grad_accumulate", MemoryBoundKind::Generic, 3 * E * kActivationBytes);
    return ops.take();
}

// The acceptance count (no gradient): the max over this rank's vocabulary shard of the logits, and with
// t > 1 all-gathers of the t shards' maxima (bf16) and argmax indices (int64).
OpList acceptance_count(const LayerShape& x) {
    OpListBuilder ops(OpRole::OutputLayer);
    constexpr std::int64_t kIndexBytes = 8;
    ops.memory("loss.acceptance_argmax", MemoryBoundKind::Generic,
               x.tokens() * (x.vocab / x.tp) * kActivationBytes);
    if (x.tp > 1) {
        ops.sync_collective("loss.acceptance_max_allgather", CollectiveKind::AllGather,
                            x.tp * x.tokens() * kActivationBytes);
        ops.sync_collective("loss.acceptance_argmax_allgather", CollectiveKind::AllGather,
                            x.tp * x.tokens() * kIndexBytes);
    }
    return ops.take();
}

}  // namespace

MtpRecompute mtp_recompute(const config::Scenario& sc) {
    switch (sc.training.recompute_granularity) {
    case RecomputeGranularity::Selective:
        return MtpRecompute::Selective;
    case RecomputeGranularity::Full:
        return sc.training.recompute_method == config::RecomputeMethod::Block ? MtpRecompute::None
                                                                              : MtpRecompute::Checkpointed;
    default:
        return MtpRecompute::None;
    }
}

void refuse_unmodelled_mtp(const config::Scenario& sc) {
    if (sc.model.mtp_num_layers == 0) {
        return;
    }
    const auto refuse = [](const std::string& key, const std::string& what) {
        throw InputError(key + ": " + what + " is not simulated yet with model.mtp_num_layers > 0");
    };
    if (sc.parallelism.context_parallel_size > 1) {
        refuse("parallelism.context_parallel_size", "context parallelism (roll_tensor's exchange)");
    }
    if (sc.training.fp8()) {
        refuse("training.fp8_format", "FP8");
    }
    if (sc.parallelism.tp_comm_overlap) {
        refuse("parallelism.tp_comm_overlap", "TE userbuffers overlap");
    }
    if (shards_parameters(sc)) {
        refuse("parallelism.data_parallel_sharding_strategy", "FSDP");
    }
    if (sc.training.recompute_granularity == RecomputeGranularity::Overlapped) {
        refuse("training.recompute_granularity", "the overlapped recompute scheduler");
    }
    if (mtp_recompute(sc) == MtpRecompute::Checkpointed &&
        sc.training.recompute_num_layers.value_or(1) != 1) {
        throw InputError("training.recompute_num_layers: must be 1 with recompute_method=uniform and "
                         "model.mtp_num_layers > 0 (Megatron-Core's MTP recompute asserts it)");
    }
}

LayerShape mtp_layer_shape(const config::Scenario& sc) {
    return layer_shape_of(sc, sc.model.num_layers - 1);
}

OpList mtp_forward(const LayerShape& x, MtpRecompute recompute) {
    OpList out;
    append_ops(out, embedding_forward(x));
    const bool checkpointed = recompute == MtpRecompute::Checkpointed;
    // Under the checkpoint (tensor_parallel.checkpoint of _proj_and_transformer_layer) nothing from the
    // projection to the final norm is kept but the checkpoint's two inputs, the embedding and the
    // decoder's hidden states: the latter is the main logits' input already, so the embedding's s·b·h/t.
    OpList projection = projection_forward(x, !checkpointed);
    if (checkpointed) {
        projection.front().saved_bytes = Bytes{x.sequence_sharded_elements() * kActivationBytes};
    }
    append_ops(out, std::move(projection));
    append_ops(out, checkpointed ? layer_forward_unsaved(x) : layer_forward(x, layer_policy(recompute)));
    // The final norm (first op of the output layer's list) runs inside the checkpoint too.
    OpList output = output_forward(x);
    if (checkpointed) {
        output.front().saved_bytes = Bytes{0};
    }
    append_ops(out, std::move(output));
    append_ops(out, acceptance_count(x));
    return out;
}

OpList mtp_backward(const LayerShape& x, MtpRecompute recompute) {
    OpList out;
    append_ops(out, output_backward(x));
    if (recompute == MtpRecompute::Checkpointed) {
        // The checkpoint's backward starts when the logits' input gradient reaches the final norm's
        // output: it runs the projection, the layer and the final norm forward again, then their backward.
        Op final_norm_backward = std::move(out.back());
        out.pop_back();
        OpList projection = projection_forward(x, true);
        projection.front().saved_bytes = Bytes{0};  // enorm's input: the checkpoint holds it
        append_ops(out, std::move(projection), /*recompute=*/true);
        append_ops(out, layer_full_recompute(x, /*input_is_checkpoint=*/false), /*recompute=*/true);
        OpList norm = output_forward(x);
        norm.resize(1);  // the final norm alone
        append_ops(out, std::move(norm), /*recompute=*/true);
        out.push_back(std::move(final_norm_backward));  // its `after` points before the recompute
    }
    append_ops(out, layer_backward(x, layer_policy(recompute)));
    append_ops(out, projection_backward(x));
    // Not the dense gradient's bytes: the depth's tensors are one key, freed only when its backward ends,
    // so the gradient would count on top of all of them, where autograd has freed most by then.
    append_ops(out, embedding_backward(x), /*recompute=*/false, /*keep_saved=*/false);
    return out;
}

std::int64_t mtp_depth_parameters_per_rank(const LayerShape& x) {
    // enorm, hnorm and the final norm replicated; eh_proj split by its output columns.
    return 3 * norm_parameters(x) + 2 * x.hidden * (x.hidden / x.tp) + layer_parameters_per_rank(x);
}

std::int64_t mtp_depth_expert_parameters_per_rank(const LayerShape& x) {
    return x.moe() ? moe_expert_parameters_per_rank(x) : 0;
}

MtpStageParameters mtp_stage_parameters(const config::Scenario& sc, std::int64_t pipeline_rank) {
    MtpStageParameters out;
    if (sc.model.mtp_num_layers == 0 || !sc.holds_last_stage(pipeline_rank)) {
        return out;
    }
    const LayerShape x = mtp_layer_shape(sc);
    out.depths = sc.model.mtp_num_layers * mtp_depth_parameters_per_rank(x);
    out.expert = sc.model.mtp_num_layers * mtp_depth_expert_parameters_per_rank(x);
    return out;
}

std::int64_t mtp_embedding_copy_parameters(const config::Scenario& sc, std::int64_t pipeline_rank) {
    if (sc.model.mtp_num_layers == 0 || !sc.holds_last_stage(pipeline_rank) ||
        sc.holds_first_stage(pipeline_rank)) {
        return 0;
    }
    return word_embedding_parameters_per_rank(sc) + position_embedding_parameters(sc);
}

}  // namespace trainsim::workload
