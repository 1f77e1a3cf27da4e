#include "sim/engine/simulator.h"

#include <limits>
#include <sstream>

#include "sim/engine/event_queue.h"

namespace trainsim::engine {
namespace {

class Run {
public:
    Run(const Program& program, const RunOptions& options)
        : program_(program), options_(options), tasks_(program.tasks()) {
        const std::size_t n = tasks_.size();
        result_.timings.assign(n, TaskTiming{});
        pending_dependencies_.resize(n);
        successor_offsets_.assign(n + 1, 0);
        for (std::size_t t = 0; t < n; ++t) {
            const auto deps = program.dependencies(static_cast<TaskId>(t));
            pending_dependencies_[t] = static_cast<std::uint32_t>(deps.size());
            for (const TaskId d : deps) {
                ++successor_offsets_[static_cast<std::size_t>(d) + 1];
            }
        }
        for (std::size_t t = 0; t < n; ++t) {
            successor_offsets_[t + 1] += successor_offsets_[t];
        }
        successors_.resize(successor_offsets_[n]);
        std::vector<std::uint32_t> fill(successor_offsets_.begin(), successor_offsets_.end() - 1);
        for (std::size_t t = 0; t < n; ++t) {
            for (const TaskId d : program.dependencies(static_cast<TaskId>(t))) {
                successors_[fill[static_cast<std::size_t>(d)]++] = static_cast<TaskId>(t);
            }
        }
        // Each stream's tasks in program order, as a CSR list.
        const std::size_t s = program.streams().size();
        stream_offsets_.assign(s + 1, 0);
        for (const Task& task : tasks_) {
            ++stream_offsets_[static_cast<std::size_t>(task.stream) + 1];
        }
        for (std::size_t i = 0; i < s; ++i) {
            stream_offsets_[i + 1] += stream_offsets_[i];
        }
        stream_tasks_.resize(n);
        std::vector<std::uint32_t> stream_fill(stream_offsets_.begin(), stream_offsets_.end() - 1);
        for (std::size_t t = 0; t < n; ++t) {
            stream_tasks_[stream_fill[static_cast<std::size_t>(tasks_[t].stream)]++] = static_cast<TaskId>(t);
        }
        stream_head_.assign(s, 0);
        running_.assign(s, -1);
        background_of_.assign(s, -1);
        for (std::size_t i = 0; i < s; ++i) {
            const StreamId fg = program.streams()[i].yields_to;
            if (fg >= 0) {
                background_of_[static_cast<std::size_t>(fg)] = static_cast<StreamId>(i);
                has_background_ = true;
            }
        }
        if (has_background_) {
            remaining_.assign(n, 0);
            slice_start_.assign(n, 0);
            version_.assign(n, 0);
        }
        has_arrived_.assign(n, 0);
        // Each rendezvous must be joined by exactly its number of members, or the run would stall.
        std::vector<std::int32_t> joined(program.rendezvous().size(), 0);
        for (const Task& task : tasks_) {
            if (task.rendezvous != kNoRendezvous) {
                ++joined[static_cast<std::size_t>(task.rendezvous)];
            }
        }
        for (std::size_t r = 0; r < joined.size(); ++r) {
            if (joined[r] != program.rendezvous()[r].members) {
                throw std::invalid_argument("rendezvous " + std::to_string(r) + " '" +
                                            program.rendezvous()[r].name + "' expects " +
                                            std::to_string(program.rendezvous()[r].members) +
                                            " members but " + std::to_string(joined[r]) + " tasks join it");
            }
        }
        // Arrivals at each rendezvous as one flat array (CSR): a slot per member task, so that an arrival
        // allocates nothing (a vector per rendezvous cost one heap allocation per collective).
        const std::size_t rendezvous = program.rendezvous().size();
        arrival_offsets_.assign(rendezvous + 1, 0);
        for (const Task& task : tasks_) {
            if (task.rendezvous != kNoRendezvous) {
                ++arrival_offsets_[static_cast<std::size_t>(task.rendezvous) + 1];
            }
        }
        for (std::size_t r = 0; r < rendezvous; ++r) {
            arrival_offsets_[r + 1] += arrival_offsets_[r];
        }
        arrivals_.resize(arrival_offsets_[rendezvous]);
        arrived_.assign(rendezvous, 0);
    }

