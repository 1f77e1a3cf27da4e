// The op lists of a scenario's layers, built once and shared by every GPU and micro-batch: each kind of
// transformer layer (dense and MoE, when moe_layer_freq mixes them) under every recompute variant a
// recompute plan mixes layer by layer, and the embedding and output layers.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/workload/layer_shape.h"
#include "sim/workload/op.h"

namespace trainsim::program {

/// Where op lists live for as long as the program that points into them (IterationProgram::op_lists).
using OpListStore = std::vector<std::unique_ptr<workload::OpList>>;

/// One kind of layer's op lists under every recompute variant.
struct LayerOps {
    const workload::OpList* forward_checkpointed =
        nullptr;  // forward of a fully recomputed layer (keeps its input)
    const workload::OpList* backward_plain =
        nullptr;  // backward of a layer whose activations are stored or recomputed
    const workload::OpList* recompute =
        nullptr;  // the recomputed forward of full recompute (from its checkpoint)
    const workload::OpList* recompute_chained = nullptr;  // ... of a later layer of a checkpointed group
    const workload::OpList* forward_unsaved = nullptr;    // forward of a later layer of a checkpointed group
    const workload::OpList* forward_none = nullptr;       // forward that keeps every activation
    const workload::OpList* forward_selective = nullptr;
    const workload::OpList* backward_selective = nullptr;  // with the core attention recomputed inline
    const workload::OpList* recompute_selective =
        nullptr;  // the core attention alone (for the background lane)
};

class LayerOpLists {
public:
    /// Builds every list into `store`, which keeps them (the program's priced ops point into them).
    LayerOpLists(const config::Scenario& scenario, OpListStore& store);

    /// The op lists and per-rank parameters of model layer `layer`, by its kind (dense or MoE).
    [[nodiscard]] const LayerOps& at(std::int64_t layer) const;
    [[nodiscard]] std::int64_t parameters_at(std::int64_t layer) const;

    [[nodiscard]] const workload::OpList& embedding_forward() const { return *embedding_forward_; }
    [[nodiscard]] const workload::OpList& embedding_backward() const { return *embedding_backward_; }
    [[nodiscard]] const workload::OpList& output_forward() const { return *output_forward_; }
    [[nodiscard]] const workload::OpList& output_backward() const { return *output_backward_; }
    /// One MTP depth's forward and backward (workload/mtp_block.h); empty without MTP.
    [[nodiscard]] const workload::OpList& mtp_forward() const { return *mtp_forward_; }
    [[nodiscard]] const workload::OpList& mtp_backward() const { return *mtp_backward_; }

private:
    [[nodiscard]] LayerOps build(const workload::LayerShape& shape);
    const workload::OpList* own(workload::OpList ops);

    const config::Scenario& sc_;
    OpListStore& store_;
    std::array<LayerOps, 2> kinds_{};              // dense, MoE (the same when not mixed)
    std::array<std::int64_t, 2> parameters_of_{};  // per-rank parameters of each kind
    const workload::OpList* embedding_forward_ = nullptr;
    const workload::OpList* embedding_backward_ = nullptr;
    const workload::OpList* output_forward_ = nullptr;
    const workload::OpList* output_backward_ = nullptr;
    const workload::OpList* mtp_forward_ = nullptr;
    const workload::OpList* mtp_backward_ = nullptr;
};

}  // namespace trainsim::program
