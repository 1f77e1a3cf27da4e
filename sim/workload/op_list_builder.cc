#include "sim/workload/op_list_builder.h"

#include <utility>

namespace trainsim::workload {

std::int32_t OpListBuilder::push_compute(Op op) {
    op.role = role_;
    op.is_recompute = is_recompute_;
    op.stream = OpStream::Compute;
    op.after = std::move(pending_joins_);
    pending_joins_.clear();
    ops_.push_back(std::move(op));
    last_compute_ = static_cast<std::int32_t>(ops_.size() - 1);
    return last_compute_;
}

std::int32_t OpListBuilder::push_collective(Op op, bool blocking) {
    op.role = role_;
    op.is_recompute = is_recompute_;
    switch (op.group) {
    case CommGroup::Tensor:
        op.stream = OpStream::TensorComm;
        break;
    case CommGroup::Context:
        op.stream = OpStream::ContextComm;
        break;
    default:
        // The MoE dispatch and combine: model-parallel activations, as TP's are.
        op.stream = is_expert_token_group(op.group) ? OpStream::TensorComm : OpStream::DataComm;
        break;
    }
    // A collective consumes what the last compute op produced.
    if (last_compute_ >= 0) {
        op.after.push_back(last_compute_);
    }
    op.blocking = blocking;
    ops_.push_back(std::move(op));
    const auto index = static_cast<std::int32_t>(ops_.size() - 1);
    if (blocking) {
        pending_joins_.push_back(index);
    }
    return index;
}

std::int32_t OpListBuilder::gemm(std::string name, cost::GemmShape shape, Bytes saved, cost::GemmClass cls) {
    Op op;
    op.name = std::move(name);
    op.kind = OpKind::Gemm;
    op.gemm = shape;
    op.gemm_class = cls;
    op.saved_bytes = saved;
    return push_compute(std::move(op));
}

std::int32_t OpListBuilder::grouped_gemm(std::string name, cost::GemmShape shape, cost::GroupedGemm grouped,
                                         Bytes saved) {
    const std::int32_t index = gemm(std::move(name), shape, saved);
    ops_[static_cast<std::size_t>(index)].grouped = std::move(grouped);
    return index;
}

std::int32_t OpListBuilder::memory(std::string name, cost::MemoryBoundKind kind, std::int64_t bytes_moved,
                                   Bytes saved) {
    Op op;
    op.name = std::move(name);
    op.kind = OpKind::MemoryBound;
    op.memory_kind = kind;
    op.bytes_moved = Bytes{bytes_moved};
    op.saved_bytes = saved;
    return push_compute(std::move(op));
}

namespace {

Op collective_op(std::string name, cost::CollectiveKind kind, std::int64_t bytes, CommGroup group) {
    Op op;
    op.name = std::move(name);
    op.kind = OpKind::Collective;
    op.collective = kind;
    op.collective_bytes = Bytes{bytes};
    op.group = group;
    return op;
}

}  // namespace

std::int32_t OpListBuilder::sync_collective(std::string name, cost::CollectiveKind kind, std::int64_t bytes,
                                            CommGroup group) {
    return push_collective(collective_op(std::move(name), kind, bytes, group), /*blocking=*/true);
}

std::int32_t OpListBuilder::async_collective(std::string name, cost::CollectiveKind kind, std::int64_t bytes,
                                             CommGroup group) {
    return push_collective(collective_op(std::move(name), kind, bytes, group), /*blocking=*/false);
}

std::int32_t OpListBuilder::side_collective(std::string name, cost::CollectiveKind kind, std::int64_t bytes,
                                            CommGroup group) {
    Op op = collective_op(std::move(name), kind, bytes, group);
    op.after = pending_joins_;  // what the compute stream waits for before its next op, not consumed here
    const std::int32_t index = push_collective(std::move(op), /*blocking=*/false);
    ops_[static_cast<std::size_t>(index)].stream = OpStream::SharedExpertComm;
    return index;
}

}  // namespace trainsim::workload
