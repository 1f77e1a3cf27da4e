#include "sim/program/op_lowering.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "sim/program/host_overhead.h"
#include "sim/program/variability.h"

namespace trainsim::program {

using workload::CommGroup;
using workload::Op;
using workload::OpKind;
using workload::OpList;
using workload::OpStream;

OpLowering::OpLowering(IterationProgram& out, const OpPricing& pricing, RendezvousTable& rendezvous,
                       GroupMembers members, engine::GpuId gpu, parallel::Coordinates at)
    : out_(out), pricing_(pricing), rendezvous_(rendezvous), members_(members), gpu_(gpu), at_(at) {
    global_rank_ = pricing.layout().global_rank(at);
    engine::Program& p = out_.program;
    foreground_.compute = p.add_stream(gpu, "compute");
    p.set_compute_stream(foreground_.compute);
    foreground_.tensor_comm = p.add_stream(gpu, "tp_comm");
    data_comm_ = p.add_stream(gpu, "dp_comm");
    send_[0] = p.add_stream(gpu, "pp_send_fwd");
    send_[1] = p.add_stream(gpu, "pp_send_bwd");
    receive_[0] = p.add_stream(gpu, "pp_recv_fwd");
    receive_[1] = p.add_stream(gpu, "pp_recv_bwd");
}

engine::TaskId OpLowering::add_task(engine::StreamId stream, SimTime duration, engine::RendezvousId r,
                                    std::span<const engine::TaskId> deps, TaskInfo info) {
    const engine::TaskId id = r == engine::kNoRendezvous
                                  ? out_.program.add_task(stream, duration, {}, deps)
                                  : out_.program.add_rendezvous_task(stream, r, {}, deps);
    info.gpu = gpu_;
    out_.info.push_back(info);
    return id;
}

namespace {

// The factor a kernel runs slower by beside a collective: memory-bound kernels lose HBM, the rest SMs.
double slowdown_of(const Op& kernel, const cost::OverlapSlowdown& beside) {
    return kernel.kind == OpKind::MemoryBound ? beside.memory_bound : beside.compute_bound;
}

}  // namespace

PricedOps OpLowering::price(const OpList& ops) const {
    PricedOps priced{&ops, {}, {}};
    std::vector<SimTime>& d = priced.durations;
    d.reserve(ops.size());
    // Asynchronous collectives still running beside the compute stream: (op index, time left, slowdown).
    struct Open {
        std::int32_t op;
        SimTime left;
        cost::OverlapSlowdown slowdown;
    };
    std::vector<Open> open;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const Op& op = ops[i];
        SimTime t = to_sim_time(pricing_.duration(op, at_));
        if (op.kind != OpKind::Collective && slowdown_ != 1.0) {
            t = scaled(t, slowdown_);
        }
        if (op.kind == OpKind::Collective) {
            // Under engine contention the engine slows the kernels beside a running collective.
            if (!op.blocking && !pricing_.engine_contention()) {
                open.push_back(
                    {static_cast<std::int32_t>(i), t, pricing_.compute_slowdown_beside(op, at_, t)});
            }
        } else {
            // A compute op waits for the collectives it joins, so those no longer run beside it.
            std::erase_if(open, [&](const Open& o) {
                return std::find(op.after.begin(), op.after.end(), o.op) != op.after.end();
            });
            if (!open.empty()) {
                const auto widest = std::max_element(
                    open.begin(), open.end(), [](const Open& a, const Open& b) { return a.left < b.left; });
                const SimTime overlap = std::min(t, widest->left);
                const SimTime extra = scaled(overlap, slowdown_of(op, widest->slowdown) - 1.0);
                t += extra;
                if (extra != SimTime{}) {
                    priced.contention.resize(ops.size(), SimTime{});
                    priced.contention[i] = extra;
                }
                for (Open& o : open) {
                    o.left = std::max(SimTime{}, o.left - t);
                }
            }
        }
        d.push_back(t);
    }
    return priced;
}

