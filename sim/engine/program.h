// The engine's input: streams, tasks in program order on each stream, cross-stream dependencies and
// rendezvous (collectives and matched send/receive pairs). It says nothing about what a task computes;
// durations arrive already priced.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/core/huge_page_allocator.h"
#include "sim/core/strong_id.h"
#include "sim/core/units.h"
#include "sim/engine/flow.h"

namespace trainsim::engine {

// Distinct kinds: a stream id passed where a task id is expected does not compile.
using TaskId = StrongId<struct TaskTag>;
using StreamId = StrongId<struct StreamTag>;
using RendezvousId = StrongId<struct RendezvousTag>;
/// A simulated GPU (IterationProgram::gpus' index): not a stream or a task, nor a rank of a parallel
/// group (a pipeline stage, a data-parallel rank), which stay integers.
using GpuId = StrongId<struct GpuTag>;
inline constexpr TaskId kNoTask = TaskId::none();
inline constexpr StreamId kNoStream = StreamId::none();
inline constexpr RendezvousId kNoRendezvous = RendezvousId::none();

/// A queue of work on one GPU that runs one task at a time, in the order tasks were added (a CUDA
/// stream, or a NCCL communicator's channel).
struct Stream {
    GpuId gpu{0};
    std::string name;
    /// For a background stream, the stream it yields to: its tasks run only while that stream runs
    /// nothing, and are preempted (paused, to resume later) when it starts a task — a low-priority CUDA
    /// stream filling the idle time of the high-priority one. kNoStream for an ordinary stream.
    StreamId yields_to = kNoStream;
    /// Its tasks run on the GPU's compute (its SMs): they progress at the rate the compute sharing
    /// policy gives while communication holding a share of that GPU runs (gpu_compute.h).
    bool compute = false;
};

/// A program holds every task of every simulated GPU: tens of millions for an unfolded 2240-GPU
/// iteration. So a task is 12 bytes plus 4 per dependency: its stream, one word that is either its
/// rendezvous or an index into the program's distinct durations (a layer's few kernel times repeat
/// over every micro-batch and GPU), and the end of its dependencies; names live apart (see task_name).
class Program {
public:
    StreamId add_stream(GpuId gpu, std::string name);
    /// A background stream of the same GPU that yields to `foreground` (at most one per foreground;
    /// its tasks cannot be rendezvous members).
    StreamId add_background_stream(StreamId foreground, std::string name);
    /// A group of tasks on different streams that start together once all `members` have arrived and
    /// end together `duration` later: a collective over a process group, or a send matched to its
    /// receive. `name` is optional, as for tasks.
    RendezvousId add_rendezvous(std::int32_t members, SimTime duration, std::string name);

    /// Puts `stream`'s tasks on its GPU's compute resource (Stream::compute).
    void set_compute_stream(StreamId stream);
    /// While rendezvous `r` runs, it holds a share of each member's GPU: that GPU's compute tasks
    /// progress at `rate` (0 < rate <= 1) of their speed alone, under the fixed-share policy. A program
    /// that sets none runs every task at its duration, and pays nothing for the resource.
    void set_compute_share(RendezvousId r, double rate);
    /// A task on a compute stream that holds no compute (a host-side wait): it runs its duration.
    void set_outside_compute(TaskId t);

    /// A resource that flows share (a link, a NIC, an NVLink port), of `capacity` units per second. The
    /// engine does not name it: whoever built it (sim/network's topology) does.
    ResourceId add_resource(double capacity);
    /// Registers what a flow moves and over which resources; identical specs share one id (a layer's
    /// collectives repeat over every micro-batch).
    FlowSpecId add_flow_spec(FlowSpec spec);
    /// A rendezvous whose members, once all arrived, run flow `spec`: they end together when its amount
    /// has moved at the rate the sharing policy gives it (rates change as other flows start and end),
    /// plus its latency.
    RendezvousId add_flow_rendezvous(std::int32_t members, FlowSpecId spec, std::string name);

    /// Adds a task at the end of `stream`. It starts once it heads its stream and every task in
    /// `dependencies` (any stream) has finished.
    /// `name` is optional: large programs leave it empty and name tasks through RunOptions instead.
    TaskId add_task(StreamId stream, SimTime duration, std::string name,
                    std::span<const TaskId> dependencies = {});

    /// Adds a member of rendezvous `r` at the end of `stream`.
    TaskId add_rendezvous_task(StreamId stream, RendezvousId r, std::string name,
                               std::span<const TaskId> dependencies = {});

    /// The name given to add_task, or "" when none was.
    [[nodiscard]] std::string task_name(TaskId t) const {
        return t.index() < names_.size() ? names_[t.index()] : std::string{};
    }

