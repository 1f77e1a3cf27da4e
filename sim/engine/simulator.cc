#include "sim/engine/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>

#include "sim/engine/active_flows.h"
#include "sim/engine/event_queue.h"

namespace trainsim::engine {
namespace {

// The version of a queued event that stands for the end of every member of rendezvous `task`.
constexpr std::uint32_t kRendezvousEnd = 0xffffffffU;

const FixedShare kFixedShare;

// How long `work` ns of a task's time alone take at `rate`: exactly `work` at rate 1.
SimTime at_rate(double work, double rate) {
    return SimTime{std::llround(work / rate)};
}

class Run {
public:
    Run(const Program& program, const RunOptions& options) : program_(program), options_(options) {
        const std::size_t n = program.size();
        result_.timings.assign(n, TaskTiming{});
        // Successors of each task as a CSR list, in two passes over the program: count, then fill. The
        // offsets double as fill cursors (each ends at the next one's start) and are shifted back
        // afterwards: no scratch array as long as the program. Each stream's tasks in program order as a
        // list threaded through next_in_stream_, built in the first pass.
        const std::size_t s = program.streams().size();
        pending_dependencies_.resize(n);
        successor_offsets_.assign(n + 1, 0);
        next_in_stream_.resize(n);
        head_.assign(s, kNoTask);
        std::vector<TaskId> last_in_stream(s, kNoTask);
        arrived_.assign(program.rendezvous_count(), 0);
        for (std::size_t t = 0; t < n; ++t) {
            const TaskId id = TaskId::from_index(t);
            const auto deps = program.dependencies(id);
            pending_dependencies_[t] = static_cast<std::uint32_t>(deps.size());
            for (const TaskId d : deps) {
                ++successor_offsets_[d.index() + 1];
            }
            const std::size_t stream = program.stream(id).index();
            next_in_stream_[t] = kNoTask;
            if (last_in_stream[stream] == kNoTask) {
                head_[stream] = id;
            } else {
                next_in_stream_[last_in_stream[stream].index()] = id;
            }
            last_in_stream[stream] = id;
            const RendezvousId r = program.rendezvous_of(id);
            if (r != kNoRendezvous) {
                ++arrived_[r.index()];  // checked against its member count below
            }
        }
        for (std::size_t t = 0; t < n; ++t) {
            successor_offsets_[t + 1] += successor_offsets_[t];
        }
        successors_.resize(successor_offsets_[n]);
        for (std::size_t t = 0; t < n; ++t) {
            const TaskId id = TaskId::from_index(t);
            for (const TaskId d : program.dependencies(id)) {
                successors_[successor_offsets_[d.index()]++] = id;
            }
        }
        shift_back(successor_offsets_);
        running_.assign(s, kNoTask);
        head_arrived_.assign(s, 0);
        background_of_.assign(s, kNoStream);
        for (std::size_t i = 0; i < s; ++i) {
            const StreamId fg = program.streams()[i].yields_to;
            if (fg != kNoStream) {
                background_of_[fg.index()] = StreamId::from_index(i);
                has_background_ = true;
            }
        }
        if (program.has_compute_shares()) {
            compute_ = std::make_unique<GpuCompute>(
                program, options.compute_sharing != nullptr ? *options.compute_sharing : kFixedShare);
        }
        // A stream runs one task at a time, so what a preemptible or repriced task needs lives per stream.
        versioned_ = has_background_ || compute_ != nullptr;
        if (versioned_) {
            remaining_.assign(s, 0.0);
            since_.assign(s, SimTime{});
            version_.assign(s, 0);
        }
        // Each rendezvous must be joined by exactly its number of members, or the run would stall.
        const std::size_t rendezvous = program.rendezvous_count();
        for (std::size_t r = 0; r < rendezvous; ++r) {
            const RendezvousId id = RendezvousId::from_index(r);
            if (static_cast<std::int32_t>(arrived_[r]) != program.rendezvous_members(id)) {
                throw std::invalid_argument("rendezvous " + std::to_string(r) + " '" +
                                            program.rendezvous_name(id) + "' expects " +
                                            std::to_string(program.rendezvous_members(id)) + " members but " +
                                            std::to_string(arrived_[r]) + " tasks join it");
            }
        }
        std::fill(arrived_.begin(), arrived_.end(), 0);
        first_arrived_.assign(rendezvous, kNoTask);
        last_arrived_.assign(rendezvous, kNoTask);
        if (program.flow_spec_count() > 0) {
            flows_ = std::make_unique<ActiveFlows>(program, options.record_rates_of);
        }
    }

