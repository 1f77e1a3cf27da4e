#include "sim/memory/static_memory.h"

#include <cmath>

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
    return Bytes{static_cast<std::int64_t>(std::ceil(params * bytes_per_parameter(sc)))};
}

}  // namespace trainsim::memory
