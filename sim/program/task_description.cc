#include "sim/program/iteration_program.h"

#include <memory>

#include "sim/program/op_span_visitor.h"

namespace trainsim::program {

std::string IterationProgram::describe(engine::TaskId task) const {
    const TaskInfo& i = info[task.index()];
    std::string s;
    if (i.phase != Phase::Iteration) {
        s += i.phase == Phase::Forward ? "F" : "B";
        s += std::to_string(i.microbatch) + ".c" + std::to_string(i.chunk) + " ";
    }
    if (i.layer >= 0) {
        s += "L" + std::to_string(i.layer) + " ";
    }
    if (i.category == TaskCategory::Host) {
        return s + "host launches after a synchronize";
    }
    if (i.priced < 0) {
        const std::string& stream = program.streams()[program.stream(task).index()].name;
        const std::string what = i.phase == Phase::Forward ? "activation" : "gradient";
        if (stream.rfind("pp_send", 0) == 0) {
            return s + "send " + what + " to stage " + std::to_string(i.peer_stage);
        }
        if (stream.rfind("pp_recv", 0) == 0) {
            return s + "recv " + what + " from stage " + std::to_string(i.peer_stage);
        }
        return s + "all-gather " + what + " from stage " + std::to_string(i.peer_stage);
    }
    const workload::OpList& ops = *priced[static_cast<std::size_t>(i.priced)].ops;
    s += ops[i.first_op].name;
    if (i.op_count > 1) {
        s += ".." + ops[static_cast<std::size_t>(i.first_op + i.op_count - 1)].name;
    }
    return s;
}

engine::RunResult simulate(const IterationProgram& program, engine::RunOptions options) {
    options.describe_task = [&program](engine::TaskId t) {
        const TaskInfo& i = program.info[t.index()];
        const parallel::Coordinates& c = program.gpus[i.gpu.index()].coordinates;
        return program.describe(t) + " (stage " + std::to_string(c.pp) + ", tp " + std::to_string(c.tp) +
               ", dp " + std::to_string(c.dp) + ")";
    };
    // A rendezvous is named after its first member. The index is built once, and only when an error
    // needs it: a deadlock report must not rescan tens of millions of tasks per waiting stream.
    auto first_member = std::make_shared<std::vector<engine::TaskId>>();
    options.describe_rendezvous = [&program, first_member](engine::RendezvousId r) {
        if (first_member->empty()) {
            first_member->assign(program.program.rendezvous_count(), engine::kNoTask);
            for (std::size_t t = program.program.size(); t-- > 0;) {
                const engine::TaskId id = engine::TaskId::from_index(t);
                if (const engine::RendezvousId of = program.program.rendezvous_of(id);
                    of != engine::kNoRendezvous) {
                    (*first_member)[of.index()] = id;
                }
            }
        }
        const engine::TaskId t = (*first_member)[r.index()];
        return t != engine::kNoTask ? program.describe(t)
                                    : std::string("rendezvous ") + std::to_string(r.value());
    };
    return engine::simulate(program.program, options);
}

std::vector<OpSpan> op_spans(const IterationProgram& program, engine::TaskId task,
                             const engine::TaskTiming& timing) {
    const TaskShape& shape = program.info.shape(task.index());
    std::vector<OpSpan> out;
    out.reserve(shape.priced < 0 ? 1 : shape.op_count);
    for_each_op_span(program, shape, timing, [&out](const OpSpan& span) { out.push_back(span); });
    return out;
}

}  // namespace trainsim::program
