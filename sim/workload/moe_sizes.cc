#include "sim/workload/moe_sizes.h"

#include <algorithm>
#include <cmath>

namespace trainsim::workload {

std::int64_t fp8_row_alignment(const LayerShape& x) {
    if (!x.fp8) {
        return 1;
    }
    return *x.fp8 == config::Fp8Recipe::Mxfp8 ? 32 : 16;
}

cost::GroupedGemm expert_gemms(const MoeSizes& z, cost::TokenDim tokens_in) {
    return cost::GroupedGemm{tokens_in, z.expert_rows};
}

MoeSizes moe_sizes(const LayerShape& x) {
    MoeSizes z{};
    z.h = x.hidden;
    // Megatron requires sequence parallelism beside TP for MoE, so each tensor-parallel rank routes its
    // own s·b/t tokens.
    z.T = x.sequence_sharded_elements() / x.hidden;
    z.R = z.T * x.topk;
    z.L = x.experts / x.ep;
    // With a skew the busiest expert receives skew × its fair share R/L and its rank's other L−1
    // experts their fair share (what it takes comes from experts elsewhere): R/L·(L−1+skew). The combine
    // waits for that rank, so every rank pays its grouped GEMMs, run as one batched GEMM of that work.
    const double l = static_cast<double>(z.L);
    double busiest = x.load_skew;  // the busiest expert's tokens over the mean
    double others = 1.0;           // the other local experts'
    if (x.capacity_factor > 0.0) {
        // Megatron-Core's router (topk_softmax_with_capacity) keeps at most C = ⌈T·k/E · factor⌉ of a
        // rank's tokens per expert and drops the rest; with padding every expert gets exactly C from
        // each rank. In units of the mean T·k/E:
        const double mean = static_cast<double>(z.R) / static_cast<double>(x.experts);
        const double capacity = std::ceil(mean * x.capacity_factor) / mean;
        busiest = x.pad_to_capacity ? capacity : std::min(busiest, capacity);
        others = x.pad_to_capacity ? capacity : std::min(others, capacity);
    }
    z.received =
        static_cast<std::int64_t>(std::ceil(static_cast<double>(z.R) * ((l - 1.0) * others + busiest) / l));
    // Every rank of the expert-TP group routes its own T tokens alike; each runs all of the group's.
    z.R_max = x.etp * z.received;
    // TEGroupedMLP pads each expert's rows under FP8 (moe/experts.py, TE's Fp8Padding, which copies
    // nothing when they are aligned already); the padding rows run through both GEMMs and the activation.
    const std::int64_t align = fp8_row_alignment(x);
    const auto padded = [align](std::int64_t rows) { return (rows + align - 1) / align * align; };
    z.rows = padded((z.R_max + z.L - 1) / z.L);
    // Per expert: the busiest expert's share (never more than the rank's R_max), the rest spread evenly.
    const std::int64_t top = std::min(
        z.R_max, x.etp * static_cast<std::int64_t>(std::ceil(static_cast<double>(z.R) * busiest / l)));
    const std::int64_t rest = z.R_max - top;
    const std::int64_t other_count = z.L - 1;
    const std::int64_t base = other_count > 0 ? rest / other_count : 0;
    const std::int64_t more = other_count > 0 ? rest % other_count : 0;  // experts with one row more
    z.expert_rows.clear();
    z.R_pad = 0;
    for (const cost::ExpertGemms e :
         {cost::ExpertGemms{padded(top), 1}, cost::ExpertGemms{padded(base + 1), more},
          cost::ExpertGemms{padded(base), other_count - more}}) {
        if (e.count == 0) {
            continue;
        }
        z.R_pad += e.tokens * e.count;
        if (!z.expert_rows.empty() && z.expert_rows.back().tokens == e.tokens) {
            z.expert_rows.back().count += e.count;  // balanced: one group of L experts
        } else {
            z.expert_rows.push_back(e);
        }
    }
    // MoEAllGatherTokenDispatcher gathers [(S/TP)·B, H] from every rank of the tp_ep group (Megatron-Core's
    // expert tensor × expert model parallel group, etp·ep ranks): ETP·EP·T tokens. Its local experts then
    // run the same R_max copies as under the all-to-all (L/E of ETP·EP·T·k).
    z.gathered = x.etp * x.ep * z.T;
    z.n = x.experts;
    // TEGroupedMLP under expert TP: fc1 column-parallel, fc2 row-parallel over the etp ranks
    // (moe/experts.py, tp_group = expt_tp; moe_validation.cc checks that etp divides the width).
    z.f = x.moe_ffn / x.etp;
    z.f_in = (x.swiglu ? 2 : 1) * z.f;
    return z;
}

}  // namespace trainsim::workload
