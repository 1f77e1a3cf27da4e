// Distributed sweeps: under `mpirun -n N trainsim sweep ...` the ranks share the grid (rank r runs the
// points still to do whose position is r modulo N, on its own worker threads) and rank 0 gathers the
// rows and writes the one CSV, in grid order, exactly as a single process would. Built only when CMake
// finds MPI (TRAINSIM_WITH_MPI); otherwise a multi-rank launch is refused rather than have every rank
// write the same file.
#pragma once

#include <ostream>

#include "sim/sweep/sweep_runner.h"

namespace trainsim::sweep {

/// Whether the process was started by an MPI launcher with more than one rank (from the environment
/// that Open MPI, MPICH and Slurm's PMI set).
[[nodiscard]] bool launched_with_several_ranks();

/// Whether this build can run a sweep over MPI ranks.
[[nodiscard]] bool built_with_mpi();

/// Runs the sweep over the MPI ranks. Rank 0 writes the output (and progress) and returns the summary;
/// the other ranks return a summary of the points they simulated. Throws InputError as run_sweep does
/// (on every rank, before any output is written).
SweepSummary run_sweep_mpi(const SweepSpec& spec, const SweepOptions& options, std::ostream& out,
                           bool* is_root);

}  // namespace trainsim::sweep
