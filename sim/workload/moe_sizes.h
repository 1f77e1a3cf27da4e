// The sizes of one MoE MLP on one rank and micro-batch (sim/workload/moe_layer.h): how many tokens
// enter it, how many routed copies the busiest rank's local experts receive (balanced, skewed or capped
// by a capacity factor), and how many tokens the allgather dispatcher gathers.
//
// With expert tensor parallelism etp > 1 the etp ranks of an expert-TP group hold the same local experts,
// each a 1/etp slice of their MLP width, and every one of them runs the group's routed copies (Megatron-
// Core's dispatchers gather them inside the group): R_max counts the group's copies, f and f_in the
// rank's slice (DeepSeek's memory estimate in Megatron-MoE-ModelZoo, misc/tools/deepseek_mem_estimate.py,
// counts the same: permute_out s/tp·etp·k·h, fc1 out s/tp·etp·k·f/etp·2).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/workload/layer_shape.h"

namespace trainsim::workload {

// Element bytes of the router's outputs that the dispatch moves and the layer keeps.
inline constexpr std::int64_t kProbBytes = 2;   // the probs: type_as(logits), bf16 without moe_router_dtype
inline constexpr std::int64_t kRouteBytes = 1;  // the routing map: torch.bool
inline constexpr std::int64_t kRowIdBytes = 4;  // TE's permutation row_id_map: torch.int32

struct MoeSizes {
    std::int64_t T;         // tokens entering the MoE MLP on this rank: s·b, or s·b/t with SP
    std::int64_t R;         // routed token copies this rank sends: T·k
    std::int64_t received;  // copies the busiest rank receives over the EP all-to-all: R with balanced
                            // load, more with a skew
    std::int64_t R_max;     // copies its local experts run on: etp·received (the expert-TP group's)
    std::int64_t L;         // local experts: num_experts / EP
    std::int64_t rows;   // the grouped GEMM's batched-equivalent m: ⌈R_max/L⌉ (dropless: every rank waits
                         // for the busiest), under FP8 rounded up to fp8_row_alignment (TE's Fp8Padding)
    std::int64_t R_pad;  // rows the experts' GEMMs and activation run on: R_max, plus the FP8 padding
    // Each local expert's rows on the busiest rank (padded under FP8), for the grouped GEMMs: the busiest
    // expert's share, the rest of R_max spread over the other L−1 as evenly as whole rows allow.
    std::vector<cost::ExpertGemms> expert_rows;
    std::int64_t gathered;  // the allgather dispatcher's tokens after its gather over the tp_ep group:
                            // ETP·EP·T
    std::int64_t h;         // hidden size
    std::int64_t n;         // num_experts (the router's output width)
    std::int64_t f;         // one expert's MLP width on this rank: moe_ffn_hidden_size / etp
    std::int64_t f_in;      // fc1's output width: 2f for the gated (SwiGLU) experts
};

/// The rows each expert's FP8 GEMM input is padded to a multiple of (Megatron-Core's
/// get_fp8_align_size, megatron/core/fp8_utils.py: 32 for MXFP8, 16 for the other recipes); 1 in BF16.
[[nodiscard]] std::int64_t fp8_row_alignment(const LayerShape& x);

/// The routed experts' grouped GEMM over `z.expert_rows`, their tokens in dimension `tokens_in`.
[[nodiscard]] cost::GroupedGemm expert_gemms(const MoeSizes& z, cost::TokenDim tokens_in);

/// The sizes of `x`'s MoE MLP (x.moe() must hold).
[[nodiscard]] MoeSizes moe_sizes(const LayerShape& x);

}  // namespace trainsim::workload
