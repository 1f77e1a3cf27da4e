// Which CPU op launched each GPU activity of a Kineto trace. PyTorch ≥ 2.0 writes the launching op's
// External id on the kernel; earlier versions (and some 2.0 traces) write the correlation id there, and
// the op is then the innermost kept CPU op whose interval contains the runtime launch on its thread.
#pragma once

#include <cstdint>
#include <vector>

#include "calibrate/import/kineto_trace.h"

namespace trainsim::kineto {

/// For each entry of trace.gpu, the index into trace.cpu_ops of the op that launched it, or -1 when no
/// kept op did (a kernel of an op the reader does not keep, or a launch outside any op).
[[nodiscard]] std::vector<std::int32_t> launching_ops(const Trace& trace);

}  // namespace trainsim::kineto
