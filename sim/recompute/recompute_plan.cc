#include "sim/recompute/recompute_plan.h"

#include <algorithm>

namespace trainsim::recompute {

const char* to_string(LayerRecompute r) {
    switch (r) {
    case LayerRecompute::Keep:
        return "keep";
    case LayerRecompute::SelectiveOnDemand:
        return "selective on demand";
    case LayerRecompute::SelectiveOverlapped:
        return "selective overlapped";
    case LayerRecompute::FullOnDemand:
        return "full on demand";
    case LayerRecompute::FullOverlapped:
        return "full overlapped";
    case LayerRecompute::FullChained:
        return "full chained";
    }
    return "?";
}

bool is_overlapped(LayerRecompute r) {
    return r == LayerRecompute::SelectiveOverlapped || r == LayerRecompute::FullOverlapped;
}
bool is_selective(LayerRecompute r) {
    return r == LayerRecompute::SelectiveOnDemand || r == LayerRecompute::SelectiveOverlapped;
}
bool is_full(LayerRecompute r) {
    return r == LayerRecompute::FullOnDemand || r == LayerRecompute::FullOverlapped ||
           r == LayerRecompute::FullChained;
}

LayerRecompute RecomputePlan::at(std::int64_t stage, std::int64_t layer_in_stage,
                                 std::int64_t microbatch) const {
    if (!stored_microbatches.empty() &&
        stored_microbatches[static_cast<std::size_t>(stage)].stores(microbatch)) {
        return LayerRecompute::Keep;
    }
    return at(stage, layer_in_stage);
}

RecomputePlan RecomputePlan::uniform(std::int64_t stages, std::int64_t layers_per_stage, LayerRecompute r,
                                     std::int64_t lookahead) {
    return uniform(std::vector<std::int64_t>(static_cast<std::size_t>(stages), layers_per_stage), r,
                   lookahead);
}

RecomputePlan RecomputePlan::uniform(const std::vector<std::int64_t>& layers_per_stage, LayerRecompute r,
                                     std::int64_t lookahead) {
    RecomputePlan plan;
    for (const std::int64_t n : layers_per_stage) {
        plan.layers.emplace_back(static_cast<std::size_t>(n), r);
    }
    plan.lookahead = lookahead;
    return plan;
}

bool RecomputePlan::has_overlap() const {
    for (const auto& stage : layers) {
        for (const LayerRecompute r : stage) {
            if (is_overlapped(r)) {
                return true;
            }
        }
    }
    return false;
}

namespace {

std::string describe_layers(const std::vector<LayerRecompute>& stage) {
    // Runs of equal layers: "full overlapped" or "2 × keep, 2 × full overlapped".
    std::string out;
    std::size_t i = 0;
    while (i < stage.size()) {
        std::size_t j = i;
        while (j < stage.size() && stage[j] == stage[i]) {
            ++j;
        }
        if (!out.empty()) {
            out += ", ";
        }
        if (i != 0 || j != stage.size()) {
            out += std::to_string(j - i) + " x ";
        }
        out += to_string(stage[i]);
        i = j;
    }
    return out;
}

std::string describe_stage(const RecomputePlan& plan, std::size_t s) {
    std::string out = describe_layers(plan.layers[s]);
    if (!plan.stored_microbatches.empty() && plan.stored_microbatches[s].stored > 0) {
        const StoredMicrobatches m = plan.stored_microbatches[s];
        const std::int64_t n = std::min(m.stored, m.period);
        out += n == 1 ? ", micro-batch 0 of every " + std::to_string(m.period) + " keeps all"
                      : ", micro-batches 0-" + std::to_string(n - 1) + " of every " +
                            std::to_string(m.period) + " keep all";
    }
    return out;
}

}  // namespace

std::string RecomputePlan::describe() const {
    std::string out;
    std::size_t s = 0;
    while (s < layers.size()) {
        std::size_t e = s;
        // Stages are grouped by their description, so stages of different lengths that apply one policy
        // to every layer ("keep") read as one group.
        while (e < layers.size() && describe_stage(*this, e) == describe_stage(*this, s)) {
            ++e;
        }
        if (!out.empty()) {
            out += "; ";
        }
        out += (e - s == 1 ? "stage " + std::to_string(s)
                           : "stages " + std::to_string(s) + "-" + std::to_string(e - 1)) +
               ": " + describe_stage(*this, s);
        s = e;
    }
    if (has_overlap()) {
        out += lookahead == 0
                   ? std::string(" (after the previous backward frees each layer)")
                   : " (lookahead " + std::to_string(lookahead) + " step" + (lookahead == 1 ? "" : "s") + ")";
    }
    return out;
}

}  // namespace trainsim::recompute
