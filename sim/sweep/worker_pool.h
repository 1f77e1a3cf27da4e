// Runs independent work items on worker threads. Items are handed out one at a time from a shared
// counter, so a slow point does not hold back a thread's other points.
#pragma once

#include <cstddef>
#include <functional>

namespace trainsim::sweep {

/// The number of worker threads `--jobs 0` means: the machine's hardware threads (at least 1).
[[nodiscard]] unsigned default_jobs();

/// Calls `work(item, worker)` for every item in [0, count) on min(jobs, count) threads; `worker` in
/// [0, jobs) names the calling thread, so that callers can keep per-thread state (a cost model is not
/// thread-safe). With jobs ≤ 1 everything runs on the calling thread. When a call throws, no new items
/// start and the first exception is rethrown once every thread has stopped.
void parallel_for(std::size_t count, unsigned jobs,
                  const std::function<void(std::size_t item, unsigned worker)>& work);

}  // namespace trainsim::sweep
