#include "sim/report/fp8_time.h"

#include <string_view>

namespace trainsim::report {

Fp8Time fp8_time(const program::IterationProgram& prog, double split_accumulator_slowdown) {
    Fp8Time t;
    double split_extra = 0;  // seconds, summed before the mean over stages
    SimTime fp8 = 0;
    SimTime bf16 = 0;
    SimTime overhead = 0;
    for (const program::TaskInfo& info : prog.info) {
        const parallel::Coordinates& at = prog.gpus[static_cast<std::size_t>(info.gpu)].coordinates;
        const bool compute = info.category == program::TaskCategory::Compute ||
                             info.category == program::TaskCategory::Recompute;
        if (at.tp != 0 || at.dp != 0 || !compute || info.priced < 0) {
            continue;
        }
        const program::PricedOps& priced = prog.priced[static_cast<std::size_t>(info.priced)];
        for (std::size_t i = info.first_op; i < static_cast<std::size_t>(info.first_op) + info.op_count;
             ++i) {
            const workload::Op& op = (*priced.ops)[i];
            const SimTime d = priced.durations[i];
            if (op.kind == workload::OpKind::Gemm) {
                (cost::is_fp8(op.gemm_precision) ? fp8 : bf16) += d;
                if (op.gemm_precision == cost::GemmPrecision::Fp8SplitAccumulator) {
                    split_extra += to_seconds(d).value * (1.0 - 1.0 / split_accumulator_slowdown);
                }
            } else if (std::string_view(op.name).starts_with("fp8.")) {
                overhead += d;
            }
        }
    }
    std::int64_t stages = 0;
    for (const program::SimulatedGpu& g : prog.gpus) {
        stages += g.coordinates.tp == 0 && g.coordinates.dp == 0 ? 1 : 0;
    }
    const double n = stages > 0 ? static_cast<double>(stages) : 1.0;
    t.fp8_gemm = Seconds{to_seconds(fp8).value / n};
    t.bf16_gemm = Seconds{to_seconds(bf16).value / n};
    t.overhead = Seconds{to_seconds(overhead).value / n};
    t.split_accumulator = Seconds{split_extra / n};
    return t;
}

}  // namespace trainsim::report
