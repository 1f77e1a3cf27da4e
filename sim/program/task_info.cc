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
    case TaskCategory::Host:
        return "host";
    case TaskCategory::ContextComm:
        return "cp_comm";
    case TaskCategory::ExpertComm:
        return "ep_comm";
    }
    return "?";
}

namespace {

constexpr std::uint32_t kEmpty = 0xffffffffU;

std::uint64_t hash_of(const TaskShape& s) {
    std::uint64_t h = 0;
    auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x9E3779B97F4A7C15ULL; };
    mix(static_cast<std::uint64_t>(s.category) | static_cast<std::uint64_t>(s.phase) << 8 |
        static_cast<std::uint64_t>(s.first_op) << 16 | static_cast<std::uint64_t>(s.op_count) << 32);
    mix(static_cast<std::uint32_t>(s.chunk) | static_cast<std::uint64_t>(static_cast<std::uint32_t>(s.layer))
                                                  << 32);
    mix(static_cast<std::uint32_t>(s.priced) |
        static_cast<std::uint64_t>(static_cast<std::uint32_t>(s.peer_stage)) << 32);
    mix(std::bit_cast<std::uint64_t>(s.flops.value) ^ static_cast<std::uint64_t>(s.saved.value));
    return h ^ (h >> 29);
}

}  // namespace

void TaskInfoTable::grow_index() {
    shape_index_.assign(shape_index_.empty() ? 256 : shape_index_.size() * 2, kEmpty);
    const std::size_t mask = shape_index_.size() - 1;
    for (std::uint32_t id = 0; id < shapes_.size(); ++id) {
        std::size_t i = hash_of(shapes_[id]) & mask;
        while (shape_index_[i] != kEmpty) {
            i = (i + 1) & mask;
        }
        shape_index_[i] = id;
    }
}

std::uint32_t TaskInfoTable::intern(const TaskShape& shape) {
    if (2 * (shapes_.size() + 1) > shape_index_.size()) {
        grow_index();
    }
    const std::size_t mask = shape_index_.size() - 1;
    std::size_t i = hash_of(shape) & mask;
    for (; shape_index_[i] != kEmpty; i = (i + 1) & mask) {
        if (shapes_[shape_index_[i]] == shape) {
            return shape_index_[i];
        }
    }
    if (shapes_.size() >= kEmpty) {
        throw std::length_error("task records: more than 2^32 - 1 distinct shapes");
    }
    shape_index_[i] = static_cast<std::uint32_t>(shapes_.size());
    shapes_.push_back(shape);
    return shape_index_[i];
}

void TaskInfoTable::push_back(const TaskInfo& info) {
    const std::uint32_t shape =
        intern(TaskShape{info.category, info.phase, info.first_op, info.op_count, info.chunk, info.layer,
                         info.priced, info.peer_stage, info.flops, info.saved});
    if (runs_.empty() || runs_.back().gpu != info.gpu) {
        runs_.push_back(GpuRun{records_.size(), records_.size(), info.gpu});
    }
    ++runs_.back().end;
    records_.push_back(Record{shape, info.microbatch});
}

engine::GpuId TaskInfoTable::gpu(std::size_t t) const {
    // The last run that starts at or before t.
    const auto it = std::upper_bound(runs_.begin(), runs_.end(), t,
                                     [](std::size_t task, const GpuRun& r) { return task < r.first; });
    return std::prev(it)->gpu;
}

TaskInfo TaskInfoTable::make(std::size_t t, engine::GpuId gpu) const {
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
