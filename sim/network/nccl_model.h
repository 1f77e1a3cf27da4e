// NCCL's own cost model for choosing a collective's algorithm and protocol (src/graph/tuning.cc of
// NVIDIA/nccl @5067397: ncclTopoTuneModel and ncclTopoGetAlgoTime; hardware.md §5.2): for each
// algorithm (ring, tree) and protocol (LL, LL128, Simple) a latency and a bandwidth, and NCCL runs the
// pair of least latency + bytes / bandwidth. The constants below are NCCL's defaults, cited by name.
#pragma once

#include <cstdint>

#include "sim/core/units.h"
#include "sim/cost/cost_model.h"

namespace trainsim::network {

enum class Algorithm : std::uint8_t { Ring, Tree };
enum class Protocol : std::uint8_t { LL, LL128, Simple };
/// The compute-capability row of NCCL's tables (index NCCL_{VOLTA,AMPERE,HOPPER,BLACKWELL}_COMPCAP_IDX).
enum class GpuGeneration : std::uint8_t { Volta, Ampere, Hopper, Blackwell };

[[nodiscard]] const char* to_string(Algorithm a);
[[nodiscard]] const char* to_string(Protocol p);

/// What NCCL knows of a communicator when it tunes: its size and spread, and its graph's channels.
struct Communicator {
    std::int64_t ranks = 2;
    std::int64_t nodes = 2;
    std::int64_t channels = 1;       // ring/tree channels (one per NIC the group drives, across nodes)
    double bw_per_channel_GBps = 0;  // the graph's per-channel bandwidth (bwIntra, or bwInter > 2 nodes)
    GpuGeneration generation = GpuGeneration::Ampere;
    bool amd_host = false;  // NCCL's cpuVendor: AMD hosts get other LL caps and a 2 µs network overhead
};

struct AlgorithmChoice {
    Algorithm algorithm = Algorithm::Ring;
    Protocol protocol = Protocol::Simple;
    double latency_us = 0.0;
    /// NCCL's "bandwidth" of the pair: algorithm bandwidth, time = latency + bytes / this.
    double algbw_GBps = 0.0;
    [[nodiscard]] Seconds time(Bytes bytes) const {
        return Seconds{latency_us * 1e-6 + static_cast<double>(bytes.value) / (algbw_GBps * 1e9)};
    }
};

/// NCCL's estimate for one (algorithm, protocol); algbw 0 when NCCL would not use it.
[[nodiscard]] AlgorithmChoice nccl_estimate(cost::CollectiveKind kind, const Communicator& comm, Algorithm a,
                                            Protocol p, Bytes bytes);

/// The (algorithm, protocol) NCCL picks for `bytes`: the least estimated time (ties go to the first in
/// NCCL's loop order, tree before ring and LL before LL128 before Simple).
[[nodiscard]] AlgorithmChoice nccl_choose(cost::CollectiveKind kind, const Communicator& comm, Bytes bytes);

}  // namespace trainsim::network
