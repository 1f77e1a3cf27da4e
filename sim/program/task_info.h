// What each engine task is, in the workload's terms: the engine only sees durations and dependencies,
// the report needs to know which were recompute, which were communication, and for which micro-batch.
#pragma once

#include <cstdint>

#include "sim/core/units.h"
#include "sim/parallel/layout.h"

namespace trainsim::program {

/// The time-breakdown category of a task.
enum class TaskCategory : std::uint8_t {
    Compute,       // forward and backward GEMMs and kernels
    Recompute,     // re-executed forward work
    Optimizer,     // the optimizer step
    TensorComm,    // tensor-parallel collectives
    PipelineComm,  // pipeline sends and receives
    DataComm,      // data-parallel, embedding and gradient-norm collectives
};

enum class Phase : std::uint8_t { Forward, Backward, Iteration };

[[nodiscard]] const char* to_string(TaskCategory c);
[[nodiscard]] const char* to_string(Phase p);
[[nodiscard]] inline bool is_communication(TaskCategory c) {
    return c == TaskCategory::TensorComm || c == TaskCategory::PipelineComm || c == TaskCategory::DataComm;
}

/// One engine task in workload terms. A compute task is a segment: consecutive ops of one op list
/// that run back to back on the compute stream with nothing else to wait for (ops [first_op,
/// first_op + op_count) of IterationProgram::priced[priced]); a communication task is one op, or a
/// pipeline transfer (priced = -1).
struct TaskInfo {
    std::int32_t gpu = 0;  // index into IterationProgram::gpus
    TaskCategory category = TaskCategory::Compute;
    Phase phase = Phase::Forward;
    std::int32_t microbatch = -1;
    std::int32_t chunk = -1;
    std::int32_t layer = -1;  // global layer index, -1 outside the transformer layers
    std::int32_t priced = -1;
    std::uint16_t first_op = 0;
    std::uint16_t op_count = 0;
    std::int32_t peer_stage = -1;  // pipeline transfers: the stage at the other end
    Flops flops{0.0};
    Bytes saved{0};  // activation bytes the task's ops leave allocated for the backward
};

/// One simulated GPU: its place in the layout and its streams.
struct SimulatedGpu {
    parallel::Coordinates coordinates;
    std::int32_t compute_stream = -1;
    std::int32_t recompute_stream = -1;  // background stream of overlapped recomputation, if any
};

}  // namespace trainsim::program
