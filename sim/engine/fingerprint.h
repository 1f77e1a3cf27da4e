// A fingerprint of a run (after OMNeT++'s cFingerprintCalculator): a hash of every task's start and end
// in task order. Any change in behaviour changes it; golden values catch changes nobody intended.
#pragma once

#include <cstdint>
#include <string>

#include "sim/engine/simulator.h"

namespace trainsim::engine {

/// FNV-1a (64-bit) over (task, start, end) for every task, then the makespan.
[[nodiscard]] std::uint64_t fingerprint(const RunResult& run);

/// The fingerprint as 16 hex digits.
[[nodiscard]] std::string fingerprint_hex(const RunResult& run);

}  // namespace trainsim::engine
