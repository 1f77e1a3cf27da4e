#include "sim/program/layer_program.h"

#include "sim/core/input_error.h"
#include "sim/program/op_lowering.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"

namespace trainsim::program {

IterationProgram build_single_layer(const config::Scenario& sc, const cost::CostModel& cost) {
    if (sc.training.recompute_granularity == config::RecomputeGranularity::Overlapped) {
        throw InputError(
            "training.recompute_granularity=overlapped: a single layer has no pipeline to overlap "
            "with; use 'trainsim run' or 'trainsim recompute'");
    }
    check_fits_profile(sc, cost.profile());
    const parallel::Layout layout(sc);
    const OpPricing pricing(cost, layout, sc);
    RendezvousTable rendezvous;
    IterationProgram out;
    const parallel::Coordinates at{0, 0, 0};
    OpLowering low(out, pricing, rendezvous, GroupMembers{}, engine::GpuId{0}, at);
    out.gpus.push_back(SimulatedGpu{at, low.compute_stream()});
    const workload::LayerShape shape = workload::layer_shape_of(sc);
    out.op_lists.push_back(std::make_unique<workload::OpList>(
        workload::layer_forward(shape, sc.training.recompute_granularity)));
    out.op_lists.push_back(std::make_unique<workload::OpList>(
        workload::layer_backward(shape, sc.training.recompute_granularity)));
    low.lower(*out.op_lists[0], StepContext{0, 0, 0, Phase::Forward});
    low.lower(*out.op_lists[1], StepContext{0, 0, 0, Phase::Backward});
    return out;
}

}  // namespace trainsim::program
