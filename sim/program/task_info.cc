#include "sim/program/task_info.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>

namespace trainsim::program {

const char* to_string(TaskCategory c) {
    switch (c) {
    case TaskCategory::Compute:
        return "compute";
    case TaskCategory::Recompute:
        return "recompute";
    case TaskCategory::Optimizer:
        return "optimizer";
    case TaskCategory::TensorComm:
        return "tp_comm";
    case TaskCategory::PipelineComm:
        return "pp_comm";
    case TaskCategory::DataComm:
        return "dp_comm";
    }
    return "?";
}

std::size_t TaskInfoTable::ShapeHash::operator()(const TaskShape& s) const noexcept {
    std::uint64_t h = 0;
    auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x9E3779B97F4A7C15ULL + (h >> 29); };
    mix(static_cast<std::uint64_t>(s.category) | static_cast<std::uint64_t>(s.phase) << 8 |
        static_cast<std::uint64_t>(s.first_op) << 16 | static_cast<std::uint64_t>(s.op_count) << 32);
    mix(static_cast<std::uint32_t>(s.chunk) | static_cast<std::uint64_t>(static_cast<std::uint32_t>(s.layer))
                                                  << 32);
    mix(static_cast<std::uint32_t>(s.priced) |
        static_cast<std::uint64_t>(static_cast<std::uint32_t>(s.peer_stage)) << 32);
    mix(std::bit_cast<std::uint64_t>(s.flops.value));
    mix(static_cast<std::uint64_t>(s.saved.value));
    return static_cast<std::size_t>(h ^ (h >> 32));
}

void TaskInfoTable::push_back(const TaskInfo& info) {
    const TaskShape shape{info.category, info.phase,  info.first_op,   info.op_count, info.chunk,
                          info.layer,    info.priced, info.peer_stage, info.flops,    info.saved};
    const auto [it, added] = shape_index_.try_emplace(shape, static_cast<std::uint32_t>(shapes_.size()));
    if (added) {
        if (shapes_.size() >= std::numeric_limits<std::uint32_t>::max()) {
            shape_index_.erase(it);
            throw std::length_error("task records: more than 2^32 - 1 distinct shapes");
        }
        shapes_.push_back(shape);
    }
    if (runs_.empty() || runs_.back().gpu != info.gpu) {
        runs_.push_back(GpuRun{records_.size(), records_.size(), info.gpu});
    }
    ++runs_.back().end;
    records_.push_back(Record{it->second, info.microbatch});
}

std::int32_t TaskInfoTable::gpu(std::size_t t) const {
    // The last run that starts at or before t.
    const auto it = std::upper_bound(runs_.begin(), runs_.end(), t,
                                     [](std::size_t task, const GpuRun& r) { return task < r.first; });
    return std::prev(it)->gpu;
}

TaskInfo TaskInfoTable::make(std::size_t t, std::int32_t gpu) const {
    const Record& r = records_[t];
    const TaskShape& s = shapes_[r.shape];
    TaskInfo info;
    info.gpu = gpu;
    info.category = s.category;
    info.phase = s.phase;
    info.microbatch = r.microbatch;
    info.chunk = s.chunk;
    info.layer = s.layer;
    info.priced = s.priced;
    info.first_op = s.first_op;
    info.op_count = s.op_count;
    info.peer_stage = s.peer_stage;
    info.flops = s.flops;
    info.saved = s.saved;
    return info;
}

const char* to_string(Phase p) {
    switch (p) {
    case Phase::Forward:
        return "forward";
    case Phase::Backward:
        return "backward";
    case Phase::Iteration:
        return "iteration";
    }
    return "?";
}

}  // namespace trainsim::program
