// The simulation loop: runs a Program to completion over its streams and rendezvous.
//
// The only events are task completions. A task starts the moment it heads its stream, its
// dependencies are done and, for a rendezvous member, every other member has arrived; its completion
// is then scheduled `duration` later. Time jumps from event to event (no ticking clock).
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/huge_page_allocator.h"
#include "sim/core/units.h"
#include "sim/engine/gpu_compute.h"
#include "sim/engine/program.h"

namespace trainsim::engine {

struct TaskTiming {
    SimTime start{-1};
    SimTime end{-1};
};

struct RunResult {
    TaskVector<TaskTiming> timings;  // indexed by TaskId
    SimTime makespan{};              // the last completion
    std::uint64_t events = 0;        // events processed
    /// Units each shared resource carried over the run (empty for programs without flows).
    std::vector<double> resource_carried;
    /// Each shared resource's load over the run, a sample at each change (flow start, end or reshare),
    /// for the resources RunOptions::record_rates_of names; empty otherwise, and empty for a resource no
    /// flow crossed.
    std::vector<std::vector<RateSample>> resource_rates;
};

struct RunOptions {
    /// Stop with an error after this many events: a guard against a program that would run for ever.
    std::uint64_t max_events = 2'000'000'000;
    /// Indexed by resource: record that resource's load over time into RunResult::resource_rates (for
    /// traces). Empty (the default), a run neither stores nor sums anything for it.
    std::vector<char> record_rates_of;
    /// Names for error messages, for programs that do not store them; default: the stored names.
    std::function<std::string(TaskId)> describe_task;
    std::function<std::string(RendezvousId)> describe_rendezvous;
    /// How a GPU's compute is shared with the communication running beside it, for programs whose
    /// rendezvous hold shares (Program::set_compute_share); null: FixedShare.
    const ComputeSharing* compute_sharing = nullptr;
};

/// A run that cannot finish: a deadlock (tasks remain but nothing can start) or an exhausted event
/// budget. The message names each waiting GPU, the task it waits at, and what that task waits for.
class SimulationError : public std::runtime_error {
public:
    explicit SimulationError(const std::string& message) : std::runtime_error(message) {}
};

[[nodiscard]] RunResult simulate(const Program& program, const RunOptions& options = {});

}  // namespace trainsim::engine
