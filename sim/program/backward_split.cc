#include "sim/program/backward_split.h"

#include <string_view>
#include <vector>

namespace trainsim::program {

bool is_weight_gradient(const workload::Op& op) {
    constexpr std::string_view suffix = ".wgrad";
    const std::string_view name = op.name;
    return op.kind == workload::OpKind::Gemm && name.size() > suffix.size() &&
           name.substr(name.size() - suffix.size()) == suffix;
}

bool saved_for_weight_gradient(const workload::Op& op) {
    return op.kind == workload::OpKind::Gemm && op.gemm_class == cost::GemmClass::Dense &&
           op.saved_bytes.value > 0;
}

BackwardSplit split_backward(const workload::OpList& backward) {
    BackwardSplit out;
    // Each op's part (true: W) and index in it.
    std::vector<std::pair<bool, std::int32_t>> where;
    where.reserve(backward.size());
    for (const workload::Op& op : backward) {
        const bool w = is_weight_gradient(op);
        workload::OpList& part = w ? out.weight_gradient : out.input_gradient;
        where.emplace_back(w, static_cast<std::int32_t>(part.size()));
        workload::Op copy = op;
        copy.after.clear();
        for (const std::int32_t a : op.after) {
            const auto [a_is_w, a_index] = where[static_cast<std::size_t>(a)];
            if (a_is_w == w) {
                copy.after.push_back(a_index);
            }
        }
        part.push_back(std::move(copy));
    }
    return out;
}

}  // namespace trainsim::program
