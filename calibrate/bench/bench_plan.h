// What `run` measures: GEMM shapes, memory-bound kernels and collectives, from a scenario (every distinct
// GEMM the simulator will ask the cost model for, the layer's tensors, its tensor-parallel collectives)
// and from log-spaced grids around them, so that the fitted curves cover the scenario and its neighbours.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/measure/measurement.h"
#include "sim/config/scenario.h"

namespace trainsim::calibrate {

struct GemmCase {
    cost::GemmShape shape;
    cost::GemmClass cls = cost::GemmClass::Dense;
    bool fp8 =
        false;  // FP8 (E4M3) inputs, BF16 output: Transformer Engine's GEMMs (compute capability >= 8.9)
    /// FP8 only: partial sums promoted to FP32 (cuBLASLt CUBLASLT_MATMUL_DESC_FAST_ACCUM 0), as Transformer
    /// Engine runs dgrad and wgrad; false is fast accumulation, as TE runs the forward.
    bool split_accumulator = false;
};

/// A memory-bound kernel over `elements` elements; row-wise kernels (LayerNorm, softmax, bias-GeLU,
/// bias-dropout-add) work on rows of `row` elements. The backend's element size gives the bytes moved.
struct KernelCase {
    KernelKind kind = KernelKind::Copy;
    std::int64_t elements = 0;
    std::int64_t row = 1;
};

struct CollectiveCase {
    cost::CollectiveKind op = cost::CollectiveKind::AllReduce;
    int ranks = 2;
    std::int64_t bytes = 0;
};

struct Timing {
    int iterations = 0;           // fixed iterations per benchmark; 0: Google Benchmark's adaptive count
    double min_time_s = 0.1;      // with adaptive iterations
    int repetitions = 1;          // > 1: the median of the repetitions is reported
    int calls_per_iteration = 1;  // back-to-back calls timed together (a GPU's launch overlap)
};

struct BenchPlan {
    std::vector<GemmCase> gemms;
    std::vector<KernelCase> kernels;
    std::vector<CollectiveCase> collectives;
    Timing timing;
    Timing collective_timing;  // fixed iterations: every rank of a multi-process run must agree
};

struct PlanOptions {
    std::vector<config::Scenario> scenarios;  // each one's cases, once each (a shape two share is timed once)
    std::int64_t gemm_min_dim = 128;          // cubes m = n = k from here, doubling
    std::int64_t gemm_max_dim = 8192;
    double max_gemm_flops = 0.0;  // > 0: larger GEMMs (grid or scenario) are left out (a CPU's patience)
    std::int64_t kernel_min_elements = 1 << 12;  // quadrupling
    std::int64_t kernel_max_elements = 1 << 28;
    std::int64_t kernel_row = 4096;               // row length of row-wise grid kernels
    std::int64_t collective_min_bytes = 1 << 10;  // quadrupling
    std::int64_t collective_max_bytes = std::int64_t{1} << 30;
    std::vector<int> group_sizes = {2, 4, 8};
    int nodes = 1;
    /// The scenario's cases beyond the limits (GEMM FLOPs, kernel elements, collective bytes, ranks) are
    /// scaled down to them, keeping their aspect, rather than left out: a CPU still measures a case of
    /// each kind the scenario has. Each scaled case is listed in `notes`.
    bool scale_to_fit = false;
    Timing timing;
    Timing collective_timing;
};

/// The plan: grids first, then the scenarios' cases in order, without repeats. `notes` lists what the flop
/// limit or the available ranks excluded (or, with scale_to_fit, scaled), one line each.
[[nodiscard]] BenchPlan make_plan(const PlanOptions& options, std::vector<std::string>& notes);

/// `shape` with m, n and k scaled by one factor (and then the batch) so that its FLOPs are at most
/// `max_flops`; each dimension at least 1.
[[nodiscard]] cost::GemmShape scaled_to(const cost::GemmShape& shape, double max_flops);

/// Every distinct GEMM of the scenario's transformer layer (forward, input-gradient and weight-gradient,
/// the recompute policy's extra forward) and of the output layer's logits, as the simulator prices them.
[[nodiscard]] std::vector<GemmCase> scenario_gemms(const config::Scenario& scenario);

}  // namespace trainsim::calibrate
