// The engine's input: streams, tasks in program order on each stream, cross-stream dependencies and
// rendezvous (collectives and matched send/receive pairs). It says nothing about what a task computes;
// durations arrive already priced.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/core/units.h"

namespace trainsim::engine {

using TaskId = std::int32_t;
using StreamId = std::int32_t;
using RendezvousId = std::int32_t;
inline constexpr RendezvousId kNoRendezvous = -1;

/// A queue of work on one GPU that runs one task at a time, in the order tasks were added (a CUDA
/// stream, or a NCCL communicator's channel).
struct Stream {
    std::int32_t gpu = 0;
    std::string name;
    /// For a background stream, the stream it yields to: its tasks run only while that stream runs
    /// nothing, and are preempted (paused, to resume later) when it starts a task — a low-priority CUDA
    /// stream filling the idle time of the high-priority one. -1 for an ordinary stream.
    StreamId yields_to = -1;
};

/// A group of tasks on different streams that start together once every member has arrived and end
/// together `duration` later: a collective over a process group, or a send matched to its receive.
struct Rendezvous {
    std::int32_t members = 0;
    SimTime duration = 0;
    std::string name;
};

/// 24 bytes: a 2240-GPU program has tens of millions of these, so names live apart (see task_name).
struct Task {
    SimTime duration = 0;  // ignored for rendezvous members: the rendezvous sets it
    StreamId stream = 0;
    RendezvousId rendezvous = kNoRendezvous;
    std::uint32_t first_dependency = 0;  // into Program's dependency array
    std::uint32_t dependency_count = 0;
};

class Program {
public:
    StreamId add_stream(std::int32_t gpu, std::string name);
    /// A background stream of the same GPU that yields to `foreground` (at most one per foreground;
    /// its tasks cannot be rendezvous members).
    StreamId add_background_stream(StreamId foreground, std::string name);
    RendezvousId add_rendezvous(std::int32_t members, SimTime duration, std::string name);

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
        const auto i = static_cast<std::size_t>(t);
        return i < names_.size() ? names_[i] : std::string{};
    }

    [[nodiscard]] const std::vector<Stream>& streams() const { return streams_; }
    [[nodiscard]] const std::vector<Task>& tasks() const { return tasks_; }
    [[nodiscard]] const std::vector<Rendezvous>& rendezvous() const { return rendezvous_; }
    [[nodiscard]] std::span<const TaskId> dependencies(TaskId t) const {
        const Task& task = tasks_[static_cast<std::size_t>(t)];
        return {dependencies_.data() + task.first_dependency, task.dependency_count};
    }
    [[nodiscard]] std::size_t size() const { return tasks_.size(); }

private:
    TaskId add(StreamId stream, SimTime duration, RendezvousId r, std::string name,
               std::span<const TaskId> dependencies);

    std::vector<Stream> streams_;
    std::vector<Task> tasks_;
    std::vector<Rendezvous> rendezvous_;
    std::vector<TaskId> dependencies_;
    std::vector<std::string> names_;  // only as long as the last named task
};

}  // namespace trainsim::engine
