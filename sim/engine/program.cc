#include "sim/engine/program.h"

#include <limits>
#include <stdexcept>
#include <utility>

#include "sim/engine/simulator.h"

namespace trainsim::engine {

StreamId Program::add_stream(std::int32_t gpu, std::string name) {
    streams_.push_back(Stream{gpu, std::move(name)});
    return static_cast<StreamId>(streams_.size() - 1);
}

StreamId Program::add_background_stream(StreamId foreground, std::string name) {
    if (foreground < 0 || static_cast<std::size_t>(foreground) >= streams_.size() ||
        streams_[static_cast<std::size_t>(foreground)].yields_to >= 0) {
        throw std::invalid_argument("background stream '" + name + "' needs an ordinary foreground stream");
    }
    for (const Stream& s : streams_) {
        if (s.yields_to == foreground) {
            throw std::invalid_argument("stream '" + streams_[static_cast<std::size_t>(foreground)].name +
                                        "' already has a background stream");
        }
    }
    streams_.push_back(
        Stream{streams_[static_cast<std::size_t>(foreground)].gpu, std::move(name), foreground});
    return static_cast<StreamId>(streams_.size() - 1);
}

RendezvousId Program::add_rendezvous(std::int32_t members, SimTime duration, std::string name) {
    if (members < 1) {
        throw std::invalid_argument("rendezvous '" + name + "' needs at least one member");
    }
    if (duration < 0) {
        throw std::invalid_argument("rendezvous '" + name + "' has a negative duration");
    }
    rendezvous_.push_back(Rendezvous{members, duration, std::move(name)});
    return static_cast<RendezvousId>(rendezvous_.size() - 1);
}

TaskId Program::add_task(StreamId stream, SimTime duration, std::string name,
                         std::span<const TaskId> dependencies) {
    if (duration < 0) {
        throw std::invalid_argument("task '" + name + "' has a negative duration");
    }
    return add(stream, duration, kNoRendezvous, std::move(name), dependencies);
}

TaskId Program::add_rendezvous_task(StreamId stream, RendezvousId r, std::string name,
                                    std::span<const TaskId> dependencies) {
    if (r < 0 || static_cast<std::size_t>(r) >= rendezvous_.size()) {
        throw std::invalid_argument("task '" + name + "' joins an unknown rendezvous");
    }
    if (stream >= 0 && static_cast<std::size_t>(stream) < streams_.size() &&
        streams_[static_cast<std::size_t>(stream)].yields_to >= 0) {
        throw std::invalid_argument("task '" + name + "': a background stream cannot join a rendezvous");
    }
    return add(stream, 0, r, std::move(name), dependencies);
}

TaskId Program::add(StreamId stream, SimTime duration, RendezvousId r, std::string name,
                    std::span<const TaskId> dependencies) {
    if (stream < 0 || static_cast<std::size_t>(stream) >= streams_.size()) {
        throw std::invalid_argument("task '" + name + "' is on an unknown stream");
    }
    // TaskId is 32 bits: one more task would wrap to a negative id and corrupt every dependency after it.
    if (tasks_.size() >= static_cast<std::size_t>(std::numeric_limits<TaskId>::max())) {
        throw SimulationError(
            "the program has more tasks than the engine can index (2^31 - 1); simulate fewer "
            "micro-batches or GPUs");
    }
    const auto id = static_cast<TaskId>(tasks_.size());
    for (const TaskId d : dependencies) {
        // Only earlier tasks: the program is built in an order that makes it acyclic by construction.
        if (d < 0 || d >= id) {
            throw std::invalid_argument("task '" + name + "' depends on a task not yet added");
        }
    }
    Task task;
    task.stream = stream;
    task.duration = duration;
    task.rendezvous = r;
    task.first_dependency = static_cast<std::uint32_t>(dependencies_.size());
    task.dependency_count = static_cast<std::uint32_t>(dependencies.size());
    dependencies_.insert(dependencies_.end(), dependencies.begin(), dependencies.end());
    tasks_.push_back(task);
    if (!name.empty()) {
        names_.resize(tasks_.size());
        names_.back() = std::move(name);
    }
    return id;
}

}  // namespace trainsim::engine