std::int32_t OpLowering::priced(const OpList& ops) {
    for (const auto& [list, index] : priced_) {
        if (list == &ops) {
            return index;
        }
    }
    // GPUs whose groups lie the same way share the priced list: priced once per placement, not per GPU.
    const auto next = static_cast<std::int32_t>(out_.priced.size());
    const auto [index, added] = share_priced_ ? pricing_.shared_index(ops, at_, next) : std::pair{next, true};
    if (added) {
        out_.priced.push_back(price(ops));
    }
    priced_.emplace_back(&ops, index);
    return index;
}

std::int32_t OpLowering::priced_launch(const OpList& ops) {
    const std::int32_t base = priced(ops);
    if (!jitter_) {
        return base;
    }
    std::vector<SimTime> d = out_.priced[static_cast<std::size_t>(base)].durations;
    SimTime added{};
    for (std::size_t i = 0; i < ops.size(); ++i) {
        // Collectives take their time from their rendezvous, which waits for every member.
        if (ops[i].kind == OpKind::Collective) {
            continue;
        }
        const double f = kernel_jitter_factor(jitter_stddev_, jitter_seed_, global_rank_, lists_lowered_,
                                              static_cast<std::int64_t>(i));
        const SimTime t = scaled(d[i], f);
        added += t - d[i];
        d[i] = t;
    }
    ++lists_lowered_;
    out_.gpus[gpu_.index()].kernel_jitter += added;
    std::vector<SimTime> contention = out_.priced[static_cast<std::size_t>(base)].contention;
    out_.priced.push_back(PricedOps{&ops, std::move(d), std::move(contention)});
    return static_cast<std::int32_t>(out_.priced.size() - 1);
}

OpLowering::GroupRendezvous OpLowering::next_collective(CommGroup group, Lane& lane) {
    const auto g = static_cast<std::size_t>(group);
    const std::int64_t sequence = lane.collective_count.at(g)++;
    const parallel::Layout& layout = pricing_.layout();
    // A group instance is named by the global rank of its first member.
    const auto first_member = [&]() -> std::int64_t {
        switch (group) {
        case CommGroup::Tensor:
            return layout.global_rank({0, at_.dp, at_.pp});
        case CommGroup::Data:
            return layout.global_rank({at_.tp, 0, at_.pp});
        case CommGroup::Embedding:
            return layout.global_rank({at_.tp, at_.dp, 0});
        case CommGroup::ModelParallel:
            return at_.dp;
        case CommGroup::Context:
            return layout.global_rank({at_.tp, at_.dp, at_.pp, 0});
        case CommGroup::Expert:
        case CommGroup::ExpertTensor:
        case CommGroup::ExpertTensorAndModel:
            // Folded (one member): under balanced routing every EP rank sends and receives alike (and
            // under the allgather dispatcher always; the etp ranks of an expert alike), so each simulated
            // GPU prices its own dispatch and combine; named by its rank, as nothing meets it there.
        case CommGroup::ExpertData:  // folded likewise: every expert-DP replica reduces the same bytes
            return layout.global_rank(at_);
        case CommGroup::StageCopies:
            return layout.global_rank({at_.tp, at_.dp, layout.stage_copy_ranks(at_.pp).first});
        }
        return 0;
    };
    return {RendezvousChannel::collective(group, lane.index, first_member()), sequence};
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
    case CommGroup::Context:
        return members_.context;
    case CommGroup::Expert:
    case CommGroup::ExpertData:
    case CommGroup::ExpertTensor:
    case CommGroup::ExpertTensorAndModel:
        return 1;
    case CommGroup::StageCopies:
        return members_.stage_copies;
    }
    return 1;
}

