#include "sim/workload/stage_ops.h"

#include <algorithm>
#include <string>

#include "sim/workload/cross_entropy_passes.h"
#include "sim/workload/element_bytes.h"
#include "sim/workload/fp32_embedding_gradients.h"
#include "sim/workload/fsdp_ops.h"
#include "sim/workload/op_list_builder.h"
#include "sim/workload/optimizer_state.h"
#include "sim/workload/tensor_parallel_linear.h"

namespace trainsim::workload {
namespace {

using cost::CollectiveKind;
using cost::MemoryBoundKind;

// The kernels that run the loss's passes, for their measured speed (the profile's kind_factors): ATen's
// eager kernels, or the torch.compile'd ones of cross_entropy_loss_fusion. Unset keeps trainsim's earlier
// one-pass estimate, priced as a streaming kernel.
MemoryBoundKind cross_entropy_kind(const LayerShape& x) {
    if (!x.cross_entropy_loss_fusion) {
        return MemoryBoundKind::Generic;
    }
    return *x.cross_entropy_loss_fusion ? MemoryBoundKind::CrossEntropyFused : MemoryBoundKind::CrossEntropy;
}

}  // namespace

OpList embedding_forward(const LayerShape& x) {
    OpListBuilder ops(OpRole::Embedding);
    const std::int64_t full = x.tokens() * x.hidden;
    const std::int64_t E = x.sequence_sharded_elements();
    // Each rank gathers the rows of its vocabulary shard (read weights, write output); the vocab-parallel
    // embedding all-reduces the partial rows (Megatron's VocabParallelEmbedding), also with SP.
    ops.memory("embedding.lookup", MemoryBoundKind::Generic, 2 * full * kActivationBytes);
    if (x.tp > 1) {
        ops.sync_collective("embedding.allreduce", CollectiveKind::AllReduce, full * kActivationBytes);
    }
    // Position-embedding add on the whole sequence (read two tensors, write one); with SP the result is
    // then split along the sequence (no communication) and the dropout runs on the 1/t shard. RoPE has
    // no position embedding here: it rotates Q and K inside each layer.
    if (!x.rope) {
        ops.memory("embedding.position_add", MemoryBoundKind::Generic, 3 * full * kActivationBytes);
    }
    ops.memory("embedding.dropout", MemoryBoundKind::Dropout, 2 * E * kActivationBytes + E * kMaskBytes,
               Bytes{E * kMaskBytes});
    return ops.take();
}

namespace {

// The weight gradient of a torch embedding table of `parameters` entries, looked up by `rows` [s·b, h]
// rows (`prefix`.* ops). F.embedding's backward is dense (sparse=False): PyTorch's
// embedding_dense_backward_cuda (aten/src/ATen/native/cuda/Embedding.cu) zero-fills a 16-bit gradient of
// the whole table (at::zeros) and scatter-adds the rows' gradients into it. No fused wgrad GEMM wrote
// main_grad (the table is no linear layer), so the gradient hook then adds it into main_grad and frees
// it: Megatron-Core 0.8's DDP param_hook (distributed_data_parallel.py, `param.main_grad.add_(param.grad
// .data)`), Apex 24.07's DistributedFusedAdam _grad_copy (`grad_out.add_(grad_in)` into its bucket). Both
// run every micro-batch. (An MTP depth's lookup of the same table is priced alike: exact for one depth;
// with more, autograd sums their dense gradients before the one hook, a little less than an add each.)
void dense_embedding_gradient(OpListBuilder& ops, const std::string& prefix, std::int64_t parameters,
                              std::int64_t rows, std::int64_t main_grad_bytes) {
    // The 16-bit gradient is memory from the memset until the hook frees it after its add, the last op of
    // this backward: held as the memset's saved bytes, which the memory timeline frees when the backward
    // of the embedding's own key ends (sim/program/task_info.h's kEmbeddingLayer).
    ops.memory(prefix + ".wgrad_memset", MemoryBoundKind::Generic, parameters * kActivationBytes,
               Bytes{parameters * kActivationBytes});
    ops.memory(prefix + ".grad_accumulate", MemoryBoundKind::Generic, 2 * rows * kActivationBytes);
    // Read the 16-bit gradient, read and write main_grad (G bytes each).
    ops.memory(prefix + ".main_grad_add", MemoryBoundKind::Generic,
               parameters * (kActivationBytes + 2 * main_grad_bytes));
}

}  // namespace

OpList embedding_backward(const LayerShape& x) {
    OpListBuilder ops(OpRole::Embedding);
    const std::int64_t full = x.tokens() * x.hidden;
    const std::int64_t E = x.sequence_sharded_elements();
    ops.memory("embedding.dropout.bwd", MemoryBoundKind::Dropout, 2 * E * kActivationBytes + E * kMaskBytes);
    if (x.sequence_parallel) {
        ops.sync_collective("embedding.grad_allgather", CollectiveKind::AllGather, full * kActivationBytes);
    }
    // The word embedding's V/t × h shard (VocabParallelEmbedding calls F.embedding unless
    // deterministic_mode: tensor_parallel/layers.py, core_r0.8.0). The output layer's use of a tied copy
    // adds nothing: its fused wgrad GEMM writes main_grad and the hook skips it (grad_added_to_main_grad).
    // Not modelled: on a single stage holding both, Megatron-Core 0.8 zero-fills that GEMM's placeholder
    // gradient (zero_out_wgrad) and autograd sums it with this one (8 more bytes a parameter).
    dense_embedding_gradient(ops, "embedding", x.vocab / x.tp * x.hidden, full, x.embedding_main_grad_bytes);
    if (!x.rope) {
        // The learned position embedding, a torch.nn.Embedding of seq_length × h on every TP rank, looked
        // up for the whole sequence (LanguageModelEmbedding).
        dense_embedding_gradient(ops, "embedding.position", x.seq * x.cp * x.hidden, full,
                                 x.embedding_main_grad_bytes);
    }
    return ops.take();
}

OpList output_forward(const LayerShape& x) {
    OpListBuilder ops(OpRole::OutputLayer);
    const std::int64_t E = x.sequence_sharded_elements();
    const std::int64_t local_vocab = x.vocab / x.tp;
    const std::int64_t logits = x.tokens() * local_vocab;
    ops.memory(x.rmsnorm ? "final_rmsnorm" : "final_ln", MemoryBoundKind::LayerNorm, 2 * E * kActivationBytes,
               Bytes{E * kActivationBytes});
    if (x.sequence_parallel) {
        ops.sync_collective("output.input_allgather", CollectiveKind::AllGather,
                            x.tokens() * x.hidden * kActivationBytes);
    }
    ops.gemm("output.logits", {x.tokens(), local_vocab, x.hidden}, Bytes{E * kActivationBytes});
    // Vocab-parallel cross-entropy in fp32, its passes as Megatron-Core runs them (cross_entropy_passes.h);
    // it keeps the fp32 softmax for its backward.
    const CrossEntropyBytes loss = cross_entropy_bytes_per_logit(x.cross_entropy_loss_fusion);
    ops.memory("loss.cross_entropy", cross_entropy_kind(x), logits * loss.forward,
               Bytes{logits * kFp32Bytes});
    if (x.tp > 1) {
        ops.sync_collective("loss.allreduce_max", CollectiveKind::AllReduce, x.tokens() * kFp32Bytes);
        if (x.cross_entropy_loss_fusion.value_or(false)) {
            // The fused version batches the target logit and the sum of exponentials into one all-reduce.
            ops.sync_collective("loss.allreduce_target_sum_exp", CollectiveKind::AllReduce,
                                2 * x.tokens() * kFp32Bytes);
        } else {
            ops.sync_collective("loss.allreduce_target", CollectiveKind::AllReduce, x.tokens() * kFp32Bytes);
            ops.sync_collective("loss.allreduce_sum_exp", CollectiveKind::AllReduce, x.tokens() * kFp32Bytes);
        }
    }
    return ops.take();
}

OpList output_backward(const LayerShape& x) {
    OpListBuilder ops(OpRole::OutputLayer);
    const std::int64_t E = x.sequence_sharded_elements();
    const std::int64_t local_vocab = x.vocab / x.tp;
    const std::int64_t logits = x.tokens() * local_vocab;
    // Softmax minus one-hot, times the loss gradient, down to the 16-bit gradient of the logits.
    ops.memory("loss.cross_entropy.bwd", cross_entropy_kind(x),
               logits * cross_entropy_bytes_per_logit(x.cross_entropy_loss_fusion).backward);
    column_parallel_backward(ops, x, x.tokens(), x.hidden, local_vocab, "output.logits");
    ops.memory(x.rmsnorm ? "final_rmsnorm.bwd" : "final_ln.bwd", MemoryBoundKind::LayerNorm,
               3 * E * kActivationBytes);
    return ops.take();
}

namespace {

// `bytes` of gradients reduced over `group`: an all-reduce, or a reduce-scatter with the distributed
// optimizer.
void reduce_gradients(OpListBuilder& ops, const config::Scenario& sc, std::int64_t bytes, bool blocking,
                      CommGroup group = CommGroup::Data) {
    const bool distributed = sc.training.use_distributed_optimizer;
    const bool experts = group == CommGroup::ExpertData;
    const char* name = distributed ? (experts ? "expert_dp.grad_reducescatter" : "dp.grad_reducescatter")
                                   : (experts ? "expert_dp.grad_allreduce" : "dp.grad_allreduce");
    const CollectiveKind kind = distributed ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce;
    if (blocking) {
        ops.sync_collective(name, kind, bytes, group);
    } else {
        ops.async_collective(name, kind, bytes, group);
    }
}

}  // namespace

OpList gradient_buffer_zeroing(const config::Scenario& sc, std::int64_t parameters,
                               std::int64_t fp32_parameters) {
    OpListBuilder ops(OpRole::Optimizer);
    ops.memory("optimizer.zero_grad_buffer", MemoryBoundKind::Generic,
               gradient_buffer_bytes(sc, parameters, fp32_parameters));
    return ops.take();
}

OpList gradient_bucket_reduction(const config::Scenario& sc, std::int64_t parameters,
                                 std::int64_t fp32_parameters) {
    OpListBuilder ops(OpRole::GradientSync);
    reduce_gradients(ops, sc, gradient_buffer_bytes(sc, parameters, fp32_parameters), /*blocking=*/false);
    return ops.take();
}

OpList parameter_bucket_gather(std::int64_t parameters) {
    OpListBuilder ops(OpRole::GradientSync);
    ops.async_collective("dp.param_allgather", CollectiveKind::AllGather, parameters * kActivationBytes,
                         CommGroup::Data);
    return ops.take();
}

std::int64_t gradient_bucket_parameters(const config::Scenario& sc) {
    return sc.training.ddp_bucket_size.value_or(
        // Megatron-Core's default over the dp×cp group (resolve_ddp_bucket_size: 1M × dp_cp size).
        std::max<std::int64_t>(40'000'000, 1'000'000 * sc.parallelism.data_parallel_size_with_cp()));
}

OpList end_of_iteration(const config::Scenario& sc, std::int64_t parameters,
                        std::int64_t embedding_parameters, bool gradients_reduced,
                        std::int64_t sharded_layer_parameters, std::int64_t expert_parameters,
                        std::int64_t tp_replicated_parameters, std::int64_t fp32_parameters) {
    OpListBuilder ops(OpRole::GradientSync);
    const bool distributed = sc.training.use_distributed_optimizer;
    // Gradients are reduced, and the optimizer sharded, over the d·c ranks that hold the same weights.
    const std::int64_t d = sc.parallelism.data_parallel_size_with_cp();
    // Under FSDP the layers' gradients were reduce-scattered layer by layer and their weights stay
    // sharded; what is left (embedding, output layer, final norm) is reduced and gathered as the
    // distributed optimizer does it.
    // Routed experts are reduced and sharded over expert data parallelism instead (Megatron-Core's
    // expert-DP group: the t·c·d ranks of the stage over ETP·EP).
    const std::int64_t unsharded = parameters - sharded_layer_parameters - expert_parameters;
    const std::int64_t edp = sc.model.moe ? sc.parallelism.expert_data_parallel_size() : 1;
    if (d > 1 && !gradients_reduced) {
        // NeMo's fp32 embedding gradients are buckets of their own (fp32_embedding_gradients.h), each
        // bucket reduce-scattered in its dtype.
        reduce_gradients(ops, sc, (unsharded - fp32_parameters) * gradient_bytes(sc), /*blocking=*/true);
        if (fp32_parameters > 0) {
            reduce_gradients(ops, sc, fp32_parameters * embedding_gradient_bytes(sc), /*blocking=*/true);
        }
    }
    if (edp > 1 && expert_parameters > 0) {
        reduce_gradients(ops, sc, expert_parameters * gradient_bytes(sc), /*blocking=*/true,
                         CommGroup::ExpertData);
    }
    if (tp_replicated_parameters > 0) {
        // finalize_model_grads' _allreduce_non_tensor_model_parallel_grads, after finish_grad_sync:
        // _flatten_dense_tensors copies the fp32 main grads into one buffer (read and write), one
        // all-reduce over TP, then each grad copies its slice back (read and write).
        const std::int64_t bytes = tp_replicated_parameters * gradient_bytes(sc);
        ops.memory("tp.replicated_grads_flatten", MemoryBoundKind::Generic, 2 * bytes);
        ops.sync_collective("tp.replicated_grad_allreduce", CollectiveKind::AllReduce, bytes,
                            CommGroup::Tensor);
        ops.memory("tp.replicated_grads_copy_back", MemoryBoundKind::Generic, 2 * bytes);
    }
    const std::int64_t owned =
        distributed ? (parameters - expert_parameters) / d + expert_parameters / edp : parameters;
    // The fp32 embedding gradients' share of what the rank steps: 4 − G more bytes each where a gradient
    // of the shard is moved or read.
    const std::int64_t fp32_owned_extra =
        fp32_gradient_extra_bytes(sc, distributed ? fp32_parameters / d : fp32_parameters);
    if (sc.bidirectional_placement()) {
        // DualPipe: rank r's chunks are stage r of one model copy and stage p − 1 − r of the other, and
        // rank p − 1 − r holds the same two stages the other way round; each copy's gradient is summed
        // with the other's before the norm and the step (deepseek-ai/DualPipe's example_dualpipe.py adds
        // the partner's gradients to both copies', through an all-gather over all p ranks; the pair's
        // all-reduce moves the same sums). Over what the rank steps: all its gradients, or with the
        // distributed optimizer its shard, the partner sharding the same parameters alike.
        ops.sync_collective("dualpipe.copy_grad_allreduce", CollectiveKind::AllReduce,
                            owned * gradient_bytes(sc) + fp32_owned_extra, CommGroup::StageCopies);
    }
    if (embedding_parameters > 0) {
        // NeMo all-reduces the tied embedding's main_grad, fp32 with fp32_embedding_grads.
        ops.sync_collective("embedding.grad_allreduce", CollectiveKind::AllReduce,
                            embedding_parameters * embedding_gradient_bytes(sc), CommGroup::Embedding);
    }
    ops.sync_collective("optimizer.grad_norm_allreduce", CollectiveKind::AllReduce, kFp32Bytes,
                        CommGroup::ModelParallel);
    ops.set_role(OpRole::Optimizer);
    // The step reads each gradient of its shard twice (the step and the norm).
    const std::int64_t fp32_step_bytes = 2 * fp32_owned_extra;
    if (sc.training.optimizer_param_copy) {
        // The copy runs after the step over the same owned shard, before the distributed optimizer's
        // all-gather of the 16-bit parameters.
        ops.memory("optimizer.adam", MemoryBoundKind::Optimizer,
                   owned * (adam_step_bytes_per_parameter(sc) - kActivationBytes) + fp32_step_bytes);
        ops.memory("optimizer.param_copy", MemoryBoundKind::Generic, owned * kParamCopyBytesPerParameter);
    } else {
        ops.memory("optimizer.adam", MemoryBoundKind::Optimizer,
                   owned * adam_step_bytes_per_parameter(sc) + fp32_step_bytes);
    }
    ops.set_role(OpRole::GradientSync);
    // With overlap_param_gather the gather runs bucket by bucket in the next forward (parameter_gather.h).
    if (distributed && d > 1 && !sc.training.overlap_param_gather) {
        ops.sync_collective("dp.param_allgather", CollectiveKind::AllGather, unsharded * kActivationBytes,
                            CommGroup::Data);
    }
    if (distributed && edp > 1 && expert_parameters > 0) {
        ops.sync_collective("expert_dp.param_allgather", CollectiveKind::AllGather,
                            expert_parameters * kActivationBytes, CommGroup::ExpertData);
    }
    return ops.take();
}

}  // namespace trainsim::workload