    RunResult execute() {
        for (std::size_t s = 0; s < head_.size(); ++s) {
            try_start_head(StreamId::from_index(s));
        }
        while (!queue_.empty()) {
            if (result_.events >= options_.max_events) {
                throw SimulationError("event budget of " + std::to_string(options_.max_events) +
                                      " events exhausted at t=" + std::to_string(now_.ns()) + " ns; " +
                                      describe_waiting());
            }
            // An event's 32-bit subject is a rendezvous, a flow slot or a task; the version says which.
            const Event e = queue_.pop();
            if (e.version == kRendezvousEnd) {
                now_ = e.time;
                complete_rendezvous(RendezvousId{e.task});
                continue;
            }
            ++result_.events;
            if (e.task < 0) {  // the end of a flow's transfer
                if (flows_->current(-(e.task + 1), e.version)) {
                    now_ = e.time;
                    finish_flow(-(e.task + 1));
                }
                continue;
            }
            const TaskId task{e.task};
            if (versioned_ && e.version != version_[program_.stream(task).index()]) {
                continue;  // the completion of a slice that was preempted, or of a task since repriced
            }
            now_ = e.time;
            complete(task);
        }
        if (completed_ != program_.size()) {
            throw SimulationError("deadlock at t=" + std::to_string(now_.ns()) +
                                  " ns: " + describe_waiting());
        }
        result_.makespan = now_;
        if (flows_) {
            result_.resource_carried = flows_->carried();
            result_.resource_rates = flows_->take_rates();
        }
        return std::move(result_);
    }

private:
    // offsets[i] has become offsets[i + 1] after a CSR fill; restores them.
    static void shift_back(TaskVector<std::uint32_t>& offsets) {
        for (std::size_t i = offsets.size() - 1; i > 0; --i) {
            offsets[i] = offsets[i - 1];
        }
        offsets[0] = 0;
    }

    [[nodiscard]] TaskId head_of(StreamId s) const { return head_[s.index()]; }

    [[nodiscard]] bool started(TaskId t) const { return result_.timings[t.index()].start >= SimTime{}; }

    [[nodiscard]] StreamId foreground_of(StreamId s) const { return program_.streams()[s.index()].yields_to; }

    // The rendezvous member that arrived after `member`: the arrival list is threaded through
    // pending_dependencies_ (see try_start_head).
    [[nodiscard]] TaskId next_arrived(TaskId member) const {
        return TaskId{static_cast<TaskId::rep_type>(pending_dependencies_[member.index()])};
    }

    // A background task starts or resumes only while its foreground stream runs nothing.
    void try_run_background(StreamId s) {
        const TaskId t = head_of(s);
        const std::size_t si = s.index();
        if (t == kNoTask || running_[si] != kNoTask || running_[foreground_of(s).index()] != kNoTask ||
            pending_dependencies_[t.index()] != 0) {
            return;
        }
        if (!started(t)) {
            result_.timings[t.index()].start = now_;
            remaining_[si] = static_cast<double>(program_.duration(t).ns());
        }
        since_[si] = now_;
        running_[si] = t;
        queue_.push(end_of(t, at_rate(remaining_[si], rate_of(t, s))), t.value(), version_[si]);
    }

    // The rate task `t` of stream `s` progresses at now: its GPU's compute rate for a compute task, else 1.
    [[nodiscard]] double rate_of(TaskId t, StreamId s) const {
        const Stream& stream = program_.streams()[s.index()];
        return compute_ && stream.compute && !program_.outside_compute(t) ? compute_->rate(stream.gpu) : 1.0;
    }