namespace {

TaskCategory category_of(const Op& op) {
    if (op.kind == OpKind::Collective) {
        switch (op.group) {
        case CommGroup::Tensor:
            return TaskCategory::TensorComm;
        case CommGroup::Context:
            return TaskCategory::ContextComm;
        case CommGroup::Expert:
        case CommGroup::ExpertTensor:
        case CommGroup::ExpertTensorAndModel:
            return TaskCategory::ExpertComm;
        default:  // data parallel, expert data parallel, embedding and gradient-norm reductions
            return TaskCategory::DataComm;
        }
    }
    if (op.role == workload::OpRole::Optimizer) {
        return TaskCategory::Optimizer;
    }
    return op.is_recompute ? TaskCategory::Recompute : TaskCategory::Compute;
}

}  // namespace

void OpLowering::add_contention(const Op& op, SimTime extra) {
    SimulatedGpu& g = out_.gpus[gpu_.index()];
    switch (category_of(op)) {
    case TaskCategory::Recompute:
        g.contention_recompute += extra;
        break;
    case TaskCategory::Optimizer:
        g.contention_optimizer += extra;
        break;
    default:
        g.contention_compute += extra;
        break;
    }
}

void OpLowering::add_contention(std::int32_t priced_index) {
    const PricedOps& p = out_.priced[static_cast<std::size_t>(priced_index)];
    for (std::size_t i = 0; i < p.contention.size(); ++i) {
        if (p.contention[i] != SimTime{}) {
            add_contention((*p.ops)[i], p.contention[i]);
        }
    }
}

void OpLowering::lower(const OpList& ops, const StepContext& ctx) {
    const std::int32_t index = priced_launch(ops);
    add_contention(index);
    if (overlapping_) {
        chains_[static_cast<std::size_t>(chain_)].lists.push_back(
            {&ops, ctx, index, false, std::vector<engine::TaskId>(ops.size(), engine::kNoTask)});
        return;
    }
    if (const cost::HostCosts* host = host_costs_for(ops)) {
        add_host_gap(ops, index, ctx, *host);
    }
    ids_.assign(ops.size(), engine::kNoTask);
    lower_on(foreground_, ops, ctx, index, 0, ops.size(), ids_);
}

void OpLowering::begin_overlap(PairChain chain) {
    overlapping_ = true;
    chain_ = chain;
    for (PairChainState& c : chains_) {
        c.lists.clear();
        c.last_compute = foreground_.last_compute;
        c.pending = foreground_.pending;
    }
    foreground_.pending.clear();
}

void OpLowering::end_overlap() {
    overlapping_ = false;
    std::array<std::vector<const OpList*>, 2> lists;
    for (std::size_t c = 0; c < 2; ++c) {
        for (const QueuedList& q : chains_[c].lists) {
            lists[c].push_back(q.ops);
        }
    }
    const auto forward = static_cast<std::size_t>(PairChain::Forward);
    const auto backward = static_cast<std::size_t>(PairChain::Backward);
    // The lane is the chain's while its span is lowered: its collectives consume the chain's last compute
    // and its compute waits for the chain's own blocking collectives; the stream orders the rest.
    engine::TaskId last = foreground_.last_compute;
    // The exchange just issued and the other chain's compute that runs beside it: its kernels take their
    // share of the GPU (compute_share_while_overlapped), as price() charges an asynchronous collective.
    Beside beside;
    for (const PairSpan& span : overlapped_pair_order(lists[forward], lists[backward])) {
        PairChainState& chain = chains_[static_cast<std::size_t>(span.chain)];
        QueuedList& q = chain.lists[span.item];
        if (span.chain == beside.chain) {
            beside.left = SimTime{};  // its own chain waits for it: nothing more runs beside it
        }
        if (beside.left > SimTime{} && !pricing_.engine_contention()) {
            slow_beside(q, span.begin, span.end, beside);
        }
        foreground_.last_compute = chain.last_compute;
        std::swap(foreground_.pending, chain.pending);
        if (span.begin == 0) {
            if (const cost::HostCosts* host = host_costs_for(*q.ops)) {
                add_host_gap(*q.ops, q.priced, q.ctx, *host);
            }
        }
        lower_on(foreground_, *q.ops, q.ctx, q.priced, span.begin, span.end, q.ids);
        if (foreground_.last_compute != chain.last_compute) {
            last = foreground_.last_compute;
        }
        chain.last_compute = foreground_.last_compute;
        std::swap(foreground_.pending, chain.pending);
        // A piece ends with its exchanges: they run beside the next piece of the other chain.
        const std::vector<SimTime>& d = out_.priced[static_cast<std::size_t>(q.priced)].durations;
        if (span.end > span.begin && is_expert_exchange((*q.ops)[span.end - 1])) {
            beside = Beside{span.chain, SimTime{},
                            pricing_.compute_slowdown_beside((*q.ops)[span.end - 1], at_, d[span.end - 1])};
            for (std::size_t i = span.end; i > span.begin && is_expert_exchange((*q.ops)[i - 1]); --i) {
                beside.left += d[i - 1];
            }
        }
    }
    foreground_.last_compute = last;
    for (PairChainState& c : chains_) {
        foreground_.pending.insert(foreground_.pending.end(), c.pending.begin(), c.pending.end());
        c.pending.clear();
        c.lists.clear();
    }
}

