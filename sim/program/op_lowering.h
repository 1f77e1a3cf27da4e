// Lowers workload ops onto one simulated GPU's engine streams: compute ops in program order on the
// compute stream, collectives on their communication stream (the compute stream waits for the
// blocking ones), pipeline sends and receives on their own streams, matched across GPUs.
#pragma once

#include <array>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/program.h"
#include "sim/program/host_overhead.h"
#include "sim/program/iteration_program.h"
#include "sim/program/network_flows.h"
#include "sim/program/op_pricing.h"
#include "sim/program/overlapped_pair.h"
#include "sim/program/rendezvous_table.h"
#include "sim/program/task_info.h"
#include "sim/workload/op.h"

namespace trainsim::program {

enum class Direction : std::uint8_t { Forward, Backward };

struct StepContext {
    std::int32_t microbatch = -1;
    std::int32_t chunk = -1;
    std::int32_t layer = -1;
    Phase phase = Phase::Forward;
};

/// How many simulated GPUs take part in each kind of group (1 when the group is folded).
struct GroupMembers {
    std::int64_t tensor = 1;
    std::int64_t data = 1;
    std::int64_t embedding = 2;
    std::int64_t model_parallel = 1;
    std::int64_t context = 1;  // context-parallel ranks are always folded (identical under load balancing)
    std::int64_t stage_copies = 2;  // DualPipe's ranks r and p − 1 − r (both always simulated)
};

class OpLowering {
public:
    OpLowering(IterationProgram& out, const OpPricing& pricing, RendezvousTable& rendezvous,
               GroupMembers members, engine::GpuId gpu, parallel::Coordinates at);

    [[nodiscard]] engine::StreamId compute_stream() const { return foreground_.compute; }
    /// The last compute task on the compute stream so far (-1 before the first).
    [[nodiscard]] engine::TaskId last_compute() const { return foreground_.last_compute; }

    /// Prices communication as flows on the network (hardware.network_model=flow) instead of fixed
    /// durations; null keeps the analytical model.
    void set_network(NetworkFlows* network) { network_ = network; }

    /// Megatron's scatter/gather of pipeline tensors: each of `ways` TP ranks sends 1/ways of the
    /// activation and the receivers all-gather it over their TP group (1 disables it).
    void set_pipeline_scatter_gather(std::int64_t ways) { scatter_ways_ = ways; }

    /// Megatron's pipeline transfers (parallelism.overlap_p2p_comm false): the next compute waits for the
    /// step's sends as well as its receives. With `sync_host` (parallelism.batch_p2p_sync) each transfer
    /// ends in torch.cuda.synchronize(), and the next op list starts after the host-bound idle it causes.
    void set_megatron_p2p(bool wait_for_sends, const cost::HostCosts* sync_host) {
        wait_for_sends_ = wait_for_sends;
        sync_host_ = sync_host;
        cpu_lead_ = sync_host != nullptr ? SimTime{} : kUnboundedLead;
    }

    /// Every kernel of this GPU takes `factor` times its price (variability.mode). `shared` false keeps
    /// this GPU's priced lists to itself, for a factor other GPUs do not share.
    void set_compute_slowdown(double factor, bool shared) {
        slowdown_ = factor;
        share_priced_ = shared;
    }

    /// Every kernel launch of this GPU takes its own kernel_jitter_factor (variability.kernel_jitter):
    /// each lowered list is priced anew with its launches' factors. Applies even at `stddev` 0 (each
    /// factor is then exactly 1).
    void set_kernel_jitter(double stddev, std::int64_t seed) {
        jitter_ = true;
        jitter_stddev_ = stddev;
        jitter_seed_ = seed;
    }

    void lower(const workload::OpList& ops, const StepContext& ctx);

    /// DualPipe's overlapped F&B pair (overlapped_pair.h): the lists lowered from here to end_overlap()
    /// are queued under the chain `chain` names (set_chain switches it), then lowered interleaved at
    /// their expert all-to-alls, each chain waiting only for its own collectives. Both chains start after
    /// what the compute stream waits for now (the pair's two receives); the next compute after the pair
    /// waits for both. Sends, receives and the recompute lane are not available meanwhile.
    void begin_overlap(PairChain chain);
    void set_chain(PairChain chain) { chain_ = chain; }
    void end_overlap();

