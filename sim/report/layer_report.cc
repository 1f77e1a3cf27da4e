#include "sim/report/layer_report.h"

#include <algorithm>
#include <limits>

#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"

namespace trainsim::report {

LayerReport make_layer_report(const config::Scenario& sc, const cost::CostModel& cost,
                              const program::IterationProgram& prog, const engine::RunResult& run) {
    LayerReport r;
    r.name = sc.name;
    SimTime begin[2] = {SimTime::max(), SimTime::max()};
    SimTime end[2] = {};
    SimTime recompute{};
    for (std::size_t t = 0; t < prog.program.size(); ++t) {
        const program::TaskInfo& info = prog.info[t];
        const engine::TaskTiming& timing = run.timings[t];
        const int phase = info.phase == program::Phase::Forward ? 0 : 1;
        begin[phase] = std::min(begin[phase], timing.start);
        end[phase] = std::max(end[phase], timing.end);
        if (info.category == program::TaskCategory::Recompute) {
            recompute += timing.end - timing.start;
        }
        const std::string& stream =
            prog.program.streams()[prog.program.stream(engine::TaskId::from_index(t)).index()].name;
        for (const program::OpSpan& span : program::op_spans(prog, engine::TaskId::from_index(t), timing)) {
            // A task without ops (the host-bound idle before a list, a pipeline transfer) is named
            // by its description, as the traces name it.
            const bool op = span.op != nullptr;
            r.ops.push_back(LayerOpTiming{
                op ? span.op->name : prog.describe(engine::TaskId::from_index(t)), stream,
                program::to_string(info.phase), program::to_string(info.category), to_seconds(span.start),
                to_seconds(span.end - span.start), op ? span.op->flops() : Flops{}});
        }
    }
    r.forward = to_seconds(end[0] - begin[0]);
    r.backward = to_seconds(end[1] - begin[1]);
    r.recompute = to_seconds(recompute);
    r.activation_bytes =
        workload::layer_activation_bytes(workload::layer_shape_of(sc), sc.training.recompute_granularity);
    r.warnings = cost.warnings();
    return r;
}

}  // namespace trainsim::report
