// Measurements from a PyTorch profiler (Kineto) trace of a real training job: every GEMM call whose op
// recorded its shapes, every NCCL kernel whose collective, size and group the trace records, and every
// device-to-device copy with its bytes. Each record cites the file, the kernel and its timestamp.
#pragma once

#include <string>

#include "calibrate/measure/measurement.h"

namespace trainsim::calibrate {

struct KinetoImportOptions {
    /// GPUs per node, to tell whether a collective's group spans nodes: ranks r are on node r / this
    /// (torchrun's default placement).
    int gpus_per_node = 8;
};

/// True for a file that is gzip-compressed or whose first 64 KiB are a JSON object with
/// "traceEvents", "schemaVersion" or "deviceProperties" (a Kineto or Chrome trace).
[[nodiscard]] bool looks_like_kineto_trace(const std::string& path);

/// Reads the trace (streamed) and converts what it can into records; the set's warnings say what was
/// left out and why. Throws InputError "PATH: RULE" for an unusable trace: unreadable or truncated,
/// no GPU activity (a CPU-only trace, or only ROCm/MTIA devices, named), or nothing a record can be
/// made of.
[[nodiscard]] MeasurementSet import_kineto_trace(const std::string& path,
                                                 const KinetoImportOptions& options = {});

}  // namespace trainsim::calibrate