    /// Lowers recomputation onto the low-priority lane (a background compute stream that runs only while
    /// the compute stream waits, and its own tensor-parallel stream). Its first op waits for
    /// `start_after`. Returns the task whose completion means the recomputation is done.
    engine::TaskId lower_background(const workload::OpList& ops, const StepContext& ctx,
                                    std::vector<engine::TaskId> start_after);

    /// The most recent asynchronous data-parallel collective not yet joined (kNoTask if none): FSDP's
    /// prefetched gathers are waited for one by one.
    [[nodiscard]] engine::TaskId last_data_collective() const {
        return unjoined_data_.empty() ? engine::kNoTask : unjoined_data_.back();
    }

    /// Makes the next compute op wait for `task`.
    void wait_for(engine::TaskId task) { foreground_.pending.push_back(task); }

    /// Makes the next compute op wait for every asynchronous data-parallel collective issued so far
    /// (the optimizer waits for the gradient buckets' reductions).
    void join_data_parallel();
    /// `kept` bytes of the sent tensor stay allocated until the micro-batch's backward (no Appendix B
    /// output deallocation).
    void send(Direction dir, const parallel::Coordinates& to, Bytes bytes, const StepContext& ctx,
              Bytes kept = Bytes{0});
    void receive(Direction dir, const parallel::Coordinates& from, Bytes bytes, const StepContext& ctx);

private:
    /// A compute stream with its tensor-parallel stream and the bookkeeping of what waits for what.
    struct Lane {
        engine::StreamId compute = engine::kNoStream;
        engine::StreamId tensor_comm = engine::kNoStream;
        engine::StreamId shared_expert_comm =
            engine::kNoStream;  // created on first use (OpStream::SharedExpertComm)
        engine::TaskId last_compute = engine::kNoTask;
        std::vector<engine::TaskId>
            pending;  // blocking collectives and receives the next compute op waits for
        std::array<std::int64_t, workload::kCommGroupCount>
            collective_count{};  // by CommGroup, for rendezvous keys
        std::int32_t index = 0;  // 0 the compute stream's lane, 1 the recompute stream's
    };

    /// Lowers ops [begin, end) of `ops`; `ids` (ops.size() long) holds the task of each op lowered so far.
    void lower_on(Lane& lane, const workload::OpList& ops, const StepContext& ctx, std::int32_t priced_index,
                  std::size_t begin, std::size_t end, std::vector<engine::TaskId>& ids);
    [[nodiscard]] engine::StreamId stream_of(workload::OpStream stream, Lane& lane);
    engine::TaskId add_task(engine::StreamId stream, SimTime duration, engine::RendezvousId r,
                            std::span<const engine::TaskId> deps, TaskInfo info);
    /// Index into out.priced of `ops` priced on this GPU (each list is priced once per GPU).
    [[nodiscard]] std::int32_t priced(const workload::OpList& ops);
    /// The priced list this lowering of `ops` runs with: priced(ops), or with kernel jitter a copy whose
    /// kernels take this launch's factors.
    [[nodiscard]] std::int32_t priced_launch(const workload::OpList& ops);
    [[nodiscard]] PricedOps price(const workload::OpList& ops) const;
    /// Charges this GPU's breakdown with what collectives beside `op` added to its time (`extra`), or
    /// with everything they added to the priced list at `priced_index`, lowered once more.
    void add_contention(const workload::Op& op, SimTime extra);
    void add_contention(std::int32_t priced_index);
    /// The lane's next collective on `group`: the group instance's channel and the collective's sequence.
    struct GroupRendezvous {
        RendezvousChannel channel;
        std::int64_t sequence = 0;
    };
    [[nodiscard]] GroupRendezvous next_collective(workload::CommGroup group, Lane& lane);
    [[nodiscard]] std::int64_t group_members(workload::CommGroup group) const;
    /// A host task before `ops` where the CPU, restarted by the last synchronising transfer, has not got
    /// far enough ahead of the compute stream to issue them in time (set_megatron_p2p).
    void add_host_gap(const workload::OpList& ops, std::int32_t priced_index, const StepContext& ctx,
                      const cost::HostCosts& host);
    /// The host costs `ops` is lowered with: batch_p2p_sync's, or the profile's once an op list makes the
    /// CPU wait for the GPU (Op::host_waits_for); null while the CPU runs unboundedly ahead.
    [[nodiscard]] const cost::HostCosts* host_costs_for(const workload::OpList& ops) const;
    void transfer(Direction dir, const parallel::Coordinates& peer, Bytes bytes, const StepContext& ctx,
                  bool send, Bytes kept);