const cost::HostCosts* OpLowering::host_costs_for(const OpList& ops) const {
    if (sync_host_ != nullptr) {
        return sync_host_;
    }
    if (cpu_lead_ >= kUnboundedLead &&
        std::none_of(ops.begin(), ops.end(), [](const Op& op) { return op.host_waits_for >= 0; })) {
        return nullptr;
    }
    const cost::HostCosts* host = pricing_.host();
    if (host == nullptr) {
        throw std::logic_error(
            "OpLowering: a host wait on a profile without host costs (check_fits_profile)");
    }
    return host;
}

void OpLowering::add_host_gap(const OpList& ops, std::int32_t priced_index, const StepContext& ctx,
                              const cost::HostCosts& host) {
    if (synchronized_) {
        synchronized_ = false;
        cpu_lead_ = SimTime{};
    }
    const PricedOps& p = out_.priced[static_cast<std::size_t>(priced_index)];
    const HostBound bound = host_bound_idle(ops, p.durations, host, cpu_lead_);
    cpu_lead_ = bound.lead_after;
    if (bound.idle <= SimTime{}) {
        return;
    }
    // All of the list's host-bound idle is placed before it: the same total, one task. The CPU resumes
    // once what it synchronised on is done; the list's kernels follow this task in stream order.
    TaskInfo info{gpu_, TaskCategory::Host, ctx.phase, ctx.microbatch, ctx.chunk, ctx.layer};
    const engine::TaskId id =
        add_task(foreground_.compute, bound.idle, engine::kNoRendezvous, foreground_.pending, info);
    out_.program.set_outside_compute(id);  // the GPU idles while the CPU catches up: no kernel to slow
    foreground_.pending.clear();
}

engine::TaskId OpLowering::lower_background(const OpList& ops, const StepContext& ctx,
                                            std::vector<engine::TaskId> start_after) {
    if (background_.compute == engine::kNoStream) {
        background_.compute = out_.program.add_background_stream(foreground_.compute, "recompute");
        out_.program.set_compute_stream(background_.compute);
        background_.tensor_comm = out_.program.add_stream(gpu_, "tp_comm_recompute");
        background_.index = 1;
        out_.gpus[gpu_.index()].recompute_stream = background_.compute;
    }
    if (overlapping_) {
        throw std::logic_error("OpLowering: recomputation on the background lane inside an overlapped pair");
    }
    background_.pending = std::move(start_after);
    ids_.assign(ops.size(), engine::kNoTask);
    // Not charged to the breakdown's contention line: background recomputation is hidden in waits or
    // counted whole as the recompute it exposes.
    lower_on(background_, ops, ctx, priced_launch(ops), 0, ops.size(), ids_);
    return background_.last_compute;
}

