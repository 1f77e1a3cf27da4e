// A real job's profiler trace against the simulated iteration: the trace's kernels carry no layer or
// phase, so GEMM calls are paired with simulated GEMMs of the same shape (m, n, k, batch, or its
// transpose) and NCCL collectives with simulated collectives of the same kind and size, each in its pass:
// calls launched on the thread of the ProfilerStep annotations are the forward's (and the optimizer's),
// calls on another thread (PyTorch's autograd engine) the backward's. Each simulated op is compared with
// the mean of the measured calls of its shape and pass, so ops of one shape and pass share it.
#pragma once

#include <cstdint>
#include <vector>

#include "calibrate/import/kineto_trace.h"
#include "sim/check/comparison.h"

namespace trainsim::check {

/// Compares the simulated ops of simulated GPU `gpu` with every trace (each one rank's, the same stage).
[[nodiscard]] Comparison compare_by_kernels(const std::vector<OpSample>& simulated,
                                            const std::vector<kineto::Trace>& traces, std::int64_t gpu);

}  // namespace trainsim::check
