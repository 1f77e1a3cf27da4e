#include "sim/memory/static_memory.h"

#include <cmath>

#include "sim/workload/fp8_layer.h"
#include "sim/workload/parameter_count.h"

namespace trainsim::memory {

double bytes_per_parameter(const config::Scenario& sc) {
    constexpr double kWeight = 2.0;
    constexpr double kGradient = 4.0;
    constexpr double kOptimizerState = 12.0;
    const double d = static_cast<double>(sc.parallelism.data_parallel_size);
    return kWeight + kGradient +
           (sc.training.use_distributed_optimizer ? kOptimizerState / d : kOptimizerState);
}

Bytes static_bytes(const config::Scenario& sc, std::int64_t pipeline_rank) {
    const auto params = static_cast<double>(workload::stage_parameters(sc, pipeline_rank).total());
    const Bytes bytes{static_cast<std::int64_t>(std::ceil(params * bytes_per_parameter(sc)))};
    if (!sc.training.fp8()) {
        return bytes;
    }
    // Transformer Engine keeps FP8 copies of the layers' weights beside the BF16 ones.
    return bytes + Bytes{workload::fp8_weight_copy_bytes(workload::layer_shape_of(sc),
                                                         sc.stage_num_layers(pipeline_rank))};
}

}  // namespace trainsim::memory