void OpLowering::slow_beside(QueuedList& q, std::size_t begin, std::size_t end, Beside& beside) {
    // The list's own copy of its durations (a pair's pieces are priced apart from the shared list).
    if (!q.own_prices) {
        out_.priced.push_back(out_.priced[static_cast<std::size_t>(q.priced)]);
        q.priced = static_cast<std::int32_t>(out_.priced.size() - 1);
        q.own_prices = true;
    }
    PricedOps& p = out_.priced[static_cast<std::size_t>(q.priced)];
    std::vector<SimTime>& d = p.durations;
    for (std::size_t i = begin; i < end && beside.left > SimTime{}; ++i) {
        const Op& op = (*q.ops)[i];
        if (op.kind == OpKind::Collective) {
            continue;
        }
        // price()'s rule: t' = t + overlap · (slowdown − 1), the overlap what is left of the exchange.
        const SimTime overlap = std::min(d[i], beside.left);
        const SimTime extra = scaled(overlap, slowdown_of(op, beside.slowdown) - 1.0);
        d[i] += extra;
        if (extra != SimTime{}) {
            p.contention.resize(d.size(), SimTime{});
            p.contention[i] += extra;
            add_contention(op, extra);
        }
        beside.left = std::max(SimTime{}, beside.left - d[i]);
    }
}

engine::StreamId OpLowering::stream_of(OpStream stream, Lane& lane) {
    switch (stream) {
    case OpStream::TensorComm:
        return lane.tensor_comm;
    case OpStream::SharedExpertComm:
        // Created on first use, so that programs without moe_shared_expert_overlap keep their streams.
        if (lane.shared_expert_comm == engine::kNoStream) {
            lane.shared_expert_comm = out_.program.add_stream(
                gpu_, lane.index == 0 ? "shared_expert_comm" : "shared_expert_comm_recompute");
        }
        return lane.shared_expert_comm;
    case OpStream::ContextComm:
        // Created on first use, so that programs without context parallelism keep their streams.
        if (context_comm_ == engine::kNoStream) {
            context_comm_ = out_.program.add_stream(gpu_, "cp_comm");
        }
        return context_comm_;
    default:
        return data_comm_;
    }
}

void OpLowering::lower_on(Lane& lane, const OpList& ops, const StepContext& ctx, std::int32_t priced_index,
                          std::size_t begin, std::size_t end, std::vector<engine::TaskId>& ids) {
    const std::vector<SimTime>& d = out_.priced[static_cast<std::size_t>(priced_index)].durations;
    TaskInfo base{gpu_, TaskCategory::Compute, ctx.phase, ctx.microbatch, ctx.chunk, ctx.layer, priced_index};

    // Consecutive compute ops with nothing new to wait for become one engine task (a segment): the
    // engine then sees a few tasks per layer instead of one per kernel, and op_spans() recovers the ops.
    struct Segment {
        std::size_t first = 0, count = 0;
        SimTime duration{};
        TaskInfo info;
    } segment;
    std::vector<engine::TaskId>& segment_deps = segment_deps_;
    auto flush = [&] {
        if (segment.count == 0) {
            return;
        }
        segment.info.first_op = static_cast<std::uint16_t>(segment.first);
        segment.info.op_count = static_cast<std::uint16_t>(segment.count);
        const engine::TaskId id =
            add_task(lane.compute, segment.duration, engine::kNoRendezvous, segment_deps, segment.info);
        std::fill_n(ids.begin() + static_cast<std::ptrdiff_t>(segment.first), segment.count, id);
        lane.last_compute = id;
        segment.count = 0;
    };

    for (std::size_t i = begin; i < end; ++i) {
        const Op& op = ops[i];
        std::vector<engine::TaskId>& deps = deps_;
        deps.clear();
        for (const std::int32_t a : op.after) {
            // Ops of the open segment are ordered by the stream.
            if (ids[static_cast<std::size_t>(a)] != engine::kNoTask) {
                deps.push_back(ids[static_cast<std::size_t>(a)]);
            }
        }
        if (op.kind == OpKind::Collective) {
            flush();
            // A collective consumes what the compute stream produced last.
            if (lane.last_compute != engine::kNoTask) {
                deps.push_back(lane.last_compute);
            }
            TaskInfo info = base;
            info.category = category_of(op);
            info.first_op = static_cast<std::uint16_t>(i);
            info.op_count = 1;
            const engine::RendezvousId r =
                collective_rendezvous(op, next_collective(op.group, lane), group_members(op.group), d[i]);
            // (A collective that takes no time holds nothing: not worth two reprices.)
            if (pricing_.engine_contention() && d[i] > SimTime{}) {
                out_.program.set_compute_share(r, pricing_.compute_rate_beside(op, at_, d[i]));
            }
            const engine::StreamId stream = stream_of(op.stream, lane);
            ids[i] = add_task(stream, d[i], r, deps, info);
            if (op.blocking) {
                lane.pending.push_back(ids[i]);
            } else if (op.stream == OpStream::DataComm) {
                unjoined_data_.push_back(ids[i]);
            }
            continue;
        }
        deps.insert(deps.end(), lane.pending.begin(), lane.pending.end());
        const TaskCategory category = category_of(op);
        if (segment.count > 0 && (!deps.empty() || category != segment.info.category)) {
            flush();
        }
        if (segment.count == 0) {
            segment.first = i;
            segment.duration = SimTime{};
            segment.info = base;
            segment.info.category = category;
            std::swap(segment_deps, deps);
            lane.pending.clear();
        }
        ++segment.count;
        segment.duration += d[i];
        segment.info.flops += op.flops();
        segment.info.saved += op.saved_bytes;
    }
    flush();
}

