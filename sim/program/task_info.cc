#include "sim/program/task_info.h"

namespace trainsim::program {

const char* to_string(TaskCategory c) {
    switch (c) {
    case TaskCategory::Compute:
        return "compute";
    case TaskCategory::Recompute:
        return "recompute";
    case TaskCategory::Optimizer:
        return "optimizer";
    case TaskCategory::TensorComm:
        return "tp_comm";
    case TaskCategory::PipelineComm:
        return "pp_comm";
    case TaskCategory::DataComm:
        return "dp_comm";
    }
    return "?";
}

const char* to_string(Phase p) {
    switch (p) {
    case Phase::Forward:
        return "forward";
    case Phase::Backward:
        return "backward";
    case Phase::Iteration:
        return "iteration";
    }
    return "?";
}

}  // namespace trainsim::program
