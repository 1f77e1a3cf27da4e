// Prices workload ops with the cost model: each op's duration on the GPU at given coordinates, with
// its collective's real group size and node span from the layout.
#pragma once

#include "sim/cost/cost_model.h"
#include "sim/parallel/layout.h"
#include "sim/workload/op.h"

namespace trainsim::program {

class OpPricing {
public:
    OpPricing(const cost::CostModel& cost, const parallel::Layout& layout) : cost_(cost), layout_(layout) {}

    [[nodiscard]] Seconds duration(const workload::Op& op, const parallel::Coordinates& at) const;
    /// A pipeline send/receive of `bytes` between two GPUs.
    [[nodiscard]] Seconds p2p(Bytes bytes, const parallel::Coordinates& from, const parallel::Coordinates& to) const;
    [[nodiscard]] const parallel::Layout& layout() const { return layout_; }

    /// The span of the group an op's collective runs over.
    [[nodiscard]] parallel::GroupSpan group_span(workload::CommGroup group, const parallel::Coordinates& at) const;

private:
    const cost::CostModel& cost_;
    const parallel::Layout& layout_;
};

}  // namespace trainsim::program
