// The memory-bound kernels Transformer Engine runs around the attention steps of context parallelism's
// p2p ring (cp_comm_type p2p; TE v1.8, NeMo 24.07's, transformer_engine/pytorch/attention.py
// AttnFuncWithCP): packing K and V into the ring's buffer, the contiguous copy of the half chunk a step
// attends, merging each step's partial output by its log-sum-exp, and accumulating each step's dQ and
// dK/dV. Bytes are for 16-bit tensors on the rank that does the most of them, the last of the c ranks:
// it attends every arriving chunk with both its query chunks, so all its merges are whole-tensor ones.
// The per-row log-sum-exp statistics (1/d of the output) are left out.
#pragma once

#include <cstdint>

#include "sim/workload/element_bytes.h"

namespace trainsim::workload {

/// Elements on one rank for one micro-batch: the queries (as many as the attention output and dQ) and
/// the keys plus the values (as many as dK plus dV).
struct CpRingTensors {
    std::int64_t q = 0;
    std::int64_t kv = 0;
};

/// Forward and backward, before the first step: torch.cat of K and V into the first ring buffer
/// (forward), the copy of the saved KV into it (backward): read and write K and V.
[[nodiscard]] constexpr std::int64_t cp_kv_pack_bytes(const CpRingTensors& t) {
    return 2 * t.kv * kActivationBytes;
}

/// Before each step i ≥ 1 (forward and backward): the keys and values of the arriving chunk pair that
/// the causal mask lets the rank see, kv[:, 0].contiguous(), half of K and V read and written.
[[nodiscard]] constexpr std::int64_t cp_kv_half_bytes(const CpRingTensors& t) {
    return t.kv * kActivationBytes;
}

/// After the c forward steps: out zero-filled, then flash_attn_fwd_out_correction for each step, which
/// scales the step's output by exp(lse_step − lse) and adds it into out (read out and the step's output,
/// write out).
[[nodiscard]] constexpr std::int64_t cp_out_merge_bytes(const CpRingTensors& t, std::int64_t cp) {
    return t.q * kActivationBytes + cp * 3 * t.q * kActivationBytes;
}

/// After backward step i: the step's dQ into dq (a copy at step 0, read 1 write 1; then dq.add_, read 2
/// write 1), its dK and dV concatenated into one dKV (torch.cat, fused attention only: read and write
/// the step's dK and dV), and that added into the dKV that travels the ring (dkv.add_; a copy at step
/// 0). Steps i ≥ 1 see half the keys and values (cp_kv_half_bytes), so their dK and dV are half.
[[nodiscard]] constexpr std::int64_t cp_grad_merge_bytes(const CpRingTensors& t, std::int64_t step) {
    if (step == 0) {
        return (2 * t.q + 2 * t.kv + 2 * t.kv) * kActivationBytes;
    }
    const std::int64_t half_kv = t.kv / 2;
    return (3 * t.q + 2 * half_kv + 3 * half_kv) * kActivationBytes;
}

}  // namespace trainsim::workload