    // A new version for stream `si`'s pending completion: the one queued is stale. A version never takes
    // the value that marks a rendezvous.
    void bump_version(std::size_t si) {
        if (++version_[si] == kRendezvousEnd) {
            version_[si] = 0;
        }
    }

    // The running tasks of `gpu`'s compute streams progressed at `old_rate` since their last update and
    // go on at the GPU's new rate: their completions move.
    void reprice(GpuId gpu, double old_rate) {
        const double rate = compute_->rate(gpu);
        for (const StreamId s : compute_->streams(gpu)) {
            const std::size_t si = s.index();
            const TaskId t = running_[si];
            if (t == kNoTask || program_.rendezvous_of(t) != kNoRendezvous || program_.outside_compute(t)) {
                continue;
            }
            remaining_[si] =
                std::max(0.0, remaining_[si] - old_rate * static_cast<double>((now_ - since_[si]).ns()));
            since_[si] = now_;
            bump_version(si);
            queue_.push(end_of(t, at_rate(remaining_[si], rate)), t.value(), version_[si]);
        }
    }

    // The compute share rendezvous `rv` holds on each member's GPU while it runs (1: none).
    [[nodiscard]] double share_of(RendezvousId rv) const {
        return compute_ ? program_.compute_share(rv) : 1.0;
    }

    // A member on stream `s` takes (`hold`) or gives back `share` of its GPU's compute.
    void share_compute(StreamId s, double share, bool hold) {
        const GpuId gpu = program_.streams()[s.index()].gpu;
        const double old_rate = compute_->rate(gpu);
        if (hold ? compute_->hold(gpu, share) : compute_->release(gpu, share)) {
            reprice(gpu, old_rate);
        }
    }

    void preempt_background_of(StreamId foreground) {
        const StreamId bg = background_of_[foreground.index()];
        if (bg == kNoStream || running_[bg.index()] == kNoTask) {
            return;
        }
        const std::size_t si = bg.index();
        const TaskId t = running_[si];
        remaining_[si] =
            std::max(0.0, remaining_[si] - rate_of(t, bg) * static_cast<double>((now_ - since_[si]).ns()));
        bump_version(si);  // its pending completion is now stale
        running_[si] = kNoTask;
    }

    void try_start_head(StreamId s) {
        if (has_background_ && foreground_of(s) != kNoStream) {
            try_run_background(s);
            return;
        }
        const std::size_t si = s.index();
        // A stream's head is the only task of it that can be running or waiting at a rendezvous.
        if (running_[si] != kNoTask || head_arrived_[si]) {
            return;
        }
        const TaskId t = head_of(s);
        if (t == kNoTask || pending_dependencies_[t.index()] != 0) {
            return;
        }
        const RendezvousId rv = program_.rendezvous_of(t);
        if (rv == kNoRendezvous) {
            start(t, program_.duration(t));
            return;
        }
        // Arrivals wait in a list threaded through pending_dependencies_, which an arrived task (all its
        // dependencies done) no longer needs: no storage per member, and no allocation per collective.
        const std::size_t r = rv.index();
        if (arrived_[r] == 0) {
            first_arrived_[r] = t;
        } else {
            pending_dependencies_[last_arrived_[r].index()] = static_cast<std::uint32_t>(t.value());
        }
        last_arrived_[r] = t;
        ++arrived_[r];
        head_arrived_[si] = 1;
        if (static_cast<std::int32_t>(arrived_[r]) == program_.rendezvous_members(rv) &&
            program_.rendezvous_flow(rv) != kNoFlow) {
            start_flow(rv);
        } else if (static_cast<std::int32_t>(arrived_[r]) == program_.rendezvous_members(rv)) {
            const SimTime end = end_of(t, program_.rendezvous_duration(rv));
            start_members(rv);
            queue_.push(end, rv.value(), kRendezvousEnd);
        }
    }

