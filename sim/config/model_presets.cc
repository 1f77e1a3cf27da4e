#include "sim/config/model_presets.h"

#include <array>

namespace trainsim::config {

namespace {

// Korthikanti et al. 2022 (arXiv 2205.05198), Table 3, with the text's s = 2048, v = 51200 and an MLP
// of 4h (shared/reference/papers.md §1.5). Narayanan et al. 2021 Table 1 is not in the reference
// (papers.md §2.3 keeps it out as a held-out check), so its configurations are not presets.
constexpr std::string_view kKorthikantiTable3 = "Korthikanti et al. 2022, arXiv 2205.05198, Table 3";

constexpr std::array<ModelPreset, 4> kPresets{{
    // 22B: 48 layers, h 6144, 64 heads.
    {"gpt-22b", kKorthikantiTable3, 48, 6144, 64, 2048, 51200, std::nullopt},
    // 175B (GPT-3): 96 layers, h 12288, 96 heads.
    {"gpt3-175b", kKorthikantiTable3, 96, 12288, 96, 2048, 51200, std::nullopt},
    // 530B (MT-NLG): 105 layers, h 20480, 128 heads.
    {"mt-nlg-530b", kKorthikantiTable3, 105, 20480, 128, 2048, 51200, std::nullopt},
    // 1T: 128 layers, h 25600, 160 heads.
    {"gpt-1t", kKorthikantiTable3, 128, 25600, 160, 2048, 51200, std::nullopt},
}};

} // namespace

std::span<const ModelPreset> model_presets() {
    return kPresets;
}

const ModelPreset *find_model_preset(std::string_view name) {
    for (const auto &preset : kPresets) {
        if (preset.name == name) {
            return &preset;
        }
    }
    return nullptr;
}

std::vector<std::string> model_preset_names() {
    std::vector<std::string> names;
    for (const auto &preset : kPresets) {
        names.emplace_back(preset.name);
    }
    return names;
}

} // namespace trainsim::config
