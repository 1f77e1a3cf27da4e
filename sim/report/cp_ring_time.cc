#include "sim/report/cp_ring_time.h"

#include <string_view>

#include "sim/report/stage_compute_ops.h"

namespace trainsim::report {

Seconds cp_ring_kernel_time(const program::IterationProgram& prog) {
    SimTime total{};
    for_each_stage_compute_op(prog, [&](const workload::Op& op, SimTime d) {
        if (op.kind == workload::OpKind::MemoryBound && std::string_view(op.name).starts_with("attn.cp_")) {
            total += d;
        }
    });
    return Seconds{to_seconds(total).value / stage_count(prog)};
}

}  // namespace trainsim::report