    // Every member of `rv` starts now; the arrival list stays threaded through pending_dependencies_
    // until they end, to end them.
    void start_members(RendezvousId rv) {
        const double share = share_of(rv);
        TaskId member = first_arrived_[rv.index()];
        for (std::uint32_t i = 0; i < arrived_[rv.index()]; ++i) {
            result_.timings[member.index()].start = now_;
            const StreamId s = program_.stream(member);
            head_arrived_[s.index()] = 0;
            running_[s.index()] = member;
            if (has_background_) {
                preempt_background_of(s);
            }
            if (share < 1.0) {
                share_compute(s, share, true);
            }
            member = next_arrived(member);
        }
    }

    // The members of `rv` end together, in arrival order: one queued event stands for all of them.
    // They would otherwise be pushed one after another at one time, so popped one after another with
    // nothing between them (a run is FIFO and nothing earlier can be pushed): the order of completions,
    // and every timing, is the same. Each member still counts as an event, against the budget too.
    void complete_rendezvous(RendezvousId rv) {
        const double share = share_of(rv);
        TaskId member = first_arrived_[rv.index()];
        for (std::uint32_t i = 0; i < arrived_[rv.index()]; ++i) {
            if (i > 0 && result_.events >= options_.max_events) {
                throw SimulationError("event budget of " + std::to_string(options_.max_events) +
                                      " events exhausted at t=" + std::to_string(now_.ns()) + " ns; " +
                                      describe_waiting());
            }
            ++result_.events;
            const TaskId next = next_arrived(member);
            pending_dependencies_[member.index()] = 0;
            // Its share goes back first: what its completion starts on its GPU runs at the new rate.
            if (share < 1.0) {
                share_compute(program_.stream(member), share, false);
            }
            complete(member);
            member = next;
        }
    }

    // Every member starts now and runs until the flow has moved its data; the arrival list stays
    // threaded through pending_dependencies_ until then, to end them.
    void start_flow(RendezvousId rv) {
        start_members(rv);
        reschedules_.clear();
        flows_->start(rv, now_, reschedules_);
        push_reschedules();
    }

    void finish_flow(std::int32_t slot) {
        reschedules_.clear();
        const RendezvousId rv = flows_->finish(slot, now_, reschedules_);
        push_reschedules();
        const SimTime end = now_ + program_.flow_spec(program_.rendezvous_flow(rv)).latency;
        queue_.push(end, rv.value(), kRendezvousEnd);
    }

    void push_reschedules() {
        for (const ActiveFlows::Reschedule& r : reschedules_) {
            queue_.push(r.finish, -(r.slot + 1), r.version);
        }
    }

    void start(TaskId t, SimTime duration) {
        result_.timings[t.index()].start = now_;
        const StreamId s = program_.stream(t);
        const std::size_t si = s.index();
        running_[si] = t;
        if (has_background_) {
            preempt_background_of(s);
        }
        if (!versioned_) {
            queue_.push(end_of(t, duration), t.value());
            return;
        }
        remaining_[si] = static_cast<double>(duration.ns());
        since_[si] = now_;
        queue_.push(end_of(t, at_rate(remaining_[si], rate_of(t, s))), t.value(), version_[si]);
    }

    void complete(TaskId t) {
        result_.timings[t.index()].end = now_;
        ++completed_;
        const StreamId s = program_.stream(t);
        head_[s.index()] = next_in_stream_[t.index()];  // t was the head
        running_[s.index()] = kNoTask;
        for (std::uint32_t i = successor_offsets_[t.index()]; i < successor_offsets_[t.index() + 1]; ++i) {
            const TaskId succ = successors_[i];
            if (--pending_dependencies_[succ.index()] == 0) {
                try_start_head(program_.stream(succ));
            }
        }
        try_start_head(s);
        // A foreground stream with nothing to run leaves the GPU to its background stream.
        if (has_background_ && background_of_[s.index()] != kNoStream) {
            try_start_head(background_of_[s.index()]);
        }
    }

    // now + duration, which must stay inside SimTime: each cost is below 2^63 ns (to_sim_time checks),
    // but their sum along a stream is not, and a wrapped time would reorder every later event.
    [[nodiscard]] SimTime end_of(TaskId t, SimTime duration) const {
        if (duration > SimTime::max() - now_) [[unlikely]] {
            throw_time_overflow(t, duration);
        }
        return now_ + duration;
    }

