// Max-min fair sharing of resource capacities among flows (progressive filling, the allocation
// SimGrid's LMM solver computes; Bertsekas & Gallager, Data Networks, §6.5.2): every flow's rate rises
// together until a resource saturates or a flow reaches its own cap; those flows are fixed, and the rest
// go on rising. The result is the unique allocation in which no flow can gain without a flow of equal or
// lower rate losing.
#pragma once

#include <span>
#include <vector>

#include "sim/engine/flow.h"

namespace trainsim::engine {

/// One flow of a sharing problem: its cap and the resources it uses (indices into the capacities).
struct SharedFlow {
    double max_rate = 0.0;
    std::span<const FlowUse> uses;
};

/// Rates (units/s) of `flows` on resources of `capacity` (units/s, indexed by FlowUse::resource). A
/// flow's uses name distinct resources.
/// Each flow gets at least 0 and at most its max_rate; weights scale a flow's load on a resource.
[[nodiscard]] std::vector<double> max_min_rates(std::span<const SharedFlow> flows,
                                                std::span<const double> capacity);

}  // namespace trainsim::engine
