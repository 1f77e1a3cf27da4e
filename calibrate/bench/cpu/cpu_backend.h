// The CPU backend: one core stands for one GPU (Eigen GEMMs, loops for the memory-bound kernels) and one
// thread per rank for collectives, so the whole calibration pipeline runs and is tested without a GPU.
// A CPU has no datasheet peak: the fit takes the best GEMM and streaming rates measured instead.
#pragma once

#include <memory>

#include "calibrate/bench/backend.h"

namespace trainsim::calibrate {

/// `ranks`: the threads of the largest collective group, reported as the GPUs of a node.
[[nodiscard]] std::unique_ptr<Backend> make_cpu_backend(int ranks);

}  // namespace trainsim::calibrate
