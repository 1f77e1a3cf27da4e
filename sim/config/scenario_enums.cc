// to_string for the scenario enums, and the resolution of the `auto` schedule.
#include "sim/config/scenario_enums.h"

namespace trainsim::config {

namespace {

template <class E, std::size_t N> const char* name_of(const std::array<EnumName<E>, N>& table, E value) {
    for (const auto& entry : table) {
        if (entry.value == value) {
            return entry.name;
        }
    }
    return "?";  // unreachable while every enumerator has a table entry
}

}  // namespace

const char* to_string(Normalization n) {
    return name_of(kNormalizationNames, n);
}
const char* to_string(PositionEmbeddingType t) {
    return name_of(kPositionEmbeddingTypeNames, t);
}
const char* to_string(RecomputeGranularity g) {
    return name_of(kRecomputeGranularityNames, g);
}
const char* to_string(AttentionBackend b) {
    return name_of(kAttentionBackendNames, b);
}
const char* to_string(DataParallelSharding s) {
    return name_of(kDataParallelShardingNames, s);
}
const char* to_string(CpCommType c) {
    return name_of(kCpCommTypeNames, c);
}
const char* to_string(MoeTokenDispatcher d) {
    return name_of(kMoeTokenDispatcherNames, d);
}
const char* to_string(RecomputeMethod m) {
    return name_of(kRecomputeMethodNames, m);
}
const char* to_string(RecomputeModule m) {
    return name_of(kRecomputeModuleNames, m);
}
const char* to_string(RecomputeScheduler s) {
    return name_of(kRecomputeSchedulerNames, s);
}
const char* to_string(ScheduleKind s) {
    return name_of(kScheduleNames, s);
}
const char* to_string(Fp8Format f) {
    return name_of(kFp8FormatNames, f);
}
const char* to_string(Fp8Recipe r) {
    return name_of(kFp8RecipeNames, r);
}
const char* to_string(StateDtype d) {
    return name_of(kExpAvgDtypeNames, d);  // the widest table: it spells every format
}

const char* to_string(VariabilityMode m) {
    return name_of(kVariabilityModeNames, m);
}

bool Scenario::v_shaped_placement() const {
    return schedule == ScheduleKind::ZbV || schedule == ScheduleKind::DualPipeV;
}

bool Scenario::dualpipe_overlaps_pairs() const {
    return (schedule == ScheduleKind::DualPipe || schedule == ScheduleKind::DualPipeV) &&
           parallelism.dualpipe_overlapped_forward_backward.value_or(true);
}

bool Scenario::overlaps_forward_backward_pairs() const {
    return dualpipe_overlaps_pairs() || parallelism.overlap_moe_expert_parallel_comm;
}

bool Scenario::bidirectional_placement() const {
    return schedule == ScheduleKind::DualPipe;
}

std::int64_t Scenario::model_stage_of_chunk(std::int64_t pipeline_rank, std::int64_t chunk) const {
    const std::int64_t p = parallelism.pipeline_model_parallel_size;
    if (chunk == 1 && bidirectional_placement()) {
        return p - 1 - pipeline_rank;
    }
    if (chunk == 1 && v_shaped_placement()) {
        return 2 * p - 1 - pipeline_rank;
    }
    return chunk * p + pipeline_rank;
}

std::int64_t Scenario::last_stage_rank() const {
    return v_shaped_placement() ? 0 : parallelism.pipeline_model_parallel_size - 1;
}

bool Scenario::holds_first_stage(std::int64_t pipeline_rank) const {
    return pipeline_rank == 0 ||
           (bidirectional_placement() && pipeline_rank == parallelism.pipeline_model_parallel_size - 1);
}

bool Scenario::holds_last_stage(std::int64_t pipeline_rank) const {
    return pipeline_rank == last_stage_rank() || (bidirectional_placement() && pipeline_rank == 0);
}

ScheduleKind Scenario::resolved_schedule() const {
    if (schedule != ScheduleKind::Auto) {
        return schedule;
    }
    // Megatron picks the interleaved schedule exactly when there is more than one model chunk per rank.
    return parallelism.virtual_pipeline_model_parallel_size > 1 ? ScheduleKind::Interleaved
                                                                : ScheduleKind::OneFOneB;
}

}  // namespace trainsim::config