engine::RendezvousId OpLowering::collective_rendezvous(const Op& op, const GroupRendezvous& at,
                                                       std::int64_t members, SimTime duration) {
    // A group of one moves nothing (its price is 0): no flow.
    if (network_ == nullptr || duration == SimTime{} || pricing_.group_span(op.group, at_).size < 2) {
        return rendezvous_.get(out_.program, at.channel, at.sequence, members, duration);
    }
    return rendezvous_.get_flow(out_.program, at.channel, at.sequence, members,
                                network_->collective(op, at_, pricing_.experts()));
}

void OpLowering::join_data_parallel() {
    foreground_.pending.insert(foreground_.pending.end(), unjoined_data_.begin(), unjoined_data_.end());
    unjoined_data_.clear();
}

engine::StreamId OpLowering::transfer_stream(std::size_t direction, std::int64_t peer_rank, bool send) {
    std::int64_t& first = send ? send_peer_[direction] : receive_peer_[direction];
    if (first < 0 || first == peer_rank) {
        first = peer_rank;
        return send ? send_[direction] : receive_[direction];
    }
    const std::array<std::int64_t, 3> key{send ? 1 : 0, static_cast<std::int64_t>(direction), peer_rank};
    for (const auto& [k, stream] : other_peer_streams_) {
        if (k == key) {
            return stream;
        }
    }
    const std::string name = std::string(send ? "pp_send_" : "pp_recv_") +
                             (direction == 0 ? "fwd_" : "bwd_") + std::to_string(peer_rank);
    other_peer_streams_.push_back({key, out_.program.add_stream(gpu_, name)});
    return other_peer_streams_.back().second;
}

