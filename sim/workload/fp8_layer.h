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
/// - the dense GEMMs of the four linear layers (qkv, proj, fc1, fc2, forward, dgrad and wgrad) read the
///   profile's FP8 peak and curve; attention's batched GEMMs stay BF16 (TE's fused attention is BF16);
/// - before each forward GEMM, the cast of its input to FP8 with the transposed copy its wgrad needs
///   (read 2 bytes, write 1 + 1 per element). LayerNorm-fed inputs (qkv, fc1) under delayed scaling are
///   cast inside TE's fused LayerNorm, and their transpose is made in the backward, from the gathered
///   FP8 input (read 1, write 1);
/// - before each dgrad GEMM, the cast/transpose of the output gradient (read 2, write 1 + 1);
/// - tensorwise (current) scaling first reads each tensor once more for its amax (2 bytes an element);
///   delayed scaling uses the amax the cast kernel records, and blockwise/mxfp8 compute their block
///   scales inside the cast (no extra pass);
/// - with sequence parallelism the forward's input all-gathers before qkv and fc1, and their re-gather
///   in the backward, move FP8 (1 byte an element instead of 2);
/// - the inputs the four GEMMs keep for their wgrad are kept in FP8 (half the bytes).
/// The inserted kernels are memory-bound ops named "fp8.<gemm>.<kernel>" (MemoryBoundKind::Generic, the
/// streaming curve), so the breakdown and traces show where FP8's overhead went.
[[nodiscard]] OpList fp8_layer_ops(const OpList& ops, const LayerShape& shape, config::Fp8Recipe recipe);

/// The once-per-iteration FP8 cast of the weights of `layers` transformer layers on one GPU (TE casts on
/// the first micro-batch and reuses the copy, Megatron's is_first_microbatch): read the BF16 weight,
/// write the FP8 weight and its transpose (4 bytes a parameter; tensorwise 2 more for the amax).
[[nodiscard]] OpList fp8_weight_casts(const LayerShape& shape, std::int64_t layers, config::Fp8Recipe recipe);

/// Bytes of the FP8 weight copies TE keeps beside the BF16 weights of `layers` transformer layers on one
/// GPU: the FP8 weight and its transpose (or MXFP8's row- and column-wise copies), 2 bytes a parameter.
[[nodiscard]] std::int64_t fp8_weight_copy_bytes(const LayerShape& shape, std::int64_t layers);

}  // namespace trainsim::workload
