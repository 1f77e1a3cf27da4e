#include "sim/program/op_lowering.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace trainsim::program {

using workload::CommGroup;
using workload::Op;
using workload::OpKind;
using workload::OpList;
using workload::OpStream;

engine::RendezvousId RendezvousTable::get(engine::Program& program, const Key& key, std::int64_t members,
                                          SimTime duration, const std::string& name) {
    const auto it = ids_.find(key);
    if (it != ids_.end()) {
        return it->second;
    }
    const engine::RendezvousId id = program.add_rendezvous(static_cast<std::int32_t>(members), duration, name);
    ids_.emplace(key, id);
    return id;
}

OpLowering::OpLowering(engine::Program& program, std::vector<TaskInfo>& info, const OpPricing& pricing,
                       RendezvousTable& rendezvous, GroupMembers members, std::int32_t gpu,
                       parallel::Coordinates at)
    : program_(program), info_(info), pricing_(pricing), rendezvous_(rendezvous), members_(members), gpu_(gpu),
      at_(at) {
    global_rank_ = pricing.layout().global_rank(at);
    compute_ = program_.add_stream(gpu, "compute");
    tensor_comm_ = program_.add_stream(gpu, "tp_comm");
    data_comm_ = program_.add_stream(gpu, "dp_comm");
    send_[0] = program_.add_stream(gpu, "pp_send_fwd");
    send_[1] = program_.add_stream(gpu, "pp_send_bwd");
    receive_[0] = program_.add_stream(gpu, "pp_recv_fwd");
    receive_[1] = program_.add_stream(gpu, "pp_recv_bwd");
}

engine::TaskId OpLowering::add_task(engine::StreamId stream, SimTime duration, engine::RendezvousId r,
                                    std::string name, std::vector<engine::TaskId> deps, TaskInfo info) {
    const engine::TaskId id = r == engine::kNoRendezvous
                                  ? program_.add_task(stream, duration, std::move(name), deps)
                                  : program_.add_rendezvous_task(stream, r, std::move(name), deps);
    info.gpu = gpu_;
    info_.push_back(info);
    return id;
}

const std::vector<SimTime>& OpLowering::durations(const OpList& ops) {
    auto it = durations_.find(&ops);
    if (it != durations_.end()) {
        return it->second;
    }
    std::vector<SimTime> d;
    d.reserve(ops.size());
    // Asynchronous collectives still running beside the compute stream: (op index, time left, slowdown).
    struct Open {
        std::int32_t op;
        SimTime left;
        double slowdown;
    };
    std::vector<Open> open;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const Op& op = ops[i];
        SimTime t = to_sim_time(pricing_.duration(op, at_));
        if (op.kind == OpKind::Collective) {
            if (!op.blocking) {
                open.push_back({static_cast<std::int32_t>(i), t, pricing_.compute_slowdown_beside(op, at_)});
            }
        } else {
            // A compute op waits for the collectives it joins, so those no longer run beside it.
            std::erase_if(open, [&](const Open& o) {
                return std::find(op.after.begin(), op.after.end(), o.op) != op.after.end();
            });
            if (!open.empty()) {
                const auto widest = std::max_element(open.begin(), open.end(),
                                                     [](const Open& a, const Open& b) { return a.left < b.left; });
                const SimTime overlap = std::min(t, widest->left);
                t += static_cast<SimTime>(std::llround(static_cast<double>(overlap) * (widest->slowdown - 1.0)));
                for (Open& o : open) {
                    o.left = std::max<SimTime>(0, o.left - t);
                }
            }
        }
        d.push_back(t);
    }
    return durations_.emplace(&ops, std::move(d)).first->second;
}

RendezvousTable::Key OpLowering::group_key(CommGroup group) {
    const auto g = static_cast<std::size_t>(group);
    const std::int64_t seq = collective_count_[g]++;
    const parallel::Layout& layout = pricing_.layout();
    switch (group) {
    // A group instance is named by the global rank of its first member.
    case CommGroup::Tensor:
        return {0, layout.global_rank({0, at_.dp, at_.pp}), seq, 0};
    case CommGroup::Data:
        return {1, layout.global_rank({at_.tp, 0, at_.pp}), seq, 0};
    case CommGroup::Embedding:
        return {2, layout.global_rank({at_.tp, at_.dp, 0}), seq, 0};
    case CommGroup::ModelParallel:
        return {3, at_.dp, seq, 0};
    }
    return {};
}

std::int64_t OpLowering::group_members(CommGroup group) const {
    switch (group) {
    case CommGroup::Tensor:
        return members_.tensor;
    case CommGroup::Data:
        return members_.data;
    case CommGroup::Embedding:
        return members_.embedding;
    case CommGroup::ModelParallel:
        return members_.model_parallel;
    }
    return 1;
}

