// Resources no flow can tell apart, merged: a folded collective's one flow carries the traffic of every
// copy of its group, so it crosses thousands of links, yet the links of all copies are used by the same
// flow specs with the same weights and have the same capacity. Such links always carry the same flows,
// saturate at the same level and carry the same bytes, so the sharing can work on one representative
// of each class (coarsest partition refinement, as in DFA minimisation) with bit-identical results.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/engine/flow.h"
#include "sim/engine/program.h"

namespace trainsim::engine {

class ResourceClasses {
public:
    /// Classes of `program`'s resources: equal capacity and, for every flow spec, used by it with the
    /// same weight or not at all. A resource with `distinct[r]` set is a class of its own (`distinct`
    /// may be shorter than the resources, or empty).
    ResourceClasses(const Program& program, std::span<const char> distinct);

    [[nodiscard]] std::size_t size() const { return capacity_.size(); }
    [[nodiscard]] ResourceClassId class_of(ResourceId r) const { return class_of_[r.index()]; }
    /// Each class's capacity (that of each of its resources).
    [[nodiscard]] const std::vector<double>& capacities() const { return capacity_; }
    /// Spec `f`'s uses in classes: one per class it crosses, in the order its uses first reach the
    /// class, with the weight of each of that class's resources.
    [[nodiscard]] std::span<const ResourceClassUse> uses(FlowSpecId f) const {
        const std::size_t i = f.index();
        return {uses_.data() + use_offsets_[i], uses_.data() + use_offsets_[i + 1]};
    }
    /// A per-class value given to each resource of its class.
    template <typename T> [[nodiscard]] std::vector<T> per_resource(const std::vector<T>& per_class) const {
        std::vector<T> out;
        out.reserve(class_of_.size());
        for (const ResourceClassId c : class_of_) {
            out.push_back(per_class[c.index()]);
        }
        return out;
    }

private:
    std::vector<ResourceClassId> class_of_;
    std::vector<double> capacity_;
    std::vector<ResourceClassUse> uses_;  // every spec's class uses, spec after spec
    std::vector<std::size_t> use_offsets_;
};

}  // namespace trainsim::engine
