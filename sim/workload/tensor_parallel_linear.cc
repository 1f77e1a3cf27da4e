#include "sim/workload/tensor_parallel_linear.h"

namespace trainsim::workload {

void column_parallel_backward(OpListBuilder& ops, const LayerShape& shape, std::int64_t tokens,
                              std::int64_t in_features, std::int64_t local_out, const std::string& name) {
    using cost::CollectiveKind;
    const std::int64_t input_bytes = tokens * in_features * 2;  // the full [s·b, in] activation, 2 bytes
    if (shape.tp == 1) {
        ops.gemm(name + ".dgrad", {tokens, in_features, local_out});
        ops.gemm(name + ".wgrad", {local_out, in_features, tokens});
        return;
    }
    if (shape.sequence_parallel) {
        const auto gather =
            ops.async_collective(name + ".input_allgather", CollectiveKind::AllGather, input_bytes);
        ops.gemm(name + ".dgrad", {tokens, in_features, local_out});
        ops.join(gather);
        const auto scatter =
            ops.async_collective(name + ".dgrad_reducescatter", CollectiveKind::ReduceScatter, input_bytes);
        ops.gemm(name + ".wgrad", {local_out, in_features, tokens});
        ops.join(scatter);
    } else {
        ops.gemm(name + ".dgrad", {tokens, in_features, local_out});
        const auto reduce =
            ops.async_collective(name + ".dgrad_allreduce", CollectiveKind::AllReduce, input_bytes);
        ops.gemm(name + ".wgrad", {local_out, in_features, tokens});
        ops.join(reduce);
    }
}

}  // namespace trainsim::workload
