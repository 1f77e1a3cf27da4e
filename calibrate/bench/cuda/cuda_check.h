// Error checks for the CUDA runtime, cuBLASLt and NCCL: a failed call throws with the call, where it was
// and the library's own message; the harness reports it as a skipped benchmark.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

namespace trainsim::calibrate::cuda {

[[noreturn]] inline void throw_error(const char* call, const char* file, int line, const std::string& what) {
    throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                             what);
}

inline void check(cudaError_t e, const char* call, const char* file, int line) {
    if (e != cudaSuccess) {
        throw_error(call, file, line, cudaGetErrorString(e));
    }
}

inline void check(cublasStatus_t s, const char* call, const char* file, int line) {
    if (s != CUBLAS_STATUS_SUCCESS) {
        throw_error(call, file, line, cublasLtGetStatusString(s));
    }
}

inline void check(ncclResult_t r, const char* call, const char* file, int line) {
    if (r != ncclSuccess) {
        throw_error(call, file, line, ncclGetErrorString(r));
    }
}

}  // namespace trainsim::calibrate::cuda

#define TRAINSIM_CUDA_CHECK(call) ::trainsim::calibrate::cuda::check((call), #call, __FILE__, __LINE__)
