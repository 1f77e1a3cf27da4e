#include "sim/config/model_presets.h"

#include <array>

namespace trainsim::config {

namespace {

// Korthikanti et al. 2022 (arXiv 2205.05198), Table 3, with the text's s = 2048, v = 51200 and an MLP
// of 4h (shared/reference/papers.md §1.5). Narayanan et al. 2021 Table 1 is not in the reference
// (papers.md §2.3 keeps it out as a held-out check), so its configurations are not presets.
constexpr std::string_view kKorthikantiTable3 = "Korthikanti et al. 2022, arXiv 2205.05198, Table 3";

// Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1 (n_layers, d_model, n_heads); the
// GPT sizes between 1.3B and 23B that Lynx (arXiv 2406.08756) evaluates on. Two rows of that table are not
// self-consistent and are taken as Megatron-LM's GPT-3 configurations do: 1.3B lists 24 heads of 128
// with d_model 2048 (here 16 heads of 128), and 13B lists d_model 5140 for 40 heads (here 5120).
constexpr std::string_view kBrownTable21 = "Brown et al. 2020, arXiv 2005.14165, Table 2.1";

constexpr std::array<ModelPreset, 8> kPresets{{
    // 22B: 48 layers, h 6144, 64 heads.
    {"gpt-22b", kKorthikantiTable3, 48, 6144, 64, 2048, 51200, std::nullopt},
    // 175B (GPT-3): 96 layers, h 12288, 96 heads.
    {"gpt3-175b", kKorthikantiTable3, 96, 12288, 96, 2048, 51200, std::nullopt},
    // 530B (MT-NLG): 105 layers, h 20480, 128 heads.
    {"mt-nlg-530b", kKorthikantiTable3, 105, 20480, 128, 2048, 51200, std::nullopt},
    // 1T: 128 layers, h 25600, 160 heads.
    {"gpt-1t", kKorthikantiTable3, 128, 25600, 160, 2048, 51200, std::nullopt},
    {"gpt3-1.3b", kBrownTable21, 24, 2048, 16, 2048, 51200, std::nullopt},
    {"gpt3-2.7b", kBrownTable21, 32, 2560, 32, 2048, 51200, std::nullopt},
    {"gpt3-6.7b", kBrownTable21, 32, 4096, 32, 2048, 51200, std::nullopt},
    {"gpt3-13b", kBrownTable21, 40, 5120, 40, 2048, 51200, std::nullopt},
}};

}  // namespace

std::span<const ModelPreset> model_presets() {
    return kPresets;
}

const ModelPreset* find_model_preset(std::string_view name) {
    for (const auto& preset : kPresets) {
        if (preset.name == name) {
            return &preset;
        }
    }
    return nullptr;
}

std::vector<std::string> model_preset_names() {
    std::vector<std::string> names;
    for (const auto& preset : kPresets) {
        names.emplace_back(preset.name);
    }
    return names;
}

}  // namespace trainsim::config
