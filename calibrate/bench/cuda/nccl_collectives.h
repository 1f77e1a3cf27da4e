// NCCL collectives over sizes, timed with CUDA events the way nccl-tests times them: inside one node one
// process drives every local GPU (a communicator per group size, created on first use), across nodes each
// process drives its GPU in a communicator over all processes.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "calibrate/bench/backend.h"
#include "calibrate/bench/cuda/process_group.h"

namespace trainsim::calibrate::cuda {

class NcclGroups {
public:
    /// One process, `devices` local GPUs.
    explicit NcclGroups(int devices);
    /// One process of a launched group; the id comes through `bootstrap_file`.
    NcclGroups(const ProcessRank& me, const std::string& bootstrap_file);
    NcclGroups(const NcclGroups&) = delete;
    NcclGroups& operator=(const NcclGroups&) = delete;
    ~NcclGroups();

    [[nodiscard]] bool multi_process() const { return process_.world > 1; }
    [[nodiscard]] const ProcessRank& process() const { return process_; }

    /// A timed collective over `c.ranks` ranks (the first c.ranks GPUs; or all processes).
    [[nodiscard]] std::unique_ptr<TimedOp> collective(const CollectiveCase& c);

private:
    // The communicators of the first `ranks` local GPUs, one per GPU.
    const std::vector<void*>& local_comms(int ranks);

    int devices_ = 0;
    ProcessRank process_;
    std::map<int, std::vector<void*>> comms_;  // ncclComm_t, opaque here
};

}  // namespace trainsim::calibrate::cuda
