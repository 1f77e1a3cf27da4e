// What each engine task is, in the workload's terms: the engine only sees durations and dependencies,
// the report needs to know which were recompute, which were communication, and for which micro-batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "sim/core/huge_page_allocator.h"
#include "sim/core/units.h"
#include "sim/engine/program.h"
#include "sim/parallel/layout.h"

namespace trainsim::program {

/// The time-breakdown category of a task.
enum class TaskCategory : std::uint8_t {
    Compute,       // forward and backward GEMMs and kernels
    Recompute,     // re-executed forward work
    Optimizer,     // the optimizer step
    TensorComm,    // tensor-parallel collectives
    PipelineComm,  // pipeline sends and receives
    DataComm,      // data-parallel, embedding and gradient-norm collectives
    Host,          // the compute stream idle while the CPU launches (after a synchronisation)
    ContextComm,   // context-parallel exchanges (the KV ring, gathers, Ulysses all-to-alls)
    ExpertComm,    // expert-parallel token dispatch and combine (all-to-alls, or all-gathers and
                   // reduce-scatters)
};

enum class Phase : std::uint8_t { Forward, Backward, Iteration };

[[nodiscard]] const char* to_string(TaskCategory c);
[[nodiscard]] const char* to_string(Phase p);
[[nodiscard]] inline bool is_communication(TaskCategory c) {
    return c == TaskCategory::TensorComm || c == TaskCategory::PipelineComm || c == TaskCategory::DataComm ||
           c == TaskCategory::ContextComm || c == TaskCategory::ExpertComm;
}

/// One engine task in workload terms. A compute task is a segment: consecutive ops of one op list
/// that run back to back on the compute stream with nothing else to wait for (ops [first_op,
/// first_op + op_count) of IterationProgram::priced[priced]); a communication task is one op, or a
/// pipeline transfer (priced = -1).
/// TaskInfo::layer of the input embedding's forward and backward: a memory key of its own (the memory
/// timeline frees a key's tensors when its backward ends), so that what the embedding holds goes with its
/// backward, not with the output layer's or the gradient collectives' of a stage that has them too.
inline constexpr std::int32_t kEmbeddingLayer = -2;

struct TaskInfo {
    engine::GpuId gpu{0};  // index into IterationProgram::gpus
    TaskCategory category = TaskCategory::Compute;
    Phase phase = Phase::Forward;
    std::int32_t microbatch = -1;
    std::int32_t chunk = -1;
    // Global layer index (num_layers + depth: an MTP depth), kEmbeddingLayer for the input embedding's
    // tasks, -1 elsewhere outside the layers (the output layer, gradient and parameter collectives).
    std::int32_t layer = -1;
    std::int32_t priced = -1;
    std::uint16_t first_op = 0;
    std::uint16_t op_count = 0;
    std::int32_t peer_stage = -1;  // pipeline transfers: the stage at the other end
    Flops flops{0.0};
    Bytes saved{0};  // activation bytes the task's ops leave allocated for the backward
};

/// Everything a task's TaskInfo says but its GPU and micro-batch: what every micro-batch of a
/// layer's step shares, and GPUs whose pricing is the same share too.
struct TaskShape {
    TaskCategory category = TaskCategory::Compute;
    Phase phase = Phase::Forward;
    std::uint16_t first_op = 0;
    std::uint16_t op_count = 0;
    std::int32_t chunk = -1;
    std::int32_t layer = -1;
    std::int32_t priced = -1;
    std::int32_t peer_stage = -1;
    Flops flops{0.0};
    Bytes saved{0};
    friend bool operator==(const TaskShape&, const TaskShape&) = default;
};

/// The TaskInfo of every task of a program, indexed by engine TaskId, in 8 bytes a task instead of
/// 48: an unfolded 2240-GPU iteration has tens of millions of tasks but a few thousand shapes. Each
/// task keeps its micro-batch and an interned shape; GPUs are stored as runs of consecutive tasks (a
/// program is built one GPU at a time, so there is one run per GPU).
class TaskInfoTable {
public:
    /// Consecutive tasks [first, end) of one GPU.
    struct GpuRun {
        std::size_t first = 0;
        std::size_t end = 0;
        engine::GpuId gpu{0};
    };

    void push_back(const TaskInfo& info);

    [[nodiscard]] std::size_t size() const { return records_.size(); }
    [[nodiscard]] bool empty() const { return records_.empty(); }
    /// Task t's record (finds its GPU in O(log runs); iterate, or use runs(), in loops over every task).
    [[nodiscard]] TaskInfo operator[](std::size_t t) const { return make(t, gpu(t)); }
    [[nodiscard]] engine::GpuId gpu(std::size_t t) const;
    [[nodiscard]] const TaskShape& shape(std::size_t t) const { return shapes_[records_[t].shape]; }
    [[nodiscard]] std::int32_t microbatch(std::size_t t) const { return records_[t].microbatch; }
    [[nodiscard]] TaskCategory category(std::size_t t) const { return shape(t).category; }
    [[nodiscard]] const std::vector<GpuRun>& runs() const { return runs_; }
    /// Task t's record when its GPU is known.
    [[nodiscard]] TaskInfo make(std::size_t t, engine::GpuId gpu) const;
    /// Distinct shapes so far (for benchmarks and tests of the compaction).
    [[nodiscard]] std::size_t shape_count() const { return shapes_.size(); }

    class const_iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = TaskInfo;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = TaskInfo;
        const_iterator() = default;
        const_iterator(const TaskInfoTable* table, std::size_t t) : table_(table), t_(t) {}
        [[nodiscard]] TaskInfo operator*() const { return table_->make(t_, table_->runs_[run_].gpu); }
        const_iterator& operator++() {
            if (++t_ == table_->runs_[run_].end && run_ + 1 < table_->runs_.size()) {
                ++run_;
            }
            return *this;
        }
        const_iterator operator++(int) {
            const_iterator old = *this;
            ++*this;
            return old;
        }
        friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.t_ == b.t_; }

    private:
        const TaskInfoTable* table_ = nullptr;
        std::size_t t_ = 0;
        std::size_t run_ = 0;
    };
    [[nodiscard]] const_iterator begin() const { return {this, 0}; }
    [[nodiscard]] const_iterator end() const { return {this, size()}; }

private:
    struct Record {
        std::uint32_t shape;
        std::int32_t microbatch;
    };
    [[nodiscard]] std::uint32_t intern(const TaskShape& shape);
    void grow_index();

    TaskVector<Record> records_;
    std::vector<TaskShape> shapes_;
    // Open-addressing index of shapes_ (0xffffffff: empty), a power of two long and at most half full:
    // looked up once per task added.
    std::vector<std::uint32_t> shape_index_;
    std::vector<GpuRun> runs_;
};

/// One simulated GPU: its place in the layout and its streams.
struct SimulatedGpu {
    parallel::Coordinates coordinates;
    engine::StreamId compute_stream = engine::kNoStream;
    // The background stream of overlapped recomputation, if any.
    engine::StreamId recompute_stream = engine::kNoStream;
    double compute_slowdown = 1.0;  // factor on its kernels' times from variability.mode
    // What variability.kernel_jitter added to its kernels' times, net (each launch's jittered time minus
    // its price; negative when the draws came out fast on the whole).
    SimTime kernel_jitter{};
    // What asynchronous collectives running beside its kernels added to their times (their SMs and HBM:
    // hardware.collective_contention), by the category of the slowed kernels.
    SimTime contention_compute{};
    SimTime contention_recompute{};
    SimTime contention_optimizer{};
};

}  // namespace trainsim::program
