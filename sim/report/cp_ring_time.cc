#include "sim/report/cp_ring_time.h"

#include <string_view>

#include "sim/report/stage_compute_ops.h"

namespace trainsim::report {

Seconds cp_ring_kernel_time(const program::IterationProgram& prog) {
    return stage_mean_op_time(prog, [](const workload::Op& op) {
        return op.kind == workload::OpKind::MemoryBound && std::string_view(op.name).starts_with("attn.cp_");
    });
}

}  // namespace trainsim::report
