// Collectives between threads, one thread per rank, as the CPU stand-in for NCCL inside a node: all-reduce
// (reduce-scatter then all-gather, each rank owning one chunk), all-gather, reduce-scatter and send/recv
// around a ring, over per-rank buffers in shared memory. The calling thread is rank 0 and times the call
// from the start barrier to the end barrier, as nccl-tests times a collective.
#pragma once

#include <memory>

#include "calibrate/bench/backend.h"

namespace trainsim::calibrate {

/// A group of c.ranks threads (started now, joined when the op is destroyed) running collective `c`.
[[nodiscard]] std::unique_ptr<TimedOp> make_thread_collective(const CollectiveCase& c);

}  // namespace trainsim::calibrate
