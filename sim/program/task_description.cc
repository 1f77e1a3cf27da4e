#include "sim/program/iteration_program.h"

#include <memory>

namespace trainsim::program {

std::string IterationProgram::describe(engine::TaskId task) const {
    const TaskInfo& i = info[static_cast<std::size_t>(task)];
    std::string s;
    if (i.phase != Phase::Iteration) {
        s += i.phase == Phase::Forward ? "F" : "B";
        s += std::to_string(i.microbatch) + ".c" + std::to_string(i.chunk) + " ";
    }
    if (i.layer >= 0) {
        s += "L" + std::to_string(i.layer) + " ";
    }
    if (i.priced < 0) {
        const std::string& stream =
            program
                .streams()[static_cast<std::size_t>(program.tasks()[static_cast<std::size_t>(task)].stream)]
                .name;
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
        const TaskInfo& i = program.info[static_cast<std::size_t>(t)];
        const parallel::Coordinates& c = program.gpus[static_cast<std::size_t>(i.gpu)].coordinates;
        return program.describe(t) + " (stage " + std::to_string(c.pp) + ", tp " + std::to_string(c.tp) +
               ", dp " + std::to_string(c.dp) + ")";
    };
    // A rendezvous is named after its first member. The index is built once, and only when an error
    // needs it: a deadlock report must not rescan tens of millions of tasks per waiting stream.
    auto first_member = std::make_shared<std::vector<engine::TaskId>>();
    options.describe_rendezvous = [&program, first_member](engine::RendezvousId r) {
        if (first_member->empty()) {
            first_member->assign(program.program.rendezvous().size(), -1);
            const auto& tasks = program.program.tasks();
            for (std::size_t t = tasks.size(); t-- > 0;) {
                if (tasks[t].rendezvous >= 0) {
                    (*first_member)[static_cast<std::size_t>(tasks[t].rendezvous)] =
                        static_cast<engine::TaskId>(t);
                }
            }
        }
        const engine::TaskId t = (*first_member)[static_cast<std::size_t>(r)];
        return t >= 0 ? program.describe(t) : std::string("rendezvous ") + std::to_string(r);
    };
    return engine::simulate(program.program, options);
}

std::vector<OpSpan> op_spans(const IterationProgram& program, engine::TaskId task,
                             const engine::TaskTiming& timing) {
    const TaskInfo& i = program.info[static_cast<std::size_t>(task)];
    if (i.priced < 0) {
        return {OpSpan{nullptr, timing.start, timing.end}};
    }
    const PricedOps& p = program.priced[static_cast<std::size_t>(i.priced)];
    std::vector<OpSpan> out;
    out.reserve(i.op_count);
    if (i.op_count == 1) {
        // A collective's time comes from its rendezvous, which can differ from the op's own price.
        out.push_back({&(*p.ops)[i.first_op], timing.start, timing.end});
        return out;
    }
    SimTime at = timing.start;
    for (std::size_t k = i.first_op; k < static_cast<std::size_t>(i.first_op + i.op_count); ++k) {
        out.push_back({&(*p.ops)[k], at, at + p.durations[k]});
        at += p.durations[k];
    }
    return out;
}

}  // namespace trainsim::program
