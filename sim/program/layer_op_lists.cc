#include "sim/program/layer_op_lists.h"

#include "sim/workload/mtp_block.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_layers.h"
#include "sim/workload/stage_ops.h"
#include "sim/workload/transformer_layer.h"

namespace trainsim::program {

using config::RecomputeGranularity;
using workload::OpList;

LayerOpLists::LayerOpLists(const config::Scenario& scenario, OpListStore& store)
    : sc_(scenario), store_(store) {
    const workload::LayerShape shape = workload::layer_shape_of(sc_);
    // With moe_layer_freq the model mixes dense and MoE layers: each kind has its op lists.
    kinds_[0] = build(shape);
    parameters_of_[0] = workload::layer_parameters_per_rank(shape);
    kinds_[1] = kinds_[0];
    parameters_of_[1] = parameters_of_[0];
    if (workload::mixes_dense_and_moe_layers(sc_)) {
        const workload::LayerShape dense = shape.with_dense_mlp();
        kinds_[0] = build(dense);
        parameters_of_[0] = workload::layer_parameters_per_rank(dense);
    }
    embedding_forward_ = own(workload::embedding_forward(shape));
    embedding_backward_ = own(workload::embedding_backward(shape));
    output_forward_ = own(workload::output_forward(shape));
    output_backward_ = own(workload::output_backward(shape));
    if (sc_.model.mtp_num_layers > 0) {
        const workload::LayerShape mtp = workload::mtp_layer_shape(sc_);
        const workload::MtpRecompute recompute = workload::mtp_recompute(sc_);
        mtp_forward_ = own(workload::mtp_forward(mtp, recompute));
        mtp_backward_ = own(workload::mtp_backward(mtp, recompute));
    } else {
        mtp_forward_ = mtp_backward_ = own({});
    }
}

const LayerOps& LayerOpLists::at(std::int64_t layer) const {
    return kinds_[workload::is_moe_layer(sc_, layer) ? 1 : 0];
}

std::int64_t LayerOpLists::parameters_at(std::int64_t layer) const {
    return parameters_of_[workload::is_moe_layer(sc_, layer) ? 1 : 0];
}

LayerOps LayerOpLists::build(const workload::LayerShape& shape) {
    LayerOps ops;
    ops.forward_none = own(workload::layer_forward(shape, RecomputeGranularity::None));
    ops.forward_selective = own(workload::layer_forward(shape, RecomputeGranularity::Selective));
    ops.forward_checkpointed = own(workload::layer_forward(shape, RecomputeGranularity::Full));
    ops.backward_plain = own(workload::layer_backward(shape, RecomputeGranularity::None));
    ops.backward_selective = own(workload::layer_backward(shape, RecomputeGranularity::Selective));
    ops.recompute = own(workload::layer_full_recompute(shape, /*input_is_checkpoint=*/true));
    ops.recompute_chained = own(workload::layer_full_recompute(shape, /*input_is_checkpoint=*/false));
    ops.forward_unsaved = own(workload::layer_forward_unsaved(shape));
    ops.recompute_selective = own(workload::layer_selective_recompute(shape));
    return ops;
}

const OpList* LayerOpLists::own(OpList ops) {
    store_.push_back(std::make_unique<OpList>(std::move(ops)));
    return store_.back().get();
}

}  // namespace trainsim::program
