// Per-GPU slowdowns (DESIGN.md §8 "Variability"): GPUs of one SKU run the same kernels at different
// speeds (clocks, power and thermal management), and a collective or a pipeline transfer waits for its
// slowest member, so a spread costs more the more GPUs wait on each other.
#pragma once

#include <cstdint>

#include "sim/config/scenario.h"
#include "sim/parallel/layout.h"
#include "sim/program/iteration_program.h"

namespace trainsim::program {

/// E[max of n independent standard normal draws]: 0 for n = 1, 1/√π for n = 2, 3/(2√π) for n = 3;
/// numerical integration of x·n·φ(x)·Φ(x)^(n−1).
[[nodiscard]] double expected_max_standard_normal(std::int64_t n);

/// A standard normal draw for the GPU of global rank `rank` under `seed`: SplitMix64 of (seed, rank),
/// then Box–Muller. Portable (no std:: distribution) and independent of the fold, so a GPU draws the
/// same in every run with the same seed.
[[nodiscard]] double standard_normal_draw(std::int64_t seed, std::int64_t rank);

/// The factor on one kernel launch's time from run-to-run jitter (variability.kernel_jitter):
/// 1 + stddev·z, z a standard normal draw keyed by (seed, the GPU's global rank, which op list this GPU
/// lowered, which op of it), so the same seed gives the same launches the same factors. Its mean is 1:
/// jitter costs an iteration only where some GPU waits for another's slower draws. Clamped at 0.5 as
/// compute_slowdown is.
[[nodiscard]] double kernel_jitter_factor(double stddev, std::int64_t seed, std::int64_t rank,
                                          std::int64_t list, std::int64_t op);

/// The factor on every kernel's time of the simulated GPU at `at`, which stands for the GPUs `fold`
/// folds into it (its tensor-parallel peers, its data-parallel replicas); `stddev` is the profile's
/// per-GPU spread. Off: 1. Expected: 1 + stddev·E[max of the k GPUs it stands for]. Sampled: 1 +
/// stddev·(the largest of those k GPUs' draws), so a folded GPU runs at its slowest member's speed.
[[nodiscard]] double compute_slowdown(const config::VariabilityConfig& variability, double stddev,
                                      const parallel::Layout& layout, const Fold& fold,
                                      const parallel::Coordinates& at);

}  // namespace trainsim::program
