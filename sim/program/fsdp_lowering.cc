#include "sim/program/fsdp_lowering.h"

#include <memory>

#include "sim/workload/fsdp_ops.h"
#include "sim/workload/parameter_count.h"

namespace trainsim::program {

FsdpLowering::FsdpLowering(const config::Scenario& scenario, OpListStore& store) {
    if (!workload::shards_parameters(scenario) || scenario.parallelism.data_parallel_size_with_cp() <= 1) {
        return;
    }
    const std::int64_t parameters = workload::layer_parameters_per_rank(workload::layer_shape_of(scenario));
    store.push_back(std::make_unique<workload::OpList>(workload::fsdp_parameter_gather(parameters)));
    gather_ = store.back().get();
    store.push_back(std::make_unique<workload::OpList>(workload::fsdp_gradient_reduce_scatter(parameters)));
    reduce_ = store.back().get();
}

engine::TaskId FsdpLowering::gather(OpLowering& low, const StepContext& ctx) const {
    if (!on()) {
        return engine::kNoTask;
    }
    low.lower(*gather_, ctx);
    return low.last_data_collective();
}

void FsdpLowering::reduce_scatter(OpLowering& low, const StepContext& ctx) const {
    if (on()) {
        low.lower(*reduce_, ctx);
    }
}

}  // namespace trainsim::program