    // Out of line, so that end_of's check costs the hot loop a compare and a branch.
    [[noreturn, gnu::cold, gnu::noinline]] void throw_time_overflow(TaskId t, SimTime duration) const {
        const Stream& stream = program_.streams()[program_.stream(t).index()];
        throw SimulationError("simulated time passes 2^63 ns (292 years) at t=" + std::to_string(now_.ns()) +
                              " ns: gpu " + std::to_string(stream.gpu.value()) + " stream " + stream.name +
                              " starts '" + task_name(t) + "' of " + std::to_string(duration.ns()) + " ns");
    }

    [[nodiscard]] std::string task_name(TaskId t) const {
        if (options_.describe_task) {
            return options_.describe_task(t);
        }
        std::string name = program_.task_name(t);
        return name.empty() ? "task " + std::to_string(t.value()) : name;
    }

    [[nodiscard]] std::string describe_waiting() const {
        // The first few waiting streams say what is wrong; thousands more only bury it.
        constexpr std::size_t kShown = 20;
        std::ostringstream out;
        bool first = true;
        std::size_t waiting = 0;
        for (std::size_t s = 0; s < head_.size(); ++s) {
            const TaskId t = head_of(StreamId::from_index(s));
            if (t == kNoTask || started(t)) {
                continue;
            }
            if (++waiting > kShown) {
                continue;
            }
            const Stream& stream = program_.streams()[s];
            out << (first ? "" : "; ") << "gpu " << stream.gpu << " stream " << stream.name << " waits at '"
                << task_name(t) << "' for ";
            first = false;
            std::vector<std::string> waits;
            for (const TaskId d : program_.dependencies(t)) {
                if (result_.timings[d.index()].end < SimTime{}) {
                    waits.push_back("'" + task_name(d) + "'");
                }
            }
            const RendezvousId rv = program_.rendezvous_of(t);
            if (rv != kNoRendezvous) {
                const std::int32_t members = program_.rendezvous_members(rv);
                waits.push_back(std::to_string(members - static_cast<std::int32_t>(arrived_[rv.index()])) +
                                " of " + std::to_string(members) + " members of '" +
                                (options_.describe_rendezvous ? options_.describe_rendezvous(rv)
                                                              : program_.rendezvous_name(rv)) +
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
    RunResult result_;
    EventQueue queue_;
    SimTime now_{};
    std::size_t completed_ = 0;
    TaskVector<std::uint32_t> pending_dependencies_;  // an arrived rendezvous member: the next arrival
    TaskVector<std::uint32_t> successor_offsets_;
    TaskVector<TaskId> successors_;
    TaskVector<TaskId> next_in_stream_;  // the next task of its stream, or kNoTask
    // Per stream.
    std::vector<TaskId> head_;             // the first task of the stream not yet completed, or kNoTask
    std::vector<TaskId> running_;          // the task running now, or kNoTask
    std::vector<char> head_arrived_;       // its head waits at a rendezvous for the other members
    std::vector<StreamId> background_of_;  // its background stream, or kNoStream
    bool has_background_ = false;
    // Each GPU's compute resource, for programs whose rendezvous hold shares of it.
    std::unique_ptr<GpuCompute> compute_;
    // With background streams or a compute resource (sized then): the running task's time alone still
    // to run (ns; fractional once it has run at a rate below 1), since when, and the version that marks
    // its completion event current.
    bool versioned_ = false;
    std::vector<double> remaining_;
    std::vector<SimTime> since_;
    std::vector<std::uint32_t> version_;
    // Per rendezvous: how many members have arrived, and the first and last of them.
    TaskVector<std::uint32_t> arrived_;
    TaskVector<TaskId> first_arrived_;
    TaskVector<TaskId> last_arrived_;
    // Flows running now (only for programs with flow rendezvous), and scratch for their new end times.
    std::unique_ptr<ActiveFlows> flows_;
    std::vector<ActiveFlows::Reschedule> reschedules_;
};

}  // namespace

RunResult simulate(const Program& program, const RunOptions& options) {
    return Run(program, options).execute();
}

}  // namespace trainsim::engine
