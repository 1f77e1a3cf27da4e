// training.fp32_embedding_grads: NeMo's with_fp32_embedding_grads (default true in NeMo r2.0.0rc1) under
// Apex DistributedFusedAdam. NeMo marks the embedding tables `_with_fp32_optimizer`
// (nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py, r2.0.0rc1, lines 559-599): on the
// first stage the word embedding (line 572) and the learned position embedding (line 587), on the last
// stage the tied word embedding's copy (line 597; only with share_embeddings_and_output_weights, so an
// untied output layer keeps main_grads_dtype). NeMo's DistributedFusedAdam.init_params_bucket
// (nemo/core/optim/distributed_adam.py, lines 261-276) puts those parameters in buckets of their own with
// grad_sync_dtype=torch.float32, and Apex allocates each bucket's gradient buffer in its grad_sync_dtype
// (apex/contrib/optimizers/distributed_fused_adam.py, tag 24.07, _init_grad_buffer lines 1099-1130),
// reduce-scatters it in that dtype and adds each parameter's 16-bit gradient into it (_grad_copy,
// `grad_out.add_(grad_in)`, line 1611). NeMo hands those fp32 views to the model as main_grad
// (distributed_adam.py line 494), which the first/last-stage all-reduce of a tied embedding moves
// (megatron_gpt_model.py, allreduce_first_last_embeddings).
#pragma once

#include <cstdint>

#include "sim/config/scenario.h"

namespace trainsim::workload {

/// Whether the embedding tables' gradients are kept in fp32 while the other gradients are not: the key
/// is on and main_grads_dtype is not fp32 already (with fp32 main grads the key changes nothing).
[[nodiscard]] bool fp32_embedding_gradients(const config::Scenario& scenario);

/// Bytes of an embedding table's gradient element: 4 with fp32_embedding_gradients, else
/// optimizer_state.h's gradient_bytes.
[[nodiscard]] std::int64_t embedding_gradient_bytes(const config::Scenario& scenario);

/// The input embedding's tables on one TP rank of the first stage whose gradients are fp32: the word
/// (V/t·h) and learned position (s·h) embeddings. 0 unless fp32_embedding_gradients.
[[nodiscard]] std::int64_t fp32_input_embedding_parameters(const config::Scenario& scenario);

/// The tied word embedding's copy (V/t·h) on one TP rank of pipeline rank `pipeline_rank` when it is a
/// last stage that is not also the first. 0 unless fp32_embedding_gradients.
[[nodiscard]] std::int64_t fp32_tied_copy_parameters(const config::Scenario& scenario,
                                                     std::int64_t pipeline_rank);

/// The parameters on one TP rank of pipeline rank `pipeline_rank` whose gradients are fp32 while the
/// others' are main_grads_dtype: the word (V/t·h) and learned position (s·h) embeddings on the first
/// stage, the tied word embedding's copy on a last stage that is not also the first. 0 unless
/// fp32_embedding_gradients.
[[nodiscard]] std::int64_t fp32_gradient_parameters(const config::Scenario& scenario,
                                                    std::int64_t pipeline_rank);

/// The bytes `parameters` gradients take beyond gradient_bytes each when `fp32` of them are fp32:
/// fp32 × (4 − G).
[[nodiscard]] std::int64_t fp32_gradient_extra_bytes(const config::Scenario& scenario, std::int64_t fp32);

/// The gradient bytes of `parameters` parameters, `fp32` of them fp32 embedding gradients:
/// parameters × gradient_bytes + fp32 × (4 − G). What a gradient buffer holds and a reduction of it moves.
[[nodiscard]] std::int64_t gradient_buffer_bytes(const config::Scenario& scenario, std::int64_t parameters,
                                                 std::int64_t fp32);

}  // namespace trainsim::workload
