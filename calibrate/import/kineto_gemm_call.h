// A GEMM's shape and dtype from the CPU op that launched it, as PyTorch records them with
// record_shapes=True ("Input Dims", "Input type"), in the simulator's convention: C[m×n] = A[m×k]·B[k×n],
// `batch` independent products.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "calibrate/import/kineto_trace.h"

namespace trainsim::kineto {

struct GemmCall {
    std::int64_t m = 0;
    std::int64_t n = 0;
    std::int64_t k = 0;
    std::int64_t batch = 1;
    std::string dtype;  // "bf16", "fp16", "fp32", "fp64", "fp8"; empty when the trace does not say
};

/// aten::mm [[m,k],[k,n]], addmm [bias,[m,k],[k,n]], bmm [[b,m,k],[b,k,n]], baddbmm [C,[b,m,k],[b,k,n]],
/// linear [[…,k],[n,k],…] (m the product of the leading dims), matmul of 2-D or 3-D operands, _scaled_mm
/// as mm. Empty for another op, an op without Input Dims, or dims whose inner sizes disagree.
[[nodiscard]] std::optional<GemmCall> gemm_call(const Trace& trace, const CpuOp& op);

/// The simulator's dtype name for a PyTorch scalar type ("c10::BFloat16" → "bf16"); empty if unknown.
[[nodiscard]] std::string dtype_name(std::string_view torch_type);

/// Bytes per element of a dtype as NCCL args name it ("Float", "BFloat16", "Half", "Long", ...); 0 if
/// unknown.
[[nodiscard]] int element_bytes(std::string_view dtype);

/// A kernel of a GEMM library: cuBLAS/cuBLASLt (sm80_xmma_gemm_*, ampere_*gemm*, *splitKreduce*),
/// CUTLASS, or a name containing "gemm"/"gemv" (FBGEMM's embedding kernels excepted).
[[nodiscard]] bool is_gemm_kernel(std::string_view kernel_name);

}  // namespace trainsim::kineto