std::string OpLowering::label(const StepContext& ctx, const std::string& what) const {
    std::string s;
    if (ctx.phase != Phase::Iteration) {
        s += ctx.phase == Phase::Forward ? "F" : "B";
        s += std::to_string(ctx.microbatch) + ".c" + std::to_string(ctx.chunk) + " ";
    }
    if (ctx.layer >= 0) {
        s += "L" + std::to_string(ctx.layer) + " ";
    }
    return s + what;
}

namespace {

TaskCategory category_of(const Op& op) {
    if (op.kind == OpKind::Collective) {
        return op.group == CommGroup::Tensor ? TaskCategory::TensorComm : TaskCategory::DataComm;
    }
    if (op.role == workload::OpRole::Optimizer) {
        return TaskCategory::Optimizer;
    }
    return op.is_recompute ? TaskCategory::Recompute : TaskCategory::Compute;
}

}  // namespace

void OpLowering::lower(const OpList& ops, const StepContext& ctx) {
    const std::vector<SimTime>& d = durations(ops);
    std::vector<engine::TaskId> ids(ops.size(), -1);
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const Op& op = ops[i];
        std::vector<engine::TaskId> deps;
        for (const std::int32_t a : op.after) {
            deps.push_back(ids[static_cast<std::size_t>(a)]);
        }
        TaskInfo info{gpu_, category_of(op), ctx.phase, ctx.microbatch, ctx.chunk, ctx.layer, op.flops(), op.saved_bytes};
        if (op.kind == OpKind::Collective) {
            // A collective consumes what the compute stream produced last.
            if (last_compute_ >= 0) {
                deps.push_back(last_compute_);
            }
            const std::int64_t members = group_members(op.group);
            const engine::RendezvousId r = rendezvous_.get(program_, group_key(op.group), members, d[i], op.name);
            const engine::StreamId stream = op.stream == OpStream::TensorComm ? tensor_comm_ : data_comm_;
            ids[i] = add_task(stream, d[i], r, label(ctx, op.name), std::move(deps), info);
            if (op.blocking) {
                pending_.push_back(ids[i]);
            }
        } else {
            deps.insert(deps.end(), pending_.begin(), pending_.end());
            pending_.clear();
            ids[i] = add_task(compute_, d[i], engine::kNoRendezvous, label(ctx, op.name), std::move(deps), info);
            last_compute_ = ids[i];
        }
    }
}

void OpLowering::send(Direction dir, const parallel::Coordinates& to, Bytes bytes, const StepContext& ctx) {
    const auto di = static_cast<std::size_t>(dir);
    const std::int64_t peer = pricing_.layout().global_rank(to);
    const std::int64_t seq = channel_count_[{1, static_cast<std::int64_t>(di), peer}]++;
    const SimTime duration = to_sim_time(pricing_.p2p(bytes, at_, to));
    const std::string what = std::string(dir == Direction::Forward ? "send activation" : "send gradient") +
                             " to stage " + std::to_string(to.pp);
    // Channel key: (direction, sender, receiver, sequence) seen identically from both ends.
    const engine::RendezvousId r = rendezvous_.get(
        program_, {10 + static_cast<std::int64_t>(di), global_rank_, peer, seq}, 2, duration, label(ctx, what));
    std::vector<engine::TaskId> deps;
    if (last_compute_ >= 0) {
        deps.push_back(last_compute_);
    }
    add_task(send_[di], duration, r, label(ctx, what), std::move(deps),
             TaskInfo{gpu_, TaskCategory::PipelineComm, ctx.phase, ctx.microbatch, ctx.chunk, -1, Flops{0.0}, Bytes{0}});
}

void OpLowering::receive(Direction dir, const parallel::Coordinates& from, Bytes bytes, const StepContext& ctx) {
    const auto di = static_cast<std::size_t>(dir);
    const std::int64_t peer = pricing_.layout().global_rank(from);
    const std::int64_t seq = channel_count_[{0, static_cast<std::int64_t>(di), peer}]++;
    const SimTime duration = to_sim_time(pricing_.p2p(bytes, from, at_));
    const std::string what = std::string(dir == Direction::Forward ? "recv activation" : "recv gradient") +
                             " from stage " + std::to_string(from.pp);
    const engine::RendezvousId r = rendezvous_.get(
        program_, {10 + static_cast<std::int64_t>(di), peer, global_rank_, seq}, 2, duration, label(ctx, what));
    // The receive is posted when the program reaches it: after the compute before it.
    std::vector<engine::TaskId> deps;
    if (last_compute_ >= 0) {
        deps.push_back(last_compute_);
    }
    const engine::TaskId id =
        add_task(receive_[di], duration, r, label(ctx, what), std::move(deps),
                 TaskInfo{gpu_, TaskCategory::PipelineComm, ctx.phase, ctx.microbatch, ctx.chunk, -1, Flops{0.0}, Bytes{0}});
    pending_.push_back(id);
}

}  // namespace trainsim::program
