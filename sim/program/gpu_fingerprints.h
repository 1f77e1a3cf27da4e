// Per-GPU fingerprints of a run (after OMNeT++'s cFingerprintCalculator, which hashes events as they
// execute): each simulated GPU's tasks hashed in the order they completed, so a golden test that fails
// can name the first GPU whose behaviour changed rather than only "the run differs".
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"

namespace trainsim::program {

/// FNV-1a (64-bit) per simulated GPU over (task, start, end) of its tasks in completion order (end time,
/// then task id: the engine's tie rule). Indexed like IterationProgram::gpus.
[[nodiscard]] std::vector<std::uint64_t> gpu_fingerprints(const IterationProgram& program,
                                                          const engine::RunResult& run);

}  // namespace trainsim::program
