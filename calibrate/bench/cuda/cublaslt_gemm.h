// bf16 GEMMs through cuBLASLt with fp32 accumulation, as Megatron runs them: C[m,n] = A[m,k]·B[k,n] in
// row-major, strided-batched for core attention, with cuBLASLt's first heuristic algorithm and a 32 MiB
// workspace.
#pragma once

#include <memory>

#include "calibrate/bench/backend.h"

namespace trainsim::calibrate::cuda {

/// A cuBLASLt handle, shared by the GEMMs of a run.
class CublasLt {
public:
    CublasLt();
    CublasLt(const CublasLt&) = delete;
    CublasLt& operator=(const CublasLt&) = delete;
    ~CublasLt();
    [[nodiscard]] void* handle() const { return handle_; }

private:
    void* handle_ = nullptr;  // cublasLtHandle_t, kept opaque so that this header needs no CUDA headers
};

[[nodiscard]] std::unique_ptr<TimedOp> make_cublaslt_gemm(const CublasLt& lt, const GemmCase& gemm);

}  // namespace trainsim::calibrate::cuda