    RunResult execute() {
        for (std::size_t s = 0; s < stream_head_.size(); ++s) {
            try_start_head(static_cast<StreamId>(s));
        }
        while (!queue_.empty()) {
            if (result_.events >= options_.max_events) {
                throw SimulationError("event budget of " + std::to_string(options_.max_events) +
                                      " events exhausted at t=" + std::to_string(now_) + " ns; " +
                                      describe_waiting());
            }
            const Event e = queue_.pop();
            ++result_.events;
            if (has_background_ && e.version != version_[static_cast<std::size_t>(e.task)]) {
                continue;  // the completion of a slice that was preempted
            }
            now_ = e.time;
            complete(e.task);
        }
        if (completed_ != tasks_.size()) {
            throw SimulationError("deadlock at t=" + std::to_string(now_) + " ns: " + describe_waiting());
        }
        result_.makespan = now_;
        return std::move(result_);
    }

private:
    [[nodiscard]] TaskId head_of(StreamId s) const {
        const std::uint32_t pos =
            stream_offsets_[static_cast<std::size_t>(s)] + stream_head_[static_cast<std::size_t>(s)];
        return pos < stream_offsets_[static_cast<std::size_t>(s) + 1] ? stream_tasks_[pos] : -1;
    }

    [[nodiscard]] bool started(TaskId t) const {
        return result_.timings[static_cast<std::size_t>(t)].start >= 0;
    }

    [[nodiscard]] StreamId foreground_of(StreamId s) const {
        return program_.streams()[static_cast<std::size_t>(s)].yields_to;
    }

    // A background task starts or resumes only while its foreground stream runs nothing.
    void try_run_background(StreamId s) {
        const TaskId t = head_of(s);
        const auto ti = static_cast<std::size_t>(t);
        if (t < 0 || running_[static_cast<std::size_t>(s)] >= 0 ||
            running_[static_cast<std::size_t>(foreground_of(s))] >= 0 || pending_dependencies_[ti] != 0) {
            return;
        }
        if (!started(t)) {
            result_.timings[ti].start = now_;
            remaining_[ti] = tasks_[ti].duration;
        }
        slice_start_[ti] = now_;
        running_[static_cast<std::size_t>(s)] = t;
        queue_.push(end_of(t, remaining_[ti]), t, version_[ti]);
    }

    void preempt_background_of(StreamId foreground) {
        const StreamId bg = background_of_[static_cast<std::size_t>(foreground)];
        if (bg < 0 || running_[static_cast<std::size_t>(bg)] < 0) {
            return;
        }
        const auto ti = static_cast<std::size_t>(running_[static_cast<std::size_t>(bg)]);
        remaining_[ti] -= now_ - slice_start_[ti];
        ++version_[ti];  // its pending completion is now stale
        running_[static_cast<std::size_t>(bg)] = -1;
    }

    void try_start_head(StreamId s) {
        if (has_background_ && foreground_of(s) >= 0) {
            try_run_background(s);
            return;
        }
        const TaskId t = head_of(s);
        if (t < 0 || started(t) || has_arrived_[static_cast<std::size_t>(t)] ||
            pending_dependencies_[static_cast<std::size_t>(t)] != 0) {
            return;
        }
        const Task& task = tasks_[static_cast<std::size_t>(t)];
        if (task.rendezvous == kNoRendezvous) {
            start(t, task.duration);
            return;
        }
        const auto r = static_cast<std::size_t>(task.rendezvous);
        arrivals_[arrival_offsets_[r] + arrived_[r]] = t;
        ++arrived_[r];
        has_arrived_[static_cast<std::size_t>(t)] = 1;
        const Rendezvous& rv = program_.rendezvous()[r];
        if (static_cast<std::int32_t>(arrived_[r]) == rv.members) {
            for (std::uint32_t i = arrival_offsets_[r]; i < arrival_offsets_[r] + arrived_[r]; ++i) {
                start(arrivals_[i], rv.duration);
            }
        }
    }

    void start(TaskId t, SimTime duration) {
        result_.timings[static_cast<std::size_t>(t)].start = now_;
        const StreamId s = tasks_[static_cast<std::size_t>(t)].stream;
        running_[static_cast<std::size_t>(s)] = t;
        if (has_background_) {
            preempt_background_of(s);
        }
        queue_.push(end_of(t, duration), t);
    }

    void complete(TaskId t) {
        result_.timings[static_cast<std::size_t>(t)].end = now_;
        ++completed_;
        const StreamId s = tasks_[static_cast<std::size_t>(t)].stream;
        ++stream_head_[static_cast<std::size_t>(s)];
        running_[static_cast<std::size_t>(s)] = -1;
        for (std::uint32_t i = successor_offsets_[static_cast<std::size_t>(t)];
             i < successor_offsets_[static_cast<std::size_t>(t) + 1]; ++i) {
            const TaskId succ = successors_[i];
            if (--pending_dependencies_[static_cast<std::size_t>(succ)] == 0) {
                try_start_head(tasks_[static_cast<std::size_t>(succ)].stream);
            }
        }
        try_start_head(s);
        // A foreground stream with nothing to run leaves the GPU to its background stream.
        if (has_background_ && background_of_[static_cast<std::size_t>(s)] >= 0) {
            try_start_head(background_of_[static_cast<std::size_t>(s)]);
        }
    }

