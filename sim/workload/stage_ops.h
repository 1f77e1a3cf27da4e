// The work outside the transformer layers: the embedding on the first stage, the output layer and
// cross-entropy on the last, and the end of the iteration (gradient reduction and optimizer step).
#pragma once

#include "sim/config/scenario.h"
#include "sim/workload/layer_shape.h"
#include "sim/workload/op.h"
#include "sim/workload/optimizer_state.h"

namespace trainsim::workload {

/// Vocab-parallel embedding lookup, its TP reduction (all-reduce, or reduce-scatter with SP), position
/// embedding add and embedding dropout. Saves the dropout mask (Korthikanti §4.3: sbh/t with SP).
[[nodiscard]] OpList embedding_forward(const LayerShape& shape);
[[nodiscard]] OpList embedding_backward(const LayerShape& shape);

/// Final LayerNorm, the logits GEMM against the (tied) word embedding, and vocab-parallel cross-entropy
/// in fp32 with its three small TP all-reduces (max, target logit, sum of exponentials).
[[nodiscard]] OpList output_forward(const LayerShape& shape);
[[nodiscard]] OpList output_backward(const LayerShape& shape);

/// training.optimizer_param_copy: the fp32 → 16-bit parameter copy as its own pass after the step
/// (Megatron's _copy_main_params_to_model_params) reads the fp32 main parameter (4) and writes the
/// 16-bit one (2); the 2-byte write then leaves the fused Adam estimate (optimizer_state.h's
/// adam_step_bytes_per_parameter).
inline constexpr std::int64_t kParamCopyBytesPerParameter = 6;

/// Bytes per gradient element with Megatron's default fp32 gradients (`accumulate_allreduce_grads_in_fp32`
/// with bf16 training), as FSDP reduces them; elsewhere training.main_grads_dtype decides
/// (optimizer_state.h's gradient_bytes).
inline constexpr std::int64_t kGradientBytes = OptimizerStateBytes{}.gradient;

/// End of the iteration on one GPU holding `parameters` parameters: data-parallel gradient all-reduce
/// (or reduce-scatter with the distributed optimizer), DualPipe's sum of its two model copies'
/// gradients (between ranks r and p − 1 − r), the tied-embedding gradient all-reduce between
/// first and last stage (when `embedding_parameters` > 0), the gradient-norm all-reduce over the
/// model-parallel group, the Adam step, and with the distributed optimizer the parameter all-gather
/// (unless training.overlap_param_gather moves it into the next iteration's first forward).
/// With overlap_grad_reduce the data-parallel reduction already ran in buckets during the backward
/// (`gradients_reduced`), and only the rest remains.
/// `expert_parameters` of them are routed experts, reduced and sharded over expert data parallelism.
/// Under FSDP (optim_grads_params) `sharded_layer_parameters` of them were reduce-scattered layer by layer
/// and stay sharded: only the rest is reduced and gathered here.
/// `tp_replicated_parameters` (tp_replicated_gradients.h): the gradients summed over the TP group after
/// the data-parallel reduction (Megatron's finalize_model_grads), flattened into one buffer, all-reduced
/// and copied back; none when 0.
/// `fp32_parameters` (fp32_embedding_gradients.h): the embedding tables among the unsharded ones whose
/// gradients are fp32 (NeMo's with_fp32_embedding_grads): reduced as a collective of their own in fp32,
/// and their share of the rank's shard read at 4 bytes by the Adam step (and moved at 4 by DualPipe's
/// sum); the tied embedding's all-reduce moves 4 bytes a gradient too.
[[nodiscard]] OpList end_of_iteration(const config::Scenario& scenario, std::int64_t parameters,
                                      std::int64_t embedding_parameters, bool gradients_reduced = false,
                                      std::int64_t sharded_layer_parameters = 0,
                                      std::int64_t expert_parameters = 0,
                                      std::int64_t tp_replicated_parameters = 0,
                                      std::int64_t fp32_parameters = 0);

/// One gradient bucket's data-parallel reduction, issued asynchronously as soon as the bucket's last
/// gradient is ready (Megatron DDP with overlap_grad_reduce): an all-reduce of the gradients (in
/// training.main_grads_dtype), or a reduce-scatter with the distributed optimizer.
/// `fp32_parameters` of the `parameters` are NeMo's fp32 embedding gradients (fp32_embedding_gradients.h):
/// 4 bytes each.
[[nodiscard]] OpList gradient_bucket_reduction(const config::Scenario& scenario, std::int64_t parameters,
                                               std::int64_t fp32_parameters = 0);

/// training.zero_grad_buffer: Megatron's zero_grad_buffer() at the start of the iteration, a memset of
/// the GPU's whole gradient buffer (`parameters` × gradient_bytes written, HBM-bound; `fp32_parameters`
/// of them at 4 bytes, as gradient_bucket_reduction).
[[nodiscard]] OpList gradient_buffer_zeroing(const config::Scenario& scenario, std::int64_t parameters,
                                             std::int64_t fp32_parameters = 0);

/// One bucket's all-gather of `parameters` updated 16-bit parameters over the data-parallel group, issued
/// asynchronously (training.overlap_param_gather: Megatron's DDP gathers bucket by bucket before the
/// forward that needs it; Apex's DistributedFusedAdam, NeMo 24.07's optimizer, the same with
/// param_sync_dtype bf16). nccl-tests' S is the gathered size, parameters × 2 bytes.
[[nodiscard]] OpList parameter_bucket_gather(std::int64_t parameters);

/// Megatron's default bucket: max(40M, 1M × d) parameters.
[[nodiscard]] std::int64_t gradient_bucket_parameters(const config::Scenario& scenario);

}  // namespace trainsim::workload
