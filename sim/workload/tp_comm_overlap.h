// Transformer Engine's tensor-parallel communication overlap (parallelism.tp_comm_overlap, TE
// "userbuffers", as NeMo's recipes turn it on for TP > 1): the sequence-parallel all-gather in front of a
// linear layer and the reduce-scatter behind one are cut into chunks that run beside chunks of the GEMM,
// instead of before or after the whole GEMM.
#pragma once

#include "sim/workload/layer_shape.h"
#include "sim/workload/op.h"

namespace trainsim::workload {

/// Rewrites one of transformer_layer.h's op lists (after fp8_layer.h's rewrite, if any) with TE's default
/// userbuffers methods (transformer_engine/pytorch/module/base.py initialize_ub):
/// - ring exchange for the all-gathers feeding qkv and fc1 and the backward's re-gathers feeding
///   proj.dgrad and fc2.dgrad: the GEMM runs as t chunks of its tokens, chunk 0 on the rank's own shard at
///   once, chunk k once the k-th of t − 1 ring steps has brought the next shard (each step moves 1/t of
///   the gathered tensor per rank: an all-gather of 1/(t − 1) of the bytes, the same bus traffic);
/// - pipeline with 4 splits for the reduce-scatters behind proj and fc2: the GEMM runs as 4 chunks of its
///   tokens and each chunk's reduce-scatter (a quarter of the bytes) runs beside the next chunk; the last
///   one is waited for;
/// - the backward's dgrad/wgrad overlaps of qkv and fc1 ("bulk") are Megatron's asynchronous collectives
///   already (tensor_parallel_linear.h), so they are left as they are.
/// The chunks are priced as GEMMs of their own size (a smaller GEMM runs at a lower efficiency), and
/// compute beside a step runs on the SMs the step leaves it (Op::comm_sms: TE's 1 SM for the ring
/// exchange, which copies with the copy engines, and 16 for the pipelined reduce-scatter).
/// Requires shape.sequence_parallel; with t = 1 the list is returned unchanged.
[[nodiscard]] OpList overlap_tp_comm(const OpList& ops, const LayerShape& shape);

}  // namespace trainsim::workload
