#include "sim/engine/max_min_sharing.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace trainsim::engine {

std::vector<double> max_min_rates(std::span<const SharedFlow> flows, std::span<const double> capacity) {
    MaxMinSharing sharing;
    return sharing.rates(flows, capacity);
}

std::vector<double> max_min_rates(std::span<const SharedClassFlow> flows, std::span<const double> capacity) {
    MaxMinSharing sharing;
    return sharing.rates(flows, capacity);
}

namespace {

// The id a use loads, whichever kind the problem is written in.
[[nodiscard]] ResourceId id_of(const FlowUse& u) {
    return u.resource;
}
[[nodiscard]] ResourceClassId id_of(const ResourceClassUse& u) {
    return u.cls;
}

template <typename Use> void check_use(const Use& u, std::span<const double> capacity) {
    if (!id_of(u).valid() || id_of(u).index() >= capacity.size() || !(u.weight > 0.0)) {
        throw std::invalid_argument("max_min_rates: a use names an unknown resource or a weight <= 0");
    }
}

}  // namespace

template <typename Use>
const std::vector<double>& MaxMinSharing::solve(std::span<const SharedFlowOf<Use>> flows,
                                                std::span<const double> capacity) {
    const std::size_t n = flows.size();
    rate_.assign(n, 0.0);
    if (n == 1) {
        // Alone: its cap or its tightest resource (uses name distinct resources, Program merges them).
        double r = flows[0].max_rate;
        if (!(r > 0.0)) {
            throw std::invalid_argument("max_min_rates: a flow needs a positive max_rate");
        }
        for (const Use& u : flows[0].uses) {
            check_use(u, capacity);
            r = std::min(r, capacity[id_of(u).index()] / u.weight);
        }
        rate_[0] = r;
        return rate_;
    }
    fixed_.assign(n, 0);
    // The resources this problem touches, indexed locally: a component touches few of the program's.
    if (local_of_.size() < capacity.size()) {
        local_of_.resize(capacity.size(), -1);
    }
    touched_.clear();
    cap_.clear();
    remaining_.clear();
    unfixed_weight_.clear();
    unfixed_count_.clear();
    use_offsets_.assign(1, 0);
    local_uses_.clear();
    // Leaves local_of_ all -1 again, whether the problem is solved or rejected.
    struct Reset {
        MaxMinSharing& s;
        ~Reset() {
            for (const std::size_t r : s.touched_) {
                s.local_of_[r] = -1;
            }
        }
    } reset{*this};
    for (std::size_t i = 0; i < n; ++i) {
        if (!(flows[i].max_rate > 0.0)) {
            throw std::invalid_argument("max_min_rates: a flow needs a positive max_rate");
        }
        for (const Use& u : flows[i].uses) {
            check_use(u, capacity);
            const std::size_t resource = id_of(u).index();
            std::int32_t& local = local_of_[resource];
            if (local < 0) {
                local = static_cast<std::int32_t>(cap_.size());
                touched_.push_back(resource);
                cap_.push_back(capacity[resource]);
                remaining_.push_back(cap_.back());
                unfixed_weight_.push_back(0.0);
                unfixed_count_.push_back(0);
            }
            const auto l = static_cast<std::size_t>(local);
            unfixed_weight_[l] += u.weight;
            ++unfixed_count_[l];
            local_uses_.push_back(l);
        }
        use_offsets_.push_back(local_uses_.size());
    }
    const std::size_t m = cap_.size();
    saturated_.assign(m, 0);
    double level = 0.0;  // the common rate of every unfixed flow so far
    std::size_t left = n;
    while (left > 0) {
        // The next level at which a resource saturates or an unfixed flow reaches its cap.
        double next = std::numeric_limits<double>::infinity();
        for (std::size_t r = 0; r < m; ++r) {
            if (unfixed_count_[r] > 0) {
                next = std::min(next, level + std::max(0.0, remaining_[r]) / unfixed_weight_[r]);
            }
        }
        for (std::size_t i = 0; i < n; ++i) {
            if (!fixed_[i]) {
                next = std::min(next, flows[i].max_rate);
            }
        }
        const double rise = next - level;
        for (std::size_t r = 0; r < m; ++r) {
            if (unfixed_count_[r] > 0) {
                remaining_[r] -= rise * unfixed_weight_[r];
            }
        }
        level = next;
        // Saturated: no capacity left beyond rounding residue.
        for (std::size_t r = 0; r < m; ++r) {
            saturated_[r] = unfixed_count_[r] > 0 && remaining_[r] <= 1e-12 * cap_[r];
        }
        std::size_t fixed_now = 0;
        for (std::size_t i = 0; i < n; ++i) {
            if (fixed_[i]) {
                continue;
            }
            bool fix = flows[i].max_rate <= level;
            for (std::size_t k = use_offsets_[i]; k < use_offsets_[i + 1] && !fix; ++k) {
                fix = saturated_[local_uses_[k]] != 0;
            }
            if (!fix) {
                continue;
            }
            fixed_[i] = 1;
            rate_[i] = level;
            --left;
            ++fixed_now;
            for (std::size_t k = use_offsets_[i]; k < use_offsets_[i + 1]; ++k) {
                const std::size_t r = local_uses_[k];
                unfixed_weight_[r] -= flows[i].uses[k - use_offsets_[i]].weight;
                --unfixed_count_[r];
            }
        }
        if (fixed_now == 0) {
            // Cannot happen: `next` is the minimum of the saturation levels and caps, so at least one
            // resource saturates or one flow reaches its cap. Guard against rounding all the same.
            throw std::logic_error("max_min_rates: progressive filling made no progress");
        }
    }
    return rate_;
}

const std::vector<double>& MaxMinSharing::rates(std::span<const SharedFlow> flows,
                                                std::span<const double> capacity) {
    return solve(flows, capacity);
}

const std::vector<double>& MaxMinSharing::rates(std::span<const SharedClassFlow> flows,
                                                std::span<const double> capacity) {
    return solve(flows, capacity);
}

}  // namespace trainsim::engine
