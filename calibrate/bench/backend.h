// What a benchmark backend provides: the device's facts and, for each case of the plan, an operation to
// time. The harness (harness.h) is the same for every backend; a backend knows only how to run and time.
#pragma once

#include <memory>
#include <string>

#include "calibrate/bench/bench_plan.h"
#include "calibrate/measure/measurement.h"

namespace trainsim::calibrate {

/// One prepared operation with its buffers. seconds_per_call runs `calls` back-to-back calls and returns
/// their mean time, measured by the backend's own clock (CUDA events, a steady clock).
class TimedOp {
public:
    virtual ~TimedOp() = default;
    [[nodiscard]] virtual double seconds_per_call(int calls) = 0;
};

class Backend {
public:
    virtual ~Backend() = default;

    [[nodiscard]] virtual std::string name() const = 0;   // "cpu", "cuda"
    [[nodiscard]] virtual std::string dtype() const = 0;  // element type of its GEMMs and kernels
    /// Whether it can also run FP8 GEMMs (GemmCase::fp8): CUDA on compute capability 8.9 and later.
    [[nodiscard]] virtual bool supports_fp8() const { return false; }
    [[nodiscard]] virtual DeviceFacts facts() const = 0;
    /// Whether this process writes the output (rank 0 of a multi-process run).
    [[nodiscard]] virtual bool writes_output() const { return true; }
    /// Nodes the collectives span.
    [[nodiscard]] virtual int nodes() const { return 1; }

    /// Bytes a kernel case reads plus writes, as the simulator counts them for that kind.
    [[nodiscard]] virtual std::int64_t bytes_moved(const KernelCase& kernel) const = 0;

    [[nodiscard]] virtual std::unique_ptr<TimedOp> gemm(const GemmCase& gemm) = 0;
    [[nodiscard]] virtual std::unique_ptr<TimedOp> kernel(const KernelCase& kernel) = 0;
    [[nodiscard]] virtual std::unique_ptr<TimedOp> collective(const CollectiveCase& collective) = 0;
};

/// The simulator's byte count for a kernel over `elements` elements of `element_bytes` (sim/workload):
/// reads plus writes of the activations, one byte per dropout-mask element, Adam's 30 bytes of fp32 state
/// and a 16-bit weight per parameter (4 reads + 3 writes of fp32, 1 write of 16 bits).
[[nodiscard]] std::int64_t kernel_bytes_moved(KernelKind kind, std::int64_t elements,
                                              std::int64_t element_bytes);

}  // namespace trainsim::calibrate
