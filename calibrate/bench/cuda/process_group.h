// One process per GPU across nodes, as nccl-tests runs under mpirun: the rank and world size come from
// the launcher's environment (Open MPI, PMI/MPICH, Slurm), and rank 0 hands NCCL's unique id to the others
// through a file on a shared filesystem, so that no MPI library is needed to build or run.
#pragma once

#include <string>

namespace trainsim::calibrate::cuda {

struct ProcessRank {
    int rank = 0;
    int world = 1;
    int local_rank = 0;
};

/// The launcher's rank variables; a world of 1 when the process was not launched as a group.
[[nodiscard]] ProcessRank process_rank_from_environment();

/// Rank 0 writes `bytes` (NCCL's id) to `path` whole (a temporary, then a rename); every other rank waits
/// for the file, up to `timeout_s`, and returns its contents. Throws std::runtime_error on a timeout.
[[nodiscard]] std::string exchange_through_file(const ProcessRank& me, const std::string& path,
                                                const std::string& bytes, double timeout_s);

}  // namespace trainsim::calibrate::cuda
