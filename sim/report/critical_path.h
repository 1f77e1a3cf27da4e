// The critical path of a simulated iteration in workload terms (issue 20): how much of it is compute,
// each kind of communication, recomputation and waiting, and on which GPUs and streams it runs. The
// path itself is engine::critical_path; this names its tasks and adds them up.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/units.h"
#include "sim/engine/critical_path.h"
#include "sim/program/iteration_program.h"

namespace trainsim::report {

/// Time on the critical path by what it was spent on. Adds up to the path's length (the makespan).
struct CriticalPathShares {
    Seconds compute, recompute, optimizer, host;
    Seconds tp_comm, pp_comm, dp_comm, cp_comm, ep_comm;
    Seconds wait;  // between a predecessor's end and the next task's start: bubble, or preemption
    [[nodiscard]] Seconds total() const {
        return compute + recompute + optimizer + host + tp_comm + pp_comm + dp_comm + cp_comm + ep_comm +
               wait;
    }
};

/// Consecutive critical tasks of one stream and one category, merged.
struct CriticalSegment {
    engine::GpuId gpu{0};  // index into IterationProgram::gpus
    std::int32_t stage = 0;
    std::string stream;
    std::string category;               // program::to_string(TaskCategory)
    std::string first_task, last_task;  // IterationProgram::describe
    std::int64_t tasks = 0;
    Seconds start, end;
    Seconds wait_before;  // waiting just before the first task
};

/// Time the path spends on one simulated GPU (its tasks and the waits before them).
struct CriticalGpu {
    engine::GpuId gpu{0};
    std::int32_t stage = 0, tp = 0, dp = 0;
    Seconds time;
};

struct CriticalPath {
    Seconds length;
    std::int64_t tasks = 0;
    CriticalPathShares shares;
    std::vector<CriticalGpu> gpus;  // those the path visits, most time first
    std::vector<CriticalSegment> segments;
    std::vector<engine::TaskId> task_ids;  // in time order (for trace marking)
    /// The largest share's key ("compute", "tp_comm", "wait", ...).
    [[nodiscard]] std::string biggest_share() const;
};

[[nodiscard]] CriticalPath make_critical_path(const program::IterationProgram& program,
                                              const engine::RunResult& run);

/// The "critical_path" object of `trainsim run --critical-path --format json` (DESIGN.md §5).
[[nodiscard]] nlohmann::ordered_json to_json(const CriticalPath& path);
/// Segments longer than `max_segments` are summarised by their count.
void write_text(std::ostream& out, const CriticalPath& path, std::size_t max_segments = 40);

}  // namespace trainsim::report
