// Chrome/Perfetto trace-event JSON of a simulated run: one process per simulated GPU, one thread per
// stream, one complete ("X") slice per op with micro-batch, chunk, layer and phase in its args, and a
// counter ("C") track per GPU with the bytes allocated over time (weights, gradients, optimizer state
// and activations). With `critical` (engine::critical_path's tasks), those tasks' slices carry
// args.critical = true; with `critical_track` too, a last process, "critical path", repeats them on one
// track that follows the path from GPU to GPU. A flow-model run whose links' loads were
// recorded (engine::RunOptions::record_rates_of, traced_links) has a "network" process too, with a counter
// per NIC direction and fabric link (link_rate_tracks.h).
#pragma once

#include <limits>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/engine/simulator.h"
#include "sim/memory/activation_timeline.h"
#include "sim/program/iteration_program.h"

namespace trainsim::report {

/// What a trace keeps: a subset of the GPUs and a window of time (`--trace-ranks`, `--trace-window`).
struct TraceOptions {
    std::span<const engine::TaskId> critical;
    bool critical_track = false;
    /// Indexed like IterationProgram::gpus: which to keep (empty: all). A GPU left out has no process,
    /// no slices and no counter.
    std::vector<bool> keep_gpu;
    /// Slices that overlap [window_start, window_end] are kept whole; counter samples inside it, plus
    /// the last one before it (the value the window opens with).
    SimTime window_start{};
    SimTime window_end = SimTime::max();

    [[nodiscard]] bool keeps(std::size_t gpu) const { return keep_gpu.empty() || keep_gpu[gpu]; }
    [[nodiscard]] bool overlaps(const engine::TaskTiming& t) const {
        return t.end >= window_start && t.start <= window_end;
    }
};

/// The trace's name for a simulated GPU's process ("GPU stage 3 tp 0 dp 0"), in every trace format.
[[nodiscard]] std::string gpu_process_name(const parallel::Coordinates& c);

/// One point of a GPU's "allocated bytes" counter: resident state plus the activations held then.
struct AllocatedBytesSample {
    SimTime time{};
    std::int64_t bytes = 0;
};

/// GPU `gpu`'s allocated-bytes counter as a trace shows it: the value the window opens with (at its
/// start), then every change inside it. Every trace format writes these same samples.
[[nodiscard]] std::vector<AllocatedBytesSample>
allocated_bytes_in_window(const config::Scenario& scenario, const program::IterationProgram& prog,
                          std::size_t gpu, const memory::ActivationTimeline& timeline,
                          const TraceOptions& options);

void write_perfetto_trace(std::ostream& out, const config::Scenario& scenario,
                          const program::IterationProgram& program, const engine::RunResult& run,
                          const TraceOptions& options = {});

}  // namespace trainsim::report
