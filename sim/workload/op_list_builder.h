// Appends ops to an OpList with the dependency bookkeeping Megatron's stream usage implies.
#pragma once

#include <string>

#include "sim/workload/op.h"

namespace trainsim::workload {

class OpListBuilder {
public:
    explicit OpListBuilder(OpRole role, bool is_recompute = false)
        : role_(role), is_recompute_(is_recompute) {}

    /// A GEMM on the compute stream. Waits for the last synchronous collective, if one is pending.
    std::int32_t gemm(std::string name, cost::GemmShape shape, Bytes saved = Bytes{0},
                      cost::GemmClass cls = cost::GemmClass::Dense);
    /// A grouped GEMM (cost::GroupedGemm): `shape` is the experts' batched equivalent, `grouped` their
    /// own tokens.
    std::int32_t grouped_gemm(std::string name, cost::GemmShape shape, cost::GroupedGemm grouped,
                              Bytes saved = Bytes{0});
    /// A memory-bound kernel on the compute stream moving `bytes_moved` bytes.
    std::int32_t memory(std::string name, cost::MemoryBoundKind kind, std::int64_t bytes_moved,
                        Bytes saved = Bytes{0});
    /// A collective the compute stream waits for before its next op (Megatron's blocking calls).
    std::int32_t sync_collective(std::string name, cost::CollectiveKind kind, std::int64_t bytes,
                                 CommGroup group = CommGroup::Tensor);
    /// A collective issued asynchronously after the last compute op; `join(i)` makes a later op wait.
    std::int32_t async_collective(std::string name, cost::CollectiveKind kind, std::int64_t bytes,
                                  CommGroup group = CommGroup::Tensor);
    /// A collective issued from a side CUDA stream that first waited for the compute stream
    /// (stream.wait_stream(current_stream())): on OpStream::SharedExpertComm, after the last compute op
    /// and the synchronous collectives the compute stream waits for; `join(i)` makes a later op wait.
    std::int32_t side_collective(std::string name, cost::CollectiveKind kind, std::int64_t bytes,
                                 CommGroup group = CommGroup::Tensor);
    /// Sets the role of the ops added from now on.
    void set_role(OpRole role) { role_ = role; }

    /// Marks the ops added from now on as recomputation (or not).
    void set_recompute(bool on) { is_recompute_ = on; }

    /// Makes the next compute op wait for op `index` (an async collective's handle.wait()).
    void join(std::int32_t index) { pending_joins_.push_back(index); }

    /// Sets the bytes op `index` keeps for the backward.
    void set_saved(std::int32_t index, Bytes bytes) {
        ops_[static_cast<std::size_t>(index)].saved_bytes = bytes;
    }

    /// The CPU waits for op `waits_for` to finish on the GPU before it issues op `index`
    /// (Op::host_waits_for).
    void set_host_wait(std::int32_t index, std::int32_t waits_for) {
        ops_[static_cast<std::size_t>(index)].host_waits_for = waits_for;
    }

    /// Op `index` consumes op `producer`'s output alone: a collective issued after a side-stream op
    /// (the overlapped shared expert's fc1) whose output it does not read.
    void set_input(std::int32_t index, std::int32_t producer) {
        ops_[static_cast<std::size_t>(index)].after = {producer};
    }

    /// The index the next op added will have.
    [[nodiscard]] std::int32_t next_index() const { return static_cast<std::int32_t>(ops_.size()); }

    [[nodiscard]] OpList take() { return std::move(ops_); }
    [[nodiscard]] const OpList& ops() const { return ops_; }

private:
    std::int32_t push_compute(Op op);
    std::int32_t push_collective(Op op, bool blocking);

    OpRole role_;
    bool is_recompute_;
    OpList ops_;
    std::int32_t last_compute_ = -1;
    std::vector<std::int32_t> pending_joins_;
};

}  // namespace trainsim::workload
