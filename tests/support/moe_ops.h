#pragma once
// The MoE MLP's ops of a layer's op list and their names: what the MoE layer tests compare by hand.

#include <string>
#include <vector>

#include "sim/workload/op.h"

namespace trainsim::testing {

/// The ops from the router on (forward) or up to the router's gradient (backward): the router's, the
/// dispatcher's (`moe.`) and the routed experts'.
inline std::vector<const workload::Op*> moe_ops(const workload::OpList& ops) {
    std::vector<const workload::Op*> out;
    for (const workload::Op& op : ops) {
        if (op.name.starts_with("router") || op.name.starts_with("moe.") || op.name.starts_with("experts.")) {
            out.push_back(&op);
        }
    }
    return out;
}

/// The names of `ops`, in order.
inline std::vector<std::string> op_names(const std::vector<const workload::Op*>& ops) {
    std::vector<std::string> out;
    for (const workload::Op* op : ops) {
        out.push_back(op->name);
    }
    return out;
}

}  // namespace trainsim::testing
