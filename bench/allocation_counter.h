// Counts heap allocations and live heap bytes of the benchmark process, so that a benchmark can
// report allocations per event and bytes per simulated GPU next to its time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainsim::bench {

struct AllocationStats {
    std::uint64_t allocations = 0;  // calls to operator new since reset
    std::int64_t live_bytes = 0;    // bytes allocated and not yet freed
    std::int64_t peak_bytes = 0;    // the largest live_bytes since reset
};

/// The counts so far.
[[nodiscard]] AllocationStats allocation_stats();

/// Starts a new measurement: zero allocations, peak = the bytes live now.
void reset_allocation_stats();

}  // namespace trainsim::bench
