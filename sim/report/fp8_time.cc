#include "sim/report/fp8_time.h"

#include <string_view>

#include "sim/report/stage_compute_ops.h"

namespace trainsim::report {

Fp8Time fp8_time(const program::IterationProgram& prog, double split_accumulator_slowdown) {
    Fp8Time t;
    double split_extra = 0;  // seconds, summed before the mean over stages
    SimTime fp8{};
    SimTime bf16{};
    SimTime overhead{};
    for_each_stage_compute_op(prog, [&](const workload::Op& op, SimTime d) {
        if (op.kind == workload::OpKind::Gemm) {
            (cost::is_fp8(op.gemm_precision) ? fp8 : bf16) += d;
            if (op.gemm_precision == cost::GemmPrecision::Fp8SplitAccumulator) {
                split_extra += to_seconds(d).value * (1.0 - 1.0 / split_accumulator_slowdown);
            }
        } else if (std::string_view(op.name).starts_with("fp8.")) {
            overhead += d;
        }
    });
    const double n = stage_count(prog);
    t.fp8_gemm = Seconds{to_seconds(fp8).value / n};
    t.bf16_gemm = Seconds{to_seconds(bf16).value / n};
    t.overhead = Seconds{to_seconds(overhead).value / n};
    t.split_accumulator = Seconds{split_extra / n};
    return t;
}

}  // namespace trainsim::report
