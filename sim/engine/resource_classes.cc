#include "sim/engine/resource_classes.h"

#include <bit>
#include <unordered_map>

namespace trainsim::engine {
namespace {

// What splits a class while refining it by one spec: the resource's class so far and its weight in
// the spec (bitwise: the sharing must see exactly the same numbers).
struct Split {
    ResourceClassId before;
    std::uint64_t weight_bits;
    friend bool operator==(const Split&, const Split&) = default;
};
struct SplitHash {
    std::size_t operator()(const Split& s) const {
        return std::hash<std::uint64_t>{}(s.weight_bits * 0x9E3779B97F4A7C15ULL ^
                                          static_cast<std::uint64_t>(s.before.value()));
    }
};

}  // namespace

ResourceClasses::ResourceClasses(const Program& program, std::span<const char> distinct) {
    const std::vector<double>& capacity = program.resource_capacities();
    const std::size_t n = capacity.size();
    // Start from equal capacities, then refine by each spec in turn: resources of one class that a spec
    // uses with one weight move together to a new class; the rest stay.
    class_of_.resize(n);
    std::int32_t next = 0;  // classes numbered so far, densely renumbered at the end
    {
        std::unordered_map<std::uint64_t, ResourceClassId> by_capacity;
        for (std::size_t r = 0; r < n; ++r) {
            if (r < distinct.size() && distinct[r]) {
                class_of_[r] = ResourceClassId{next++};
            } else {
                const auto [it, added] =
                    by_capacity.try_emplace(std::bit_cast<std::uint64_t>(capacity[r]), ResourceClassId{next});
                next += added ? 1 : 0;
                class_of_[r] = it->second;
            }
        }
    }
    std::unordered_map<Split, ResourceClassId, SplitHash> split;
    for (std::size_t f = 0; f < program.flow_spec_count(); ++f) {
        split.clear();
        // A spec's uses name distinct resources (Program merges them), so each is moved once.
        for (const FlowUse& u : program.flow_spec(FlowSpecId::from_index(f)).uses) {
            ResourceClassId& c = class_of_[u.resource.index()];
            const auto [it, added] =
                split.try_emplace(Split{c, std::bit_cast<std::uint64_t>(u.weight)}, ResourceClassId{next});
            next += added ? 1 : 0;
            c = it->second;
        }
    }
    // Number the classes densely, in the order of their first resource.
    std::vector<ResourceClassId> dense(static_cast<std::size_t>(next), ResourceClassId::none());
    for (std::size_t r = 0; r < n; ++r) {
        ResourceClassId& d = dense[class_of_[r].index()];
        if (!d.valid()) {
            d = ResourceClassId::from_index(capacity_.size());
            capacity_.push_back(capacity[r]);
        }
        class_of_[r] = d;
    }
    // Each spec's uses in classes, in the order its uses first reach each class.
    std::vector<std::size_t> seen(capacity_.size(), 0);  // 1 + the last spec that reached the class
    use_offsets_.reserve(program.flow_spec_count() + 1);
    use_offsets_.push_back(0);
    for (std::size_t f = 0; f < program.flow_spec_count(); ++f) {
        for (const FlowUse& u : program.flow_spec(FlowSpecId::from_index(f)).uses) {
            const ResourceClassId c = class_of(u.resource);
            if (seen[c.index()] != f + 1) {
                seen[c.index()] = f + 1;
                uses_.push_back({c, u.weight});
            }
        }
        use_offsets_.push_back(uses_.size());
    }
}

}  // namespace trainsim::engine