    [[nodiscard]] std::size_t size() const { return payload_.size(); }
    [[nodiscard]] const std::vector<Stream>& streams() const { return streams_; }
    [[nodiscard]] StreamId stream(TaskId t) const { return stream_[t.index()]; }
    /// The rendezvous task `t` is a member of, or kNoRendezvous.
    [[nodiscard]] RendezvousId rendezvous_of(TaskId t) const {
        const std::int32_t p = payload_[t.index()];
        return p < 0 ? RendezvousId{-(p + 1)} : kNoRendezvous;
    }
    /// How long `t` runs once started: its own duration, or its rendezvous's.
    [[nodiscard]] SimTime duration(TaskId t) const {
        const std::int32_t p = payload_[t.index()];
        return p < 0 ? rendezvous_duration(RendezvousId{-(p + 1)}) : durations_[static_cast<std::size_t>(p)];
    }
    [[nodiscard]] std::span<const TaskId> dependencies(TaskId t) const {
        const std::size_t i = t.index();
        const std::uint32_t first = i == 0 ? 0 : dependency_end_[i - 1];
        return {dependencies_.data() + first, dependency_end_[i] - first};
    }

    [[nodiscard]] std::size_t rendezvous_count() const { return rendezvous_members_.size(); }
    [[nodiscard]] std::int32_t rendezvous_members(RendezvousId r) const {
        return rendezvous_members_[r.index()];
    }
    [[nodiscard]] SimTime rendezvous_duration(RendezvousId r) const {
        return durations_[rendezvous_duration_[r.index()]];
    }
    /// The flow rendezvous `r` runs, or kNoFlow for one of fixed duration.
    [[nodiscard]] FlowSpecId rendezvous_flow(RendezvousId r) const {
        return r.index() < rendezvous_flow_.size() ? rendezvous_flow_[r.index()] : kNoFlow;
    }
    [[nodiscard]] const FlowSpec& flow_spec(FlowSpecId f) const { return flow_specs_[f.index()]; }
    [[nodiscard]] std::size_t flow_spec_count() const { return flow_specs_.size(); }
    [[nodiscard]] const std::vector<double>& resource_capacities() const { return resource_capacity_; }

    /// The compute rate rendezvous `r` leaves its members' GPUs while it runs (1: it holds none).
    [[nodiscard]] double compute_share(RendezvousId r) const {
        return r.index() < compute_share_.size() ? compute_share_[r.index()] : 1.0;
    }
    /// Whether any rendezvous holds a share of a GPU's compute.
    [[nodiscard]] bool has_compute_shares() const { return !compute_share_.empty(); }
    [[nodiscard]] bool outside_compute(TaskId t) const {
        return std::binary_search(outside_compute_.begin(), outside_compute_.end(), t);
    }

    /// The name given to add_rendezvous, or "".
    [[nodiscard]] std::string rendezvous_name(RendezvousId r) const {
        return r.index() < rendezvous_names_.size() ? rendezvous_names_[r.index()] : std::string{};
    }

private:
    TaskId add(StreamId stream, std::int32_t payload, std::string name, std::span<const TaskId> dependencies);
    /// The index of `duration` in durations_, added if new.
    [[nodiscard]] std::uint32_t intern(SimTime duration);

    std::vector<Stream> streams_;
    // Per task.
    TaskVector<StreamId> stream_;
    TaskVector<std::int32_t> payload_;  // ≥ 0: index into durations_; < 0: rendezvous −(payload + 1)
    TaskVector<std::uint32_t> dependency_end_;  // task t's dependencies end here (CSR, begin = t−1's end)
    TaskVector<TaskId> dependencies_;
    std::vector<std::string> names_;  // only as long as the last named task
    // Per rendezvous.
    TaskVector<std::int32_t> rendezvous_members_;
    TaskVector<std::uint32_t> rendezvous_duration_;  // index into durations_
    std::vector<std::string> rendezvous_names_;      // only as long as the last named rendezvous
    std::vector<FlowSpecId> rendezvous_flow_;        // only as long as the last flow rendezvous
    std::vector<double> compute_share_;              // only as long as the last that holds a share
    std::vector<TaskId> outside_compute_;            // sorted
    // Shared resources and interned flow specs.
    std::vector<double> resource_capacity_;
    std::vector<FlowSpec> flow_specs_;
    std::unordered_map<std::size_t, std::vector<FlowSpecId>> flow_spec_index_;  // by hash of the spec
    // Distinct durations.
    std::vector<SimTime> durations_;
    std::unordered_map<SimTime, std::uint32_t> duration_index_;
};

}  // namespace trainsim::engine