    IterationProgram& out_;
    const OpPricing& pricing_;
    RendezvousTable& rendezvous_;
    GroupMembers members_;
    engine::GpuId gpu_;
    parallel::Coordinates at_;
    std::int64_t global_rank_;
    Lane foreground_;
    Lane background_;  // created on first use
    engine::StreamId data_comm_;
    // Context parallelism's KV exchange, created on first use.
    engine::StreamId context_comm_ = engine::kNoStream;
    std::array<engine::StreamId, 2> send_{}, receive_{};  // by Direction, for the first peer that way
    std::array<std::int64_t, 2> send_peer_{-1, -1}, receive_peer_{-1, -1};  // that peer's global rank
    // Streams of the other peers one direction reaches (a V-shaped placement sends forward to both
    // neighbours): NCCL's transfers to different peers do not queue behind each other.
    std::vector<std::pair<std::array<std::int64_t, 3>, engine::StreamId>> other_peer_streams_;
    [[nodiscard]] engine::StreamId transfer_stream(std::size_t direction, std::int64_t peer_rank, bool send);

    /// A collective's rendezvous: a flow on the network when there is one, else of fixed `duration`.
    [[nodiscard]] engine::RendezvousId collective_rendezvous(const workload::Op& op,
                                                             const GroupRendezvous& at, std::int64_t members,
                                                             SimTime duration);

    NetworkFlows* network_ = nullptr;
    std::int64_t scatter_ways_ = 1;
    bool wait_for_sends_ = false;
    const cost::HostCosts* sync_host_ = nullptr;
    bool synchronized_ = false;  // a transfer synchronised the CPU since the last op list
    double slowdown_ = 1.0;
    bool share_priced_ = true;
    bool jitter_ = false;
    double jitter_stddev_ = 0.0;
    std::int64_t jitter_seed_ = 0;
    std::int64_t lists_lowered_ = 0;  // with kernel jitter: how many lists this GPU lowered so far
    // How far the CPU is ahead of the compute stream: unbounded until something synchronises it
    // (batch_p2p_sync's transfers, the MoE dispatcher's waits).
    SimTime cpu_lead_ = kUnboundedLead;
    std::vector<engine::TaskId> unjoined_data_;  // asynchronous data-parallel collectives
    // Sends and receives so far per channel: (send?, direction, peer rank) → count. A GPU has a handful
    // of channels, so a flat list beats a map.
    std::vector<std::pair<std::array<std::int64_t, 3>, std::int64_t>> channel_count_;
    // Pipeline transfer times already priced: (bytes, peer on the same node?) → duration.
    std::vector<std::pair<std::pair<std::int64_t, bool>, SimTime>> transfer_time_;
    std::vector<std::pair<const workload::OpList*, std::int32_t>> priced_;  // list → out.priced index
    // An overlapped pair being queued (begin_overlap): each chain's lists and what its compute waits for.
    struct QueuedList {
        const workload::OpList* ops = nullptr;
        StepContext ctx;
        std::int32_t priced = 0;
        bool own_prices = false;  // `priced` is this lowering's copy (slow_beside)
        std::vector<engine::TaskId> ids;
    };
    // An expert exchange of an overlapped pair and how much of it is left to run beside the other chain.
    struct Beside {
        PairChain chain = PairChain::Forward;
        SimTime left{};
        cost::OverlapSlowdown slowdown;
    };
    /// Stretches the compute ops of q's [begin, end) that run beside `beside`'s exchange, consuming it.
    void slow_beside(QueuedList& q, std::size_t begin, std::size_t end, Beside& beside);
    struct PairChainState {
        std::vector<QueuedList> lists;
        engine::TaskId last_compute = engine::kNoTask;
        std::vector<engine::TaskId> pending;
    };
    bool overlapping_ = false;
    PairChain chain_ = PairChain::Forward;
    std::array<PairChainState, 2> chains_;  // by PairChain
    // Scratch for lower_on, kept between calls so that lowering allocates nothing per op.
    std::vector<engine::TaskId> ids_, deps_, segment_deps_;
};

}  // namespace trainsim::program
