#include "sim/memory/static_memory.h"

#include <algorithm>
#include <cmath>

#include "sim/workload/fp32_embedding_gradients.h"
#include "sim/workload/fp8_layer.h"
#include "sim/workload/fsdp_ops.h"
#include "sim/workload/optimizer_state.h"
#include "sim/workload/parameter_count.h"

namespace trainsim::memory {

namespace {

double bytes_per_parameter_over(const config::Scenario& sc, double d) {
    const workload::OptimizerStateBytes b = workload::optimizer_state_bytes(sc);
    const auto weight = static_cast<double>(b.weight);
    const auto gradient = static_cast<double>(b.gradient);
    const auto state = static_cast<double>(b.state());
    switch (sc.parallelism.data_parallel_sharding_strategy) {
    case config::DataParallelSharding::OptimGradsParams:
        return (weight + gradient + state) / d;  // 18/d by default: everything sharded
    case config::DataParallelSharding::OptimGrads:
        return weight + (gradient + state) / d;
    case config::DataParallelSharding::Optim:
    case config::DataParallelSharding::NoShard:
        break;
    }
    return weight + gradient + (sc.training.use_distributed_optimizer ? state / d : state);
}

}  // namespace

double bytes_per_parameter(const config::Scenario& sc) {
    // Sharded over the d·c ranks that hold the same weights (Megatron's dp×cp group).
    return bytes_per_parameter_over(sc, static_cast<double>(sc.parallelism.data_parallel_size_with_cp()));
}

Bytes gathered_layer_bytes(const config::Scenario& sc, std::int64_t pipeline_rank) {
    if (!workload::shards_parameters(sc)) {
        return Bytes{0};
    }
    // The layer being computed and the one being prefetched, in 16-bit weights.
    constexpr std::int64_t kWeight = 2;
    const std::int64_t layers = std::min<std::int64_t>(2, sc.stage_num_layers(pipeline_rank));
    return Bytes{layers * kWeight * workload::layer_parameters_per_rank(workload::layer_shape_of(sc))};
}

Bytes static_bytes(const config::Scenario& sc, std::int64_t pipeline_rank) {
    const workload::StageParameters stage = workload::stage_parameters(sc, pipeline_rank);
    const auto params = static_cast<double>(stage.total() - stage.expert);
    // Routed experts' optimizer state is sharded over expert data parallelism (Megatron-Core).
    const double expert_bytes =
        stage.expert > 0 ? static_cast<double>(stage.expert) *
                               bytes_per_parameter_over(
                                   sc, static_cast<double>(sc.parallelism.expert_data_parallel_size()))
                         : 0.0;
    // NeMo's fp32 embedding gradients (fp32_embedding_gradients.h) take 4 − G more bytes each in Apex's
    // gradient buffer, which the distributed optimizer does not shard.
    const Bytes bytes{
        static_cast<std::int64_t>(std::ceil(params * bytes_per_parameter(sc) + expert_bytes)) +
        workload::fp32_gradient_extra_bytes(sc, workload::fp32_gradient_parameters(sc, pipeline_rank))};
    const Bytes gathered = gathered_layer_bytes(sc, pipeline_rank);
    if (!sc.training.fp8()) {
        return bytes + gathered;
    }
    // Transformer Engine keeps FP8 copies of the layers' weights beside the BF16 ones.
    return bytes + gathered +
           Bytes{workload::fp8_weight_copy_bytes(workload::fp8_weight_parameters(sc, pipeline_rank))};
}

}  // namespace trainsim::memory
