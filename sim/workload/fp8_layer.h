// FP8 training as Transformer Engine runs it under Megatron-core (training.fp8_format): which GEMMs of a
// transformer layer run in FP8, the cast/transpose and amax kernels TE adds around them, the FP8
// all-gathers of sequence parallelism, what the FP8 copies save and cost in memory. Everything else
// (core attention, norms, the embedding, the output layer, the optimizer) stays BF16.
#pragma once

#include <cstdint>

#include "sim/config/scenario.h"
#include "sim/workload/layer_shape.h"
#include "sim/workload/op.h"

namespace trainsim::workload {

/// Rewrites one of transformer_layer.h's op lists for FP8 with `recipe` (the list must come from a layer
/// of `shape`; op names are the ones transformer_layer.cc gives):
/// - the GEMMs of the TE linear layers (forward, dgrad and wgrad) read the profile's FP8 peak and curve:
///   qkv, proj, fc1, fc2; MLA's q_proj or q_down/up_proj and kv_down/up_proj; the shared expert's fc1
///   and fc2 and the routed experts' grouped GEMMs (one quantize kernel for all local experts, over all
///   their rows). Attention's batched GEMMs stay BF16 (TE's fused attention is BF16), as does the MoE
///   router's GEMM (a torch matmul, not a TE module); with shape.fp8_split_accumulator the dgrad and
///   wgrad GEMMs (and under blockwise the forward ones) are GemmPrecision::Fp8SplitAccumulator, as TE
///   runs them with fast accumulation off;
/// - before each forward GEMM, the cast of its input to FP8 with the transposed copy its wgrad needs
///   (read 2 bytes, write 1 + 1 per element). LayerNorm-fed inputs (qkv, fc1, MLA's up projections)
///   under delayed scaling are cast inside TE's fused LayerNorm; they and the other sequence-gathered
///   inputs (q_proj, the shared expert's fc1) get their transpose in the backward, from the gathered FP8
///   input (read 1, write 1);
/// - before each dgrad GEMM, the cast/transpose of the output gradient (read 2, write 1 + 1);
/// - tensorwise (current) scaling first reads each tensor once more for its amax (2 bytes an element);
///   delayed scaling uses the amax the cast kernel records, and blockwise/mxfp8 compute their block
///   scales inside the cast (no extra pass);
/// - with sequence parallelism the forward's input all-gathers of those column-parallel linears, and
///   their re-gather in the backward, move FP8 (1 byte an element instead of 2);
/// - the inputs the FP8 GEMMs keep for their wgrad are kept in FP8 (half the bytes).
/// The inserted kernels are memory-bound ops named "fp8.<gemm>.<kernel>" (MemoryBoundKind::Generic, the
/// streaming curve), so the breakdown and traces show where FP8's overhead went.
[[nodiscard]] OpList fp8_layer_ops(const OpList& ops, const LayerShape& shape, config::Fp8Recipe recipe);

/// Parameters of the TE linear layers pipeline rank `pipeline_rank` holds, each layer by its kind (dense
/// or MoE): the weights TE keeps FP8 copies of, the routed experts' included (TE GroupedLinear caches them
/// on the first micro-batch as Linear does), the MoE router's excluded (not a TE module).
[[nodiscard]] std::int64_t fp8_weight_parameters(const config::Scenario& sc, std::int64_t pipeline_rank);

/// The once-per-iteration FP8 cast of `parameters` weights on one GPU (TE casts on the first micro-batch
/// and reuses the copy, Megatron's is_first_microbatch): read the BF16 weight, write the FP8 weight and
/// its transpose (4 bytes a parameter; tensorwise 2 more for the amax).
[[nodiscard]] OpList fp8_weight_casts(std::int64_t parameters, config::Fp8Recipe recipe);

/// Bytes of the FP8 weight copies TE keeps beside `parameters` BF16 weights on one GPU: the FP8 weight
/// and its transpose (or MXFP8's row- and column-wise copies), 2 bytes a parameter.
[[nodiscard]] std::int64_t fp8_weight_copy_bytes(std::int64_t parameters);

}  // namespace trainsim::workload
