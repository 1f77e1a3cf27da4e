// Pipeline schedules: for each pipeline rank, the ordered list of forward and backward passes over
// (micro-batch, model chunk), and where each chunk's model stage sits. One interface, so new schedules
// plug in without touching the program builder or the engine.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/config/scenario.h"

namespace trainsim::schedule {

/// Backward is the whole backward (input and weight gradients, B+W) unless the schedule also lists a
/// Weight step for the same (micro-batch, chunk): then Backward is the input-gradient pass alone (the
/// zero-bubble paper's B: dgrad GEMMs and everything else on the chain to the previous stage) and
/// Weight the weight-gradient pass (W: the wgrad GEMMs), which no other stage waits for (Qi et al.,
/// ICLR 2024, §2).
enum class Pass : std::uint8_t { Forward, Backward, Weight };

struct Step {
    Pass pass = Pass::Forward;
    std::int32_t microbatch = 0;
    std::int32_t chunk = 0;  // model chunk (virtual stage c·p + rank); 0 without interleaving
    /// A forward run as one chunk pair with the backward after it (DualPipe's overlapped F&B, Megatron's
    /// combined 1F1B): both inputs are received before the forward starts, and the forward's output is
    /// sent after the backward.
    bool paired = false;
    friend bool operator==(const Step&, const Step&) = default;
};

struct PipelineShape {
    std::int64_t stages = 1;        // p
    std::int64_t chunks = 1;        // v
    std::int64_t microbatches = 1;  // m
    std::int64_t group_size = 0;    // interleaved: microbatch_group_size_per_vp_stage; 0 means p
    /// Megatron-Core's combined 1F1B (overlap_moe_expert_parallel_comm; 1F1B with p = 1, interleaved):
    /// one more warm-up forward, so that each later forward is independent of the backward it then runs
    /// beside, and each such forward is paired with that backward (Step::paired).
    bool combined_1f1b = false;
};

class Schedule {
public:
    virtual ~Schedule() = default;
    [[nodiscard]] virtual std::string name() const = 0;
    /// The passes pipeline rank `rank` runs, in order.
    [[nodiscard]] virtual std::vector<Step> steps(std::int64_t rank) const = 0;
    /// Whether backwards are split into B and W steps (Pass::Weight).
    [[nodiscard]] virtual bool splits_backward() const { return false; }
    /// The model stage (0 first) that chunk `chunk` of pipeline rank `rank` holds. Megatron's
    /// interleaving loops: chunk c of rank r is stage c·p + r.
    [[nodiscard]] virtual std::int64_t stage_of(std::int64_t rank, std::int32_t chunk, std::int64_t p) const {
        return chunk * p + rank;
    }
    /// How many model stages a micro-batch passes through: p·v, or p for DualPipe, whose two chunks
    /// per rank are copies of one p-stage model's stages run in opposite directions.
    [[nodiscard]] virtual std::int64_t model_stages(std::int64_t p, std::int64_t v) const { return p * v; }
    /// The pipeline rank that holds stage `stage` of chunk `chunk` (the inverse of stage_of).
    [[nodiscard]] virtual std::int64_t rank_of(std::int64_t stage, std::int32_t /*chunk*/,
                                               std::int64_t p) const {
        return stage % p;
    }
};

/// The pipeline shape a scenario runs: its p, v, micro-batches, interleaving group and combined 1F1B.
[[nodiscard]] PipelineShape pipeline_shape(const config::Scenario& scenario);

/// Builds the schedule, or throws InputError naming the rule a combination breaks.
[[nodiscard]] std::unique_ptr<Schedule> make_schedule(config::ScheduleKind kind, const PipelineShape& shape);

/// "F3.c1"-style text of a step list, for tests and error messages; "F3.c0&B1.c1" for a chunk pair.
[[nodiscard]] std::string to_string(const std::vector<Step>& steps);

}  // namespace trainsim::schedule
