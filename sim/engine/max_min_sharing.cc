#include "sim/engine/max_min_sharing.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <unordered_map>

namespace trainsim::engine {

std::vector<double> max_min_rates(std::span<const SharedFlow> flows, std::span<const double> capacity) {
    const std::size_t n = flows.size();
    if (n == 1) {
        // Alone: its cap or its tightest resource (uses name distinct resources, Program merges them).
        double r = flows[0].max_rate;
        if (!(r > 0.0)) {
            throw std::invalid_argument("max_min_rates: a flow needs a positive max_rate");
        }
        for (const FlowUse& u : flows[0].uses) {
            if (u.resource < 0 || static_cast<std::size_t>(u.resource) >= capacity.size() ||
                !(u.weight > 0.0)) {
                throw std::invalid_argument(
                    "max_min_rates: a use names an unknown resource or a weight <= 0");
            }
            r = std::min(r, capacity[static_cast<std::size_t>(u.resource)] / u.weight);
        }
        return {r};
    }
    std::vector<double> rate(n, 0.0);
    std::vector<char> fixed(n, 0);
    // The resources this problem touches, indexed locally: a component touches few of the program's.
    std::unordered_map<ResourceId, std::size_t> local;
    std::vector<double> cap, remaining, unfixed_weight;
    std::vector<std::int32_t> unfixed_count;  // integer, so that rounding cannot leave a ghost user
    std::vector<std::vector<std::size_t>> local_uses(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (!(flows[i].max_rate > 0.0)) {
            throw std::invalid_argument("max_min_rates: a flow needs a positive max_rate");
        }
        for (const FlowUse& u : flows[i].uses) {
            if (u.resource < 0 || static_cast<std::size_t>(u.resource) >= capacity.size() ||
                !(u.weight > 0.0)) {
                throw std::invalid_argument(
                    "max_min_rates: a use names an unknown resource or a weight <= 0");
            }
            const auto [it, added] = local.try_emplace(u.resource, cap.size());
            if (added) {
                cap.push_back(capacity[static_cast<std::size_t>(u.resource)]);
                remaining.push_back(cap.back());
                unfixed_weight.push_back(0.0);
                unfixed_count.push_back(0);
            }
            unfixed_weight[it->second] += u.weight;
            ++unfixed_count[it->second];
            local_uses[i].push_back(it->second);
        }
    }
    const std::size_t m = cap.size();
    std::vector<char> saturated(m, 0);
    double level = 0.0;  // the common rate of every unfixed flow so far
    std::size_t left = n;
    while (left > 0) {
        // The next level at which a resource saturates or an unfixed flow reaches its cap.
        double next = std::numeric_limits<double>::infinity();
        for (std::size_t r = 0; r < m; ++r) {
            if (unfixed_count[r] > 0) {
                next = std::min(next, level + std::max(0.0, remaining[r]) / unfixed_weight[r]);
            }
        }
        for (std::size_t i = 0; i < n; ++i) {
            if (!fixed[i]) {
                next = std::min(next, flows[i].max_rate);
            }
        }
        const double rise = next - level;
        for (std::size_t r = 0; r < m; ++r) {
            if (unfixed_count[r] > 0) {
                remaining[r] -= rise * unfixed_weight[r];
            }
        }
        level = next;
        // Saturated: no capacity left beyond rounding residue.
        for (std::size_t r = 0; r < m; ++r) {
            saturated[r] = unfixed_count[r] > 0 && remaining[r] <= 1e-12 * cap[r];
        }
        std::size_t fixed_now = 0;
        for (std::size_t i = 0; i < n; ++i) {
            if (fixed[i]) {
                continue;
            }
            bool fix = flows[i].max_rate <= level;
            for (const std::size_t r : local_uses[i]) {
                fix = fix || saturated[r];
            }
            if (!fix) {
                continue;
            }
            fixed[i] = 1;
            rate[i] = level;
            --left;
            ++fixed_now;
            for (std::size_t k = 0; k < local_uses[i].size(); ++k) {
                const std::size_t r = local_uses[i][k];
                unfixed_weight[r] -= flows[i].uses[k].weight;
                --unfixed_count[r];
            }
        }
        if (fixed_now == 0) {
            // Cannot happen: `next` is the minimum of the saturation levels and caps, so at least one
            // resource saturates or one flow reaches its cap. Guard against rounding all the same.
            throw std::logic_error("max_min_rates: progressive filling made no progress");
        }
    }
    return rate;
}

}  // namespace trainsim::engine
