// The zero-bubble split of a backward op list (Qi et al., ICLR 2024, §2): B, the input-gradient pass
// that the previous pipeline stage waits for, and W, the weight-gradient GEMMs that nothing downstream
// needs and a schedule may run later.
#pragma once

#include "sim/workload/op.h"

namespace trainsim::program {

struct BackwardSplit {
    workload::OpList input_gradient;   // B: every op but the wgrad GEMMs, in order
    workload::OpList weight_gradient;  // W: the ".wgrad" GEMMs, in order
};

/// Splits `backward` into B and W. Dependencies (`after`) within each part are kept and renumbered;
/// those between the parts are dropped: W runs after its B on the same compute stream, and no op of B
/// waits for a W. (Under sequence parallelism a wgrad's wait for the input all-gather issued in B is
/// dropped too: B's compute has long waited for that all-gather's successors on the TP stream.)
[[nodiscard]] BackwardSplit split_backward(const workload::OpList& backward);

/// Whether `op` belongs to W: a weight-gradient GEMM ("qkv.wgrad", "output.logits.wgrad").
[[nodiscard]] bool is_weight_gradient(const workload::Op& op);

/// Whether W reads what forward op `op` saves: a weight GEMM ("qkv", "fc2", "experts.fc1") saves its
/// input, which its ".wgrad" multiplies with the output gradient. (Attention's score and value GEMMs
/// have no weights; what the other kernels save only B reads.)
[[nodiscard]] bool saved_for_weight_gradient(const workload::Op& op);

}  // namespace trainsim::program
