#include "sim/workload/fsdp_ops.h"

#include "sim/workload/op_list_builder.h"
#include "sim/workload/stage_ops.h"

namespace trainsim::workload {

namespace {
constexpr std::int64_t kWeightBytes = 2;  // bf16 weights are what the layers compute with
}  // namespace

bool shards_parameters(const config::Scenario& sc) {
    return sc.parallelism.data_parallel_sharding_strategy == config::DataParallelSharding::OptimGradsParams;
}

OpList fsdp_parameter_gather(std::int64_t parameters) {
    OpListBuilder ops(OpRole::GradientSync);
    ops.async_collective("fsdp.param_allgather", cost::CollectiveKind::AllGather, parameters * kWeightBytes,
                         CommGroup::Data);
    return ops.take();
}

OpList fsdp_gradient_reduce_scatter(std::int64_t parameters) {
    OpListBuilder ops(OpRole::GradientSync);
    ops.async_collective("fsdp.grad_reducescatter", cost::CollectiveKind::ReduceScatter,
                         parameters * kGradientBytes, CommGroup::Data);
    return ops.take();
}

std::int64_t fsdp_layer_traffic_bytes(std::int64_t microbatches, std::int64_t layers,
                                      std::int64_t layer_parameters) {
    return microbatches * layers * layer_parameters * (2 * kWeightBytes + kGradientBytes);
}

}  // namespace trainsim::workload
