// One operation of the training workload on one tensor-parallel rank, for one micro-batch: a GEMM, a
// memory-bound kernel or a collective, with the tensors it keeps for the backward.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/units.h"
#include "sim/cost/cost_model.h"

namespace trainsim::workload {

enum class OpKind : std::uint8_t { Gemm, MemoryBound, Collective };

/// Which process group a collective runs over.
enum class CommGroup : std::uint8_t {
    Tensor,         // the t ranks of a tensor-parallel group
    Data,           // the d replicas of one model shard
    Embedding,      // first and last pipeline stage, for the shared word-embedding gradient
    ModelParallel,  // all t·p ranks of one replica (gradient-norm all-reduce before the optimizer)
    Context,        // the c ranks that share one sequence (context parallelism's KV exchange)
    Expert,         // the EP ranks of an expert-parallel group (MoE token dispatch and combine)
    ExpertData,     // the expert-data-parallel replicas of one expert shard (expert gradient reduction)
    ExpertTensor,   // the etp ranks that split each local expert (the alltoall dispatcher's all-gather of
                    // the routed tokens after the all-to-all and reduce-scatter before the combine)
    ExpertTensorAndModel,  // Megatron-Core's tp_ep group, etp·ep ranks (the tokens-per-expert gather, the
                           // allgather dispatcher's gathers and reduce-scatter)
    StageCopies,  // DualPipe's pipeline ranks r and p − 1 − r, which hold the same two stages (one per model
                  // copy) and sum their gradients
};
/// How many CommGroup values there are, for tables indexed by group.
inline constexpr std::size_t kCommGroupCount = static_cast<std::size_t>(CommGroup::StageCopies) + 1;

/// The MoE layer's token exchanges (Expert, ExpertTensor, ExpertTensorAndModel): model-parallel
/// activations on the tensor-parallel stream, each simulated GPU pricing its own (op_lowering.cc).
[[nodiscard]] constexpr bool is_expert_token_group(CommGroup group) {
    return group == CommGroup::Expert || group == CommGroup::ExpertTensor ||
           group == CommGroup::ExpertTensorAndModel;
}

/// Where an op runs: the compute stream, or the tensor-parallel communication stream (collectives
/// that Megatron issues asynchronously, and the synchronous ones the compute stream waits for), the
/// data-parallel one, the context-parallel one (Transformer Engine's KV exchange beside attention), or
/// the one of the collectives the shared expert issues from its own CUDA stream under
/// moe_shared_expert_overlap (sim/workload/shared_expert.h), which do not queue behind the all-to-alls.
enum class OpStream : std::uint8_t { Compute, TensorComm, DataComm, ContextComm, SharedExpertComm };

/// Why an op exists, for the time breakdown.
enum class OpRole : std::uint8_t { Layer, Embedding, OutputLayer, Loss, Optimizer, GradientSync };

struct Op {
    std::string name;  // e.g. "qkv", "qkv.dgrad", "attn.allreduce"
    OpKind kind = OpKind::Gemm;
    OpStream stream = OpStream::Compute;
    OpRole role = OpRole::Layer;

    // Gemm
    cost::GemmShape gemm;
    cost::GemmClass gemm_class = cost::GemmClass::Dense;
    cost::GemmPrecision gemm_precision = cost::GemmPrecision::Bf16;  // FP8: sim/workload/fp8_layer.h
    /// A grouped GEMM (the routed experts'): each expert's GEMM on its own tokens, priced one by one;
    /// `gemm` is then their batched equivalent {⌈rows/experts⌉, n, k, batch = experts} (the rows that
    /// FP8's quantize kernels read). Empty: a plain GEMM.
    cost::GroupedGemm grouped;
    // MemoryBound: bytes read plus bytes written
    Bytes bytes_moved{0};
    cost::MemoryBoundKind memory_kind = cost::MemoryBoundKind::Generic;
    // Collective: nccl-tests' S (total array bytes) over `group`
    cost::CollectiveKind collective = cost::CollectiveKind::AllReduce;
    Bytes collective_bytes{0};
    CommGroup group = CommGroup::Tensor;
    /// SMs the collective's kernels hold while compute runs beside it, when it says (TE userbuffers:
    /// sim/workload/tp_comm_overlap.h); 0: the link's compute_share_while_overlapped applies.
    int comm_sms = 0;

    /// A collective the compute stream waits for before its next op (Megatron's synchronous calls);
    /// false for one issued asynchronously and joined through `after`.
    bool blocking = false;

    /// Indices of earlier ops in the same list that must finish before this op starts, beyond the
    /// program order of its own stream (e.g. the GEMM that waits for an async all-gather).
    std::vector<std::int32_t> after;

    /// The CPU waits, before it issues this op, until op `host_waits_for` of the same list has finished
    /// on the GPU (a device-to-host copy read on the host: Megatron-Core's token dispatchers read the
    /// tokens per expert with .cpu()/.tolist() or an event synchronize); -1: it does not wait. The GPU
    /// then idles until the CPU has issued the ops after it (sim/program/host_overhead.h).
    std::int32_t host_waits_for = -1;

    /// Re-executed forward work (activation recomputation), counted as recompute time and HFU FLOPs.
    bool is_recompute = false;

    /// Bytes this op keeps alive for the backward (Korthikanti §4.1 conventions: 2-byte activations,
    /// 1-byte dropout masks, small buffers ignored).
    Bytes saved_bytes{0};

    [[nodiscard]] Flops flops() const {
        if (kind != OpKind::Gemm) {
            return Flops{0.0};
        }
        return grouped.empty() ? gemm.flops() : grouped.flops(gemm);
    }
};

using OpList = std::vector<Op>;

}  // namespace trainsim::workload
