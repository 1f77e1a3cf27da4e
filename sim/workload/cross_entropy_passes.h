// HBM traffic of Megatron-Core's vocab-parallel cross-entropy, per logit element on one rank
// (training.cross_entropy_loss_fusion). The loss runs in fp32 on the 16-bit logits, so each elementwise
// pass over the s·b·v/t logits moves 4-byte elements. They grow with the vocabulary, not the hidden size,
// so they weigh most on small models with large vocabularies (Nemotron's 256k, Llama 3's 128k).
#pragma once

#include <cstdint>
#include <optional>

#include "sim/workload/element_bytes.h"

namespace trainsim::workload {

struct CrossEntropyBytes {
    std::int64_t forward = 0;   // bytes read + written per logit element in the loss's forward
    std::int64_t backward = 0;  // ... in its backward, down to the 16-bit gradient of the logits
};

/// Passes as Megatron-Core 0.8 (NeMo 24.07) runs them, by `fused` (training.cross_entropy_loss_fusion);
/// the per-token gathers, masks and TP all-reduces touch s·b elements, not s·b·v/t, and are left out.
/// Unfused (tensor_parallel/cross_entropy.py, eager PyTorch, one kernel a line): forward
/// logits.float() (read 2, write 4), max (read 4), in-place − max (read 4, write 4), exp (read 4,
/// write 4), sum (read 4), in-place ÷ sum (read 4, write 4): 38; backward the in-place × grad_output
/// (read 4, write 4) and the .float()'s backward to 16 bits (read 4, write 2): 14.
/// Fused (fusions/fused_cross_entropy.py: jit_fuser is torch.compile on PyTorch >= 2.2, megatron/core/
/// jit.py; taken as one kernel per compiled function): calculate_logits_max (read 2, write the fp32
/// copy 4), calculate_predicted_logits (− max, exp and sum; read 4, write 4), calculate_cross_entropy_loss
/// (÷ sum; read 4, write 4): 22; calculate_gradients (× grad_output and the cast to bf16, writing the
/// mutated softmax input back: read 4, write 4 + 2): 10.
/// Unset: trainsim's earlier estimate, one pass that reads the 16-bit logits and writes and re-reads
/// fp32 exp(logits) (10), and one that reads the fp32 softmax and writes the 16-bit gradient (6); kept as
/// the default so that existing results do not move. It is below what either version moves.
[[nodiscard]] constexpr CrossEntropyBytes cross_entropy_bytes_per_logit(std::optional<bool> fused) {
    constexpr std::int64_t pass = 2 * kFp32Bytes;  // one fp32 read and one fp32 write
    if (!fused) {
        return {kActivationBytes + pass, kFp32Bytes + kActivationBytes};
    }
    if (*fused) {
        return {kActivationBytes + kFp32Bytes + 2 * pass, pass + kActivationBytes};
    }
    return {kActivationBytes + kFp32Bytes + kFp32Bytes + 3 * pass + kFp32Bytes,
            pass + kFp32Bytes + kActivationBytes};
}

}  // namespace trainsim::workload