void OpLowering::transfer(Direction dir, const parallel::Coordinates& peer, Bytes bytes,
                          const StepContext& ctx, bool send, Bytes kept) {
    if (overlapping_) {
        throw std::logic_error("OpLowering: a pipeline transfer inside an overlapped pair");
    }
    const auto di = static_cast<std::size_t>(dir);
    const std::int64_t peer_rank = pricing_.layout().global_rank(peer);
    const std::array<std::int64_t, 3> channel{send ? 1 : 0, static_cast<std::int64_t>(di), peer_rank};
    auto count = std::find_if(channel_count_.begin(), channel_count_.end(),
                              [&](const auto& c) { return c.first == channel; });
    if (count == channel_count_.end()) {
        count = channel_count_.insert(channel_count_.end(), {channel, 0});
    }
    const std::int64_t seq = count->second++;
    const Bytes wire{bytes.value / scatter_ways_};
    // A transfer's time depends only on its bytes and whether the peer shares this GPU's node.
    const parallel::Layout& layout = pricing_.layout();
    const std::pair<std::int64_t, bool> priced_as{wire.value,
                                                  layout.node_of(peer_rank) == layout.node_of(global_rank_)};
    auto known = std::find_if(transfer_time_.begin(), transfer_time_.end(),
                              [&](const auto& k) { return k.first == priced_as; });
    if (known == transfer_time_.end()) {
        known = transfer_time_.insert(
            transfer_time_.end(),
            {priced_as, to_sim_time(send ? pricing_.p2p(wire, at_, peer) : pricing_.p2p(wire, peer, at_))});
    }
    const SimTime duration = known->second;
    // The k-th send on a channel meets the k-th receive.
    const RendezvousChannel meeting = RendezvousChannel::transfer(
        static_cast<std::int32_t>(di), send ? global_rank_ : peer_rank, send ? peer_rank : global_rank_);
    const engine::RendezvousId r = network_ != nullptr && duration > SimTime{}
                                       ? rendezvous_.get_flow(out_.program, meeting, seq, 2,
                                                              send ? network_->transfer(wire, at_, peer)
                                                                   : network_->transfer(wire, peer, at_))
                                       : rendezvous_.get(out_.program, meeting, seq, 2, duration);
    if (pricing_.engine_contention() && duration > SimTime{}) {
        out_.program.set_compute_share(r, pricing_.compute_rate_beside_transfer(at_, peer));
    }
    // A send follows the compute that produced its tensor; a receive is posted when the program
    // reaches it, after the compute before it.
    // (The compute before it, if any: a span over a one-element array, so a transfer allocates nothing.)
    const std::array<engine::TaskId, 1> last{foreground_.last_compute};
    const std::span<const engine::TaskId> deps(last.data(),
                                               foreground_.last_compute != engine::kNoTask ? 1 : 0);
    TaskInfo info{gpu_, TaskCategory::PipelineComm, ctx.phase, ctx.microbatch, ctx.chunk};
    info.peer_stage = static_cast<std::int32_t>(peer.pp);
    // A kept output (Appendix B off) is freed with the backward of the layer the context names.
    info.layer = ctx.layer;
    info.saved = kept;
    const engine::TaskId id = add_task(transfer_stream(di, peer_rank, send), duration, r, deps, info);
    synchronized_ = sync_host_ != nullptr;
    if (send) {
        if (wait_for_sends_) {
            foreground_.pending.push_back(id);
        }
        return;
    }
    if (scatter_ways_ == 1) {
        foreground_.pending.push_back(id);
        return;
    }
    // The received shards are all-gathered inside the TP group before the compute can use them.
    Op gather;
    gather.kind = OpKind::Collective;
    gather.collective = cost::CollectiveKind::AllGather;
    gather.collective_bytes = bytes;
    gather.group = CommGroup::Tensor;
    const SimTime gather_time = to_sim_time(pricing_.duration(gather, at_));
    TaskInfo gather_info = info;
    gather_info.category = TaskCategory::PipelineComm;
    const engine::RendezvousId g = collective_rendezvous(
        gather, next_collective(CommGroup::Tensor, foreground_), members_.tensor, gather_time);
    if (pricing_.engine_contention() && gather_time > SimTime{}) {
        out_.program.set_compute_share(g, pricing_.compute_rate_beside(gather, at_, gather_time));
    }
    const std::array<engine::TaskId, 1> received{id};
    foreground_.pending.push_back(add_task(foreground_.tensor_comm, gather_time, g, received, gather_info));
}

void OpLowering::send(Direction dir, const parallel::Coordinates& to, Bytes bytes, const StepContext& ctx,
                      Bytes kept) {
    transfer(dir, to, bytes, ctx, true, kept);
}

void OpLowering::receive(Direction dir, const parallel::Coordinates& from, Bytes bytes,
                         const StepContext& ctx) {
    transfer(dir, from, bytes, ctx, false, Bytes{0});
}

}  // namespace trainsim::program
