#include "sim/report/embedding_wgrad_time.h"

#include <string_view>

#include "sim/report/stage_compute_ops.h"

namespace trainsim::report {

Seconds embedding_wgrad_time(const program::IterationProgram& prog) {
    return stage_mean_op_time(prog, [](const workload::Op& op) {
        const std::string_view name = op.name;
        return op.role == workload::OpRole::Embedding &&
               (name.ends_with(".wgrad_memset") || name.ends_with(".main_grad_add"));
    });
}

}  // namespace trainsim::report
