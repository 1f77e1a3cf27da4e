// Multi-token prediction (DeepSeek-V3 §2.2) as Megatron-Core's MultiTokenPredictionBlock runs it on the
// last pipeline stage, after the decoder's last layer and its final norm: per depth, the word embedding of
// the tokens shifted by one more position, RMSNorm of that embedding (enorm) and of the previous depth's
// hidden states (hnorm), their concatenation [e; h], the column-parallel projection eh_proj (2h → h), one
// transformer layer of the decoder's last layer's kind (an MoE layer for DeepSeek-V3), the module's own
// final norm, and the shared output layer with its cross-entropy (mtp_loss_scaling_factor scales the loss,
// not the work). Megatron-LM megatron/core/transformer/multi_token_prediction.py.
#pragma once

#include <cstdint>

#include "sim/config/scenario.h"
#include "sim/workload/layer_shape.h"
#include "sim/workload/op.h"

namespace trainsim::workload {

/// How a depth's work is recomputed, as MultiTokenPredictionLayer.forward decides it: with
/// recompute_granularity=full and the uniform method the projection, the transformer layer and the final
/// norm run under one checkpoint (Megatron asserts recompute_num_layers == 1); with the block method
/// Megatron skips MTP recompute (it warns) and the depth keeps everything; with selective the layer
/// recomputes its core attention as the decoder's layers do.
enum class MtpRecompute : std::uint8_t { None, Selective, Checkpointed };

/// The recompute behaviour of the scenario's MTP depths.
[[nodiscard]] MtpRecompute mtp_recompute(const config::Scenario& scenario);

/// Throws InputError (one line naming the key) for what MTP is not simulated with: context parallelism
/// (roll_tensor's exchange between CP ranks), FP8, TE userbuffers overlap, FSDP, the overlapped recompute
/// scheduler, and full/uniform recompute with recompute_num_layers other than 1 (Megatron asserts).
void refuse_unmodelled_mtp(const config::Scenario& scenario);

/// The shape of the MTP depth's transformer layer: Megatron builds it from the decoder's last layer spec,
/// so it is an MoE layer when the model's last layer is one.
[[nodiscard]] LayerShape mtp_layer_shape(const config::Scenario& scenario);

/// One depth's forward on one TP rank for one micro-batch, ops named "mtp.…": the embedding of the
/// shifted tokens, enorm, hnorm, the concatenation, eh_proj, the transformer layer, the final norm, the
/// logits against the shared output weight, the vocab-parallel cross-entropy, and the acceptance count's
/// vocab-parallel argmax over the logits (_compute_mtp_acceptance_counts, no gradient).
[[nodiscard]] OpList mtp_forward(const LayerShape& shape, MtpRecompute recompute);

/// One depth's backward, the forward's mirror; with Checkpointed the projection, the layer and the final
/// norm run forward again (is_recompute) once the logits' gradient reaches the checkpoint.
[[nodiscard]] OpList mtp_backward(const LayerShape& shape, MtpRecompute recompute);

/// One depth's own weights on one TP rank: enorm, hnorm, eh_proj (2h·h/t, no bias), the layer and the
/// final norm. The embedding and the output layer are shared with the main model.
[[nodiscard]] std::int64_t mtp_depth_parameters_per_rank(const LayerShape& shape);

/// The routed experts' share of mtp_depth_parameters_per_rank (reduced over expert data parallelism).
[[nodiscard]] std::int64_t mtp_depth_expert_parameters_per_rank(const LayerShape& shape);

/// Parameters the MTP modules add to pipeline rank `pipeline_rank` (all depths; 0 off the last stage),
/// beside the word-embedding copy that mtp_embedding_copy_parameters counts.
struct MtpStageParameters {
    std::int64_t depths = 0;  // the depths' own weights
    std::int64_t expert = 0;  // of which routed experts
};
[[nodiscard]] MtpStageParameters mtp_stage_parameters(const config::Scenario& scenario,
                                                      std::int64_t pipeline_rank);

/// The word embedding (and learned position embedding) the MTP depths look their tokens up in, when the
/// rank holds the last stage but not the first: Megatron builds a LanguageModelEmbedding on that stage
/// (gpt_model.py, `pre_process or mtp_process`), tied or not (tied, the output layer keeps its own
/// allocated weight beside it), and all-reduces the word-embedding gradient with the first stage's
/// (finalize_model_grads over the embedding group). 0 otherwise.
[[nodiscard]] std::int64_t mtp_embedding_copy_parameters(const config::Scenario& scenario,
                                                         std::int64_t pipeline_rank);

}  // namespace trainsim::workload
