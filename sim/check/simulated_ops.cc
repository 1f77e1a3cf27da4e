#include "sim/check/simulated_ops.h"

#include <algorithm>

namespace trainsim::check {

std::vector<OpSample> simulated_ops(const program::IterationProgram& prog, const engine::RunResult& run) {
    std::vector<OpSample> samples;
    for (std::size_t t = 0; t < prog.program.size(); ++t) {
        const program::TaskInfo info = prog.info[t];
        const auto id = engine::TaskId::from_index(t);
        for (const program::OpSpan& span : program::op_spans(prog, id, run.timings[t])) {
            OpSample s;
            s.gpu = info.gpu.value();
            s.name = span.op != nullptr ? span.op->name : prog.describe(id);
            s.phase = program::to_string(info.phase);
            s.category = program::to_string(info.category);
            // As the trace names it: no layer outside the layers (the embedding's own memory key included).
            s.layer = std::max(info.layer, -1);
            if (info.microbatch >= 0) {
                s.microbatch = info.microbatch;
                s.chunk = info.chunk;
            }
            if (span.op != nullptr && span.op->kind == workload::OpKind::Gemm) {
                s.gemm = span.op->gemm;
            } else if (span.op != nullptr && span.op->kind == workload::OpKind::Collective) {
                s.collective = span.op->collective;
                s.collective_bytes = span.op->collective_bytes;
            }
            s.start = span.start;
            s.duration = span.end - span.start;
            samples.push_back(std::move(s));
        }
    }
    return samples;
}

}  // namespace trainsim::check
