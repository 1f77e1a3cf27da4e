// Max-min fair sharing of resource capacities among flows (progressive filling, the allocation
// SimGrid's LMM solver computes; Bertsekas & Gallager, Data Networks, §6.5.2): every flow's rate rises
// together until a resource saturates or a flow reaches its own cap; those flows are fixed, and the rest
// go on rising. The result is the unique allocation in which no flow can gain without a flow of equal or
// lower rate losing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/engine/flow.h"

namespace trainsim::engine {

/// One flow of a sharing problem: its cap and what it uses, each use indexing the capacities: the
/// program's resources (FlowUse) or classes of them (ResourceClassUse, as the engine shares them).
template <typename Use> struct SharedFlowOf {
    double max_rate = 0.0;
    std::span<const Use> uses;
};
using SharedFlow = SharedFlowOf<FlowUse>;
using SharedClassFlow = SharedFlowOf<ResourceClassUse>;

/// Rates (units/s) of `flows` on resources of `capacity` (units/s, indexed by FlowUse::resource, or by
/// ResourceClassUse::cls for classes). A flow's uses name distinct resources.
/// Each flow gets at least 0 and at most its max_rate; weights scale a flow's load on a resource.
[[nodiscard]] std::vector<double> max_min_rates(std::span<const SharedFlow> flows,
                                                std::span<const double> capacity);
[[nodiscard]] std::vector<double> max_min_rates(std::span<const SharedClassFlow> flows,
                                                std::span<const double> capacity);

/// max_min_rates for a caller that solves many problems (the engine reshares at every flow start and
/// end): the same rates, bit for bit, with its working memory kept from one problem to the next.
class MaxMinSharing {
public:
    /// The rates of `flows`, valid until the next call.
    [[nodiscard]] const std::vector<double>& rates(std::span<const SharedFlow> flows,
                                                   std::span<const double> capacity);
    [[nodiscard]] const std::vector<double>& rates(std::span<const SharedClassFlow> flows,
                                                   std::span<const double> capacity);

private:
    template <typename Use>
    const std::vector<double>& solve(std::span<const SharedFlowOf<Use>> flows,
                                     std::span<const double> capacity);

    std::vector<double> rate_;
    std::vector<char> fixed_;
    std::vector<std::int32_t> local_of_;  // per resource of `capacity`: its local index, or -1
    std::vector<std::size_t> touched_;    // the resources of this problem, by local index
    std::vector<double> cap_, remaining_, unfixed_weight_;
    std::vector<std::int32_t> unfixed_count_;  // integer, so that rounding cannot leave a ghost user
    std::vector<char> saturated_;
    std::vector<std::size_t> use_offsets_;  // flow i's local resources: local_uses_[offsets[i], [i+1])
    std::vector<std::size_t> local_uses_;
};

}  // namespace trainsim::engine
