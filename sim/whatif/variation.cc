#include "sim/whatif/variation.h"

#include <cmath>
#include <cstdio>
#include <functional>

namespace trainsim::whatif {

namespace {

bool valid(const config::Scenario& s) {
    try {
        config::validate_scenario(s);
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

struct IntegerKnob {
    const char* key;
    std::function<std::int64_t&(config::Scenario&)> field;
    bool keeps_gpus = false;  // d moves the other way so that t·p·d (the GPU count) stays
};

const std::vector<IntegerKnob>& integer_knobs() {
    static const std::vector<IntegerKnob> knobs = {
        {"t", [](config::Scenario& s) -> std::int64_t& { return s.parallelism.tensor_model_parallel_size; },
         true},
        {"p", [](config::Scenario& s) -> std::int64_t& { return s.parallelism.pipeline_model_parallel_size; },
         true},
        {"v",
         [](config::Scenario& s) -> std::int64_t& {
             return s.parallelism.virtual_pipeline_model_parallel_size;
         }},
        {"d", [](config::Scenario& s) -> std::int64_t& { return s.parallelism.data_parallel_size; }},
        {"micro_batch", [](config::Scenario& s) -> std::int64_t& { return s.training.micro_batch_size; }},
    };
    return knobs;
}

std::string move_label(const char* knob, const std::string& from, const std::string& to) {
    return std::string(knob) + " " + from + " → " + to;
}

void set_recompute(config::Scenario& s, config::RecomputeGranularity g) {
    s.training.recompute_granularity = g;
    s.training.num_microbatches_with_partial_activation_checkpoints.reset();
    if (g != config::RecomputeGranularity::Selective) {
        s.training.recompute_modules.reset();  // a selective scenario's modules go with it
    }
    if (g == config::RecomputeGranularity::Full) {
        // Megatron's plainest full recomputation: every layer its own checkpoint.
        s.training.recompute_method = config::RecomputeMethod::Uniform;
        s.training.recompute_num_layers = 1;
    } else {
        s.training.recompute_method.reset();
        s.training.recompute_num_layers.reset();
    }
}

}  // namespace

std::vector<Variation> profile_variations(const config::Scenario& base, double factor) {
    std::vector<Variation> out;
    char percent[32];
    std::snprintf(percent, sizeof percent, "%+g %% ", (factor - 1.0) * 100.0);
    for (const cost::ProfileParameter p : cost::all_profile_parameters()) {
        out.push_back({cost::key_of(p), percent + std::string(cost::to_string(p)), base, p, factor});
    }
    return out;
}

std::vector<Variation> layout_variations(const config::Scenario& base) {
    std::vector<Variation> out;
    for (const IntegerKnob& knob : integer_knobs()) {
        config::Scenario probe = base;
        const std::int64_t x = knob.field(probe);
        for (const int direction : {-1, +1}) {
            for (std::int64_t y = x + direction; y >= 1 && y <= 2 * x; y += direction) {
                config::Scenario moved = base;
                knob.field(moved) = y;
                std::string label = move_label(knob.key, std::to_string(x), std::to_string(y));
                if (knob.keeps_gpus) {
                    const std::int64_t d = base.parallelism.data_parallel_size;
                    if ((d * x) % y != 0) {
                        continue;
                    }
                    moved.parallelism.data_parallel_size = d * x / y;
                    label += " (d " + std::to_string(d) + " → " + std::to_string(d * x / y) + ")";
                }
                if (valid(moved)) {
                    out.push_back({knob.key, label, moved, std::nullopt, 1.0});
                    break;
                }
            }
        }
    }
    // Recomputation along the memory-for-time axis; overlapped has no neighbours on it.
    const std::vector<config::RecomputeGranularity> order = {config::RecomputeGranularity::None,
                                                             config::RecomputeGranularity::Selective,
                                                             config::RecomputeGranularity::Full};
    for (std::size_t i = 0; i < order.size(); ++i) {
        if (order[i] != base.training.recompute_granularity) {
            continue;
        }
        for (const std::size_t j : {i - 1, i + 1}) {
            if (j >= order.size()) {
                continue;  // also i − 1 wrapped below 0
            }
            config::Scenario moved = base;
            set_recompute(moved, order[j]);
            if (valid(moved)) {
                out.push_back(
                    {"recompute",
                     move_label("recompute", config::to_string(order[i]), config::to_string(order[j])), moved,
                     std::nullopt, 1.0});
            }
        }
    }
    return out;
}

}  // namespace trainsim::whatif
