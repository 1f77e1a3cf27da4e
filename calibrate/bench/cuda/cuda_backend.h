// The CUDA backend: cuBLASLt GEMMs and the layer's kernels on GPU 0 (or this process's GPU), NCCL
// collectives over the node's GPUs or over every process of a launched group. Built only with CUDA; this
// header needs no CUDA headers, so the command line can include it.
#pragma once

#include <memory>
#include <string>

#include "calibrate/bench/backend.h"

namespace trainsim::calibrate {

struct CudaOptions {
    int nodes = 1;               // nodes a launched group of processes spans
    std::string bootstrap_file;  // where rank 0 leaves NCCL's id for the others
};

/// Whether the CUDA runtime sees a GPU (run's default backend is cuda only then).
[[nodiscard]] bool cuda_device_available();

/// Throws InputError when there is no GPU, or a launched group without a bootstrap file.
[[nodiscard]] std::unique_ptr<Backend> make_cuda_backend(const CudaOptions& options);

}  // namespace trainsim::calibrate
