// Streams a PyTorch profiler (Kineto) trace, `.json` or `.json.gz`, into a kineto::Trace: one trace
// event at a time through nlohmann's SAX interface, so memory grows with the kernels and launches kept,
// not with the file (a 1 GB trace needs a few hundred MB, not ten GB).
#pragma once

#include <string>

#include "calibrate/import/kineto_trace.h"

namespace trainsim::kineto {

/// Reads the trace at `path`. Formats: PyTorch 1.8 to 2.x ("cat" kernel/Kernel, cuda_runtime/Runtime,
/// cpu_op/Operator; integer or fractional microsecond timestamps, or nanoseconds with
/// "displayTimeUnit": "ns"). Activities of ROCm and MTIA devices are named in Trace::skipped and left
/// out. Throws InputError "PATH: RULE" for a file that cannot be opened, is not JSON (or ends early:
/// "truncated"), or has no traceEvents array.
[[nodiscard]] Trace read_trace(const std::string& path);

}  // namespace trainsim::kineto
