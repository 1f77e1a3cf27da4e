#pragma once
// One op of an op list by its name, for tests that check an op's bytes or shape by hand.

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/workload/op.h"

namespace trainsim::testing {

/// The first op of `ops` named `name`; throws (failing the test) when there is none.
inline const workload::Op& op_named(const workload::OpList& ops, const std::string& name) {
    const auto it =
        std::find_if(ops.begin(), ops.end(), [&](const workload::Op& op) { return op.name == name; });
    if (it == ops.end()) {
        throw std::runtime_error("no op named " + name);
    }
    return *it;
}

}  // namespace trainsim::testing