    // now + duration, which must stay inside SimTime: each cost is below 2^63 ns (to_sim_time checks),
    // but their sum along a stream is not, and a wrapped time would reorder every later event.
    [[nodiscard]] SimTime end_of(TaskId t, SimTime duration) const {
        if (duration > std::numeric_limits<SimTime>::max() - now_) {
            const Stream& stream =
                program_.streams()[static_cast<std::size_t>(tasks_[static_cast<std::size_t>(t)].stream)];
            throw SimulationError("simulated time passes 2^63 ns (292 years) at t=" + std::to_string(now_) +
                                  " ns: gpu " + std::to_string(stream.gpu) + " stream " + stream.name +
                                  " starts '" + task_name(t) + "' of " + std::to_string(duration) + " ns");
        }
        return now_ + duration;
    }

    [[nodiscard]] std::string task_name(TaskId t) const {
        if (options_.describe_task) {
            return options_.describe_task(t);
        }
        std::string name = program_.task_name(t);
        return name.empty() ? "task " + std::to_string(t) : name;
    }

    [[nodiscard]] std::string describe_waiting() const {
        // The first few waiting streams say what is wrong; thousands more only bury it.
        constexpr std::size_t kShown = 20;
        std::ostringstream out;
        bool first = true;
        std::size_t waiting = 0;
        for (std::size_t s = 0; s < stream_head_.size(); ++s) {
            const TaskId t = head_of(static_cast<StreamId>(s));
            if (t < 0 || started(t)) {
                continue;
            }
            if (++waiting > kShown) {
                continue;
            }
            const Task& task = tasks_[static_cast<std::size_t>(t)];
            const Stream& stream = program_.streams()[s];
            out << (first ? "" : "; ") << "gpu " << stream.gpu << " stream " << stream.name << " waits at '"
                << task_name(t) << "' for ";
            first = false;
            std::vector<std::string> waits;
            for (const TaskId d : program_.dependencies(t)) {
                if (result_.timings[static_cast<std::size_t>(d)].end < 0) {
                    waits.push_back("'" + task_name(d) + "'");
                }
            }
            if (task.rendezvous != kNoRendezvous) {
                const auto r = static_cast<std::size_t>(task.rendezvous);
                const Rendezvous& rv = program_.rendezvous()[r];
                waits.push_back(
                    std::to_string(rv.members - static_cast<std::int32_t>(arrived_[r])) + " of " +
                    std::to_string(rv.members) + " members of '" +
                    (options_.describe_rendezvous ? options_.describe_rendezvous(task.rendezvous) : rv.name) +
                    "'");
            }
            for (std::size_t i = 0; i < waits.size(); ++i) {
                out << (i ? ", " : "") << waits[i];
            }
        }
        if (waiting > kShown) {
            out << "; and " << waiting - kShown << " more waiting streams";
        }
        return out.str();
    }

    const Program& program_;
    const RunOptions& options_;
    const std::vector<Task>& tasks_;
    RunResult result_;
    EventQueue queue_;
    SimTime now_ = 0;
    std::size_t completed_ = 0;
    std::vector<std::uint32_t> pending_dependencies_;
    std::vector<std::uint32_t> successor_offsets_;
    std::vector<TaskId> successors_;
    std::vector<std::uint32_t> stream_offsets_;
    std::vector<TaskId> stream_tasks_;
    std::vector<std::uint32_t> stream_head_;
    std::vector<char> has_arrived_;        // a rendezvous member that waits for the others
    std::vector<TaskId> running_;          // per stream: the task running now, or -1
    std::vector<StreamId> background_of_;  // per stream: its background stream, or -1
    bool has_background_ = false;
    // Background tasks only (sized when the program has background streams): time still to run, when
    // the current slice began, and the version that marks their completion events current.
    std::vector<SimTime> remaining_;
    std::vector<SimTime> slice_start_;
    std::vector<std::uint32_t> version_;
    std::vector<std::uint32_t> arrival_offsets_;  // per rendezvous: its first slot in arrivals_
    std::vector<TaskId> arrivals_;                // the members that have arrived, in arrival order
    std::vector<std::uint32_t> arrived_;          // per rendezvous: how many have arrived
};

}  // namespace

RunResult simulate(const Program& program, const RunOptions& options) {
    return Run(program, options).execute();
}

}  // namespace trainsim::engine
