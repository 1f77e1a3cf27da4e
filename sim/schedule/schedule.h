// Pipeline schedules: for each pipeline rank, the ordered list of forward and backward passes over
// (micro-batch, model chunk). One interface, so new schedules plug in without touching the program
// builder or the engine.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/config/scenario.h"

namespace trainsim::schedule {

enum class Pass : std::uint8_t { Forward, Backward };

struct Step {
    Pass pass = Pass::Forward;
    std::int32_t microbatch = 0;
    std::int32_t chunk = 0;  // model chunk (virtual stage c·p + rank); 0 without interleaving
    friend bool operator==(const Step&, const Step&) = default;
};

struct PipelineShape {
    std::int64_t stages = 1;        // p
    std::int64_t chunks = 1;        // v
    std::int64_t microbatches = 1;  // m
    std::int64_t group_size = 0;    // interleaved: microbatch_group_size_per_vp_stage; 0 means p
};

class Schedule {
public:
    virtual ~Schedule() = default;
    [[nodiscard]] virtual std::string name() const = 0;
    /// The passes pipeline rank `rank` runs, in order.
    [[nodiscard]] virtual std::vector<Step> steps(std::int64_t rank) const = 0;
};

/// Builds the schedule, or throws InputError naming the rule a combination breaks.
[[nodiscard]] std::unique_ptr<Schedule> make_schedule(config::ScheduleKind kind, const PipelineShape& shape);

/// "F3.c1"-style text of a step list, for tests and error messages.
[[nodiscard]] std::string to_string(const std::vector<Step>& steps);

}  // namespace trainsim::schedule
