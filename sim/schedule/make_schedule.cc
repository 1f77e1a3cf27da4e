#include <sstream>

#include "sim/core/input_error.h"
#include "sim/schedule/breadth_first_schedule.h"
#include "sim/schedule/dualpipe_schedule.h"
#include "sim/schedule/dualpipe_v_schedule.h"
#include "sim/schedule/gpipe_schedule.h"
#include "sim/schedule/interleaved_schedule.h"
#include "sim/schedule/one_f_one_b_schedule.h"
#include "sim/schedule/schedule.h"
#include "sim/schedule/zero_bubble_handcrafted_schedule.h"
#include "sim/schedule/zero_bubble_v_schedule.h"

namespace trainsim::schedule {

PipelineShape pipeline_shape(const config::Scenario& scenario) {
    const config::ParallelConfig& par = scenario.parallelism;
    return {par.pipeline_model_parallel_size, par.virtual_pipeline_model_parallel_size,
            scenario.num_microbatches(), par.microbatch_group_size_per_vp_stage.value_or(0),
            par.overlap_moe_expert_parallel_comm};
}

std::unique_ptr<Schedule> make_schedule(config::ScheduleKind kind, const PipelineShape& shape) {
    if (shape.stages < 1 || shape.chunks < 1 || shape.microbatches < 1) {
        throw InputError("schedule: pipeline size, virtual size and micro-batch count must be positive");
    }
    if (kind == config::ScheduleKind::Auto) {
        kind = shape.chunks > 1 ? config::ScheduleKind::Interleaved : config::ScheduleKind::OneFOneB;
    }
    const bool combines = (kind == config::ScheduleKind::OneFOneB && shape.stages == 1) ||
                          kind == config::ScheduleKind::Interleaved;
    if (shape.combined_1f1b && !combines) {
        throw InputError(
            "schedule: Megatron's combined 1F1B (overlap_moe_expert_parallel_comm) runs on 1F1B with "
            "one pipeline stage or on the interleaved schedule, not on " +
            std::string(config::to_string(kind)));
    }
    switch (kind) {
    case config::ScheduleKind::GPipe:
    case config::ScheduleKind::OneFOneB:
        if (shape.chunks > 1) {
            throw InputError(std::string("schedule=") + config::to_string(kind) +
                             " cannot run parallelism.virtual_pipeline_model_parallel_size=" +
                             std::to_string(shape.chunks) + " (> 1 needs schedule interleaved)");
        }
        if (kind == config::ScheduleKind::GPipe) {
            return std::make_unique<GPipeSchedule>(shape);
        }
        return std::make_unique<OneFOneBSchedule>(shape);
    case config::ScheduleKind::Interleaved:
        if (shape.chunks < 2) {
            throw InputError(
                "schedule=interleaved needs parallelism.virtual_pipeline_model_parallel_size > 1");
        }
        // p = 2 is Megatron's only with overlap_p2p_comm, which config/scenario_validation.cc checks.
        if (shape.stages < 2) {
            throw InputError(
                "schedule=interleaved needs parallelism.pipeline_model_parallel_size > 1 (Megatron-LM)");
        }
        if (shape.group_size == 0 && shape.microbatches % shape.stages != 0) {
            throw InputError("schedule=interleaved needs the number of micro-batches (" +
                             std::to_string(shape.microbatches) +
                             ") to be a multiple of parallelism.pipeline_model_parallel_size=" +
                             std::to_string(shape.stages) + " (Megatron-LM)");
        }
        if (shape.group_size != 0 &&
            (shape.group_size < shape.stages || shape.group_size > shape.microbatches ||
             (shape.microbatches % shape.group_size != 0 &&
              shape.microbatches % shape.group_size < shape.stages))) {
            throw InputError("schedule=interleaved: parallelism.microbatch_group_size_per_vp_stage=" +
                             std::to_string(shape.group_size) +
                             " needs p <= N <= m and m mod N either 0 or at least p (Megatron-LM)");
        }
        return std::make_unique<InterleavedSchedule>(shape,
                                                     shape.group_size == 0 ? shape.stages : shape.group_size);
    case config::ScheduleKind::BreadthFirst:
        return std::make_unique<BreadthFirstSchedule>(shape);
    case config::ScheduleKind::ZbH1:
    case config::ScheduleKind::ZbH2:
        if (shape.chunks > 1) {
            throw InputError(std::string("schedule=") + config::to_string(kind) +
                             " needs parallelism.virtual_pipeline_model_parallel_size=1 (one model chunk per "
                             "rank; zb-v runs two)");
        }
        return std::make_unique<ZeroBubbleHandcraftedSchedule>(
            shape, kind == config::ScheduleKind::ZbH1 ? ZeroBubbleHandcraftedSchedule::Variant::H1
                                                      : ZeroBubbleHandcraftedSchedule::Variant::H2);
    case config::ScheduleKind::ZbV:
        if (shape.chunks != 2) {
            throw InputError(
                "schedule=zb-v needs parallelism.virtual_pipeline_model_parallel_size=2 (two model chunks "
                "per rank, placed in a V)");
        }
        return std::make_unique<ZeroBubbleVSchedule>(shape);
    case config::ScheduleKind::DualPipe:
        // dualpipe.py step(): assert num_ranks % 2 == 0; num_chunks % 2 == 0 and >= num_ranks * 2.
        if (shape.chunks != 2) {
            throw InputError(
                "schedule=dualpipe needs parallelism.virtual_pipeline_model_parallel_size=2 (two model "
                "chunks per rank: stage r and stage p - 1 - r)");
        }
        if (shape.stages % 2 != 0) {
            throw InputError(
                "schedule=dualpipe needs an even parallelism.pipeline_model_parallel_size, got " +
                std::to_string(shape.stages) + " (DualPipe: num_ranks % 2 == 0)");
        }
        if (shape.microbatches % 2 != 0 || shape.microbatches < 2 * shape.stages) {
            throw InputError("schedule=dualpipe needs an even number of micro-batches, at least 2 × "
                             "parallelism.pipeline_model_parallel_size = " +
                             std::to_string(2 * shape.stages) + ", got " +
                             std::to_string(shape.microbatches) +
                             " (DualPipe: num_chunks % 2 == 0 and num_chunks >= num_ranks * 2)");
        }
        return std::make_unique<DualPipeSchedule>(shape);
    case config::ScheduleKind::DualPipeV:
        if (shape.chunks != 2) {
            throw InputError(
                "schedule=dualpipev needs parallelism.virtual_pipeline_model_parallel_size=2 (two "
                "model chunks per rank, placed in a V)");
        }
        if (shape.microbatches < 2 * shape.stages) {
            throw InputError(
                "schedule=dualpipev needs at least 2 × parallelism.pipeline_model_parallel_size = " +
                std::to_string(2 * shape.stages) + " micro-batches, got " +
                std::to_string(shape.microbatches) + " (DualPipe's num_chunks >= num_ranks * 2)");
        }
        return std::make_unique<DualPipeVSchedule>(shape);
    case config::ScheduleKind::Auto:
        break;
    }
    throw InputError("schedule: unknown schedule kind");
}

std::string to_string(const std::vector<Step>& steps) {
    std::ostringstream out;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const char pass = steps[i].pass == Pass::Forward ? 'F' : steps[i].pass == Pass::Backward ? 'B' : 'W';
        out << (i == 0                ? ""
                : steps[i - 1].paired ? "&"
                                      : " ")
            << pass << steps[i].microbatch << ".c" << steps[i].chunk;
    }
    return out.str();
}

}  // namespace trainsim::schedule
