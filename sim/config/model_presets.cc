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

// Today's dense models, as their papers give the shapes and Megatron-Core / NeMo configure the layer:
// grouped-query attention, SwiGLU (Llama) or squared-ReLU (Nemotron-4, modelled as the same
// memory-bound kernel as GeLU: same bytes, same GEMMs), RMSNorm (Llama) or LayerNorm (Nemotron-4), RoPE,
// untied embeddings and no linear biases. The vocabulary is the tokenizer's; Megatron pads it further to
// a multiple of 128·TP where that does not divide it.
constexpr std::string_view kLlama2 =
    "Touvron et al. 2023, arXiv 2307.09288, Table 1 and §2.2; sizes from the released params (HF config)";
constexpr std::string_view kLlama3 = "Llama Team 2024, The Llama 3 Herd of Models, arXiv 2407.21783, Table 3";
constexpr std::string_view kNemotron15 = "Parmar et al. 2024, Nemotron-4 15B, arXiv 2402.16819, Table 1";
constexpr std::string_view kNemotron340 = "NVIDIA 2024, Nemotron-4 340B, arXiv 2406.11704, Table 1";
constexpr std::string_view kNemotron3 =
    "NeMo Nemotron3Config8B / Nemotron3Config22B (nemo/collections/llm/gpt/model/nemotron.py): multi-head "
    "attention, ffn 4h, the Nemotron layer of NemotronConfig; vocabulary 256000 (Nemotron's tokenizer)";
constexpr std::string_view kNemoGpt3 =
    "NeMo GPTConfig5B / GPTConfig20B (nemo/collections/llm/gpt/model/base.py); vocabulary 51200 as in "
    "the Megatron papers";

// Mixture-of-experts models, shapes from each model's paper and released config (HF config.json); the
// parameter counts they publish are checked in tests/moe_model_test.cc.
constexpr std::string_view kMixtral8x7b =
    "Jiang et al. 2024, Mixtral of Experts, arXiv 2401.04088, Table 1 (46.7B total, 12.9B active); "
    "vocabulary 32000 (HF mistralai/Mixtral-8x7B-v0.1 config)";
constexpr std::string_view kMixtral8x22b =
    "Mistral AI 2024, Mixtral 8x22B release (141B total, 39B active); shapes and vocabulary 32768 from HF "
    "mistralai/Mixtral-8x22B-v0.1 config";
constexpr std::string_view kDeepSeekV3 =
    "DeepSeek-AI 2024, DeepSeek-V3 Technical Report, arXiv 2412.19437, §4.2 (61 layers, h 7168, 128 heads, "
    "MLA ranks 1536/512, head dims 128+64, v 128; first 3 layers dense (ffn 18432), then 1 shared + 256 "
    "routed experts of 2048, top-8; one MTP module; 671B total, 37B active); vocabulary 129280 (HF config)";
constexpr std::string_view kQwen3 =
    "Qwen Team 2025, Qwen3 Technical Report, arXiv 2505.09388, Table 2 (128 experts, top-8, no shared "
    "expert, QK-norm); widths, head dim 128 and vocabulary 151936 from the HF Qwen/Qwen3-30B-A3B and "
    "Qwen3-235B-A22B configs";

// Mistral/Qwen-style MoE layer: the Llama layer (GQA, SwiGLU, RMSNorm, RoPE, untied, no biases) with
// every MLP an MoE MLP of `experts` experts of width `moe_ffn`, each token to `topk` of them.
constexpr ModelPreset moe_llama(std::string_view name, std::string_view source, std::int64_t layers,
                                std::int64_t hidden, std::int64_t heads, std::int64_t groups,
                                std::int64_t vocab, std::int64_t ffn, std::optional<std::int64_t> kv_channels,
                                bool qk_layernorm, std::int64_t experts, std::int64_t topk,
                                std::int64_t moe_ffn) {
    ModelPreset p{name,
                  source,
                  layers,
                  hidden,
                  heads,
                  4096,
                  vocab,
                  ffn,
                  groups,
                  /*swiglu=*/true,
                  /*rmsnorm=*/true,
                  /*rope=*/true,
                  /*untie=*/true,
                  /*add_bias_linear=*/false};
    p.kv_channels = kv_channels;
    p.qk_layernorm = qk_layernorm;
    p.moe = PresetMoe{experts, topk, moe_ffn, 0, 0};
    return p;
}

constexpr ModelPreset deepseek_v3() {
    ModelPreset p{"deepseek-v3",
                  kDeepSeekV3,
                  61,
                  7168,
                  128,
                  4096,
                  129280,
                  18432,
                  std::nullopt,
                  /*swiglu=*/true,
                  /*rmsnorm=*/true,
                  /*rope=*/true,
                  /*untie=*/true,
                  /*add_bias_linear=*/false};
    p.moe = PresetMoe{256, 8, 2048, 2048, 3};
    p.mla = PresetMla{1536, 512, 128, 64, 128};
    p.mtp_num_layers = 1;
    return p;
}

constexpr ModelPreset llama(std::string_view name, std::string_view source, std::int64_t layers,
                            std::int64_t hidden, std::int64_t heads, std::int64_t seq, std::int64_t vocab,
                            std::int64_t ffn, std::optional<std::int64_t> groups) {
    return {name,
            source,
            layers,
            hidden,
            heads,
            seq,
            vocab,
            ffn,
            groups,
            /*swiglu=*/true,
            /*rmsnorm=*/true,
            /*rope=*/true,
            /*untie=*/true,
            /*add_bias_linear=*/false};
}

constexpr ModelPreset nemotron4(std::string_view name, std::string_view source, std::int64_t layers,
                                std::int64_t hidden, std::int64_t heads, std::optional<std::int64_t> groups) {
    return {name,
            source,
            layers,
            hidden,
            heads,
            4096,
            256000,
            4 * hidden,
            groups,
            /*swiglu=*/false,
            /*rmsnorm=*/false,
            /*rope=*/true,
            /*untie=*/true,
            /*add_bias_linear=*/false};
}

constexpr std::array<ModelPreset, 25> kPresets{{
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
    {"gpt3-5b", kNemoGpt3, 24, 4096, 32, 2048, 51200, std::nullopt},
    {"gpt3-20b", kNemoGpt3, 44, 6144, 48, 2048, 51200, std::nullopt},
    llama("llama2-7b", kLlama2, 32, 4096, 32, 4096, 32000, 11008, std::nullopt),
    llama("llama2-13b", kLlama2, 40, 5120, 40, 4096, 32000, 13824, std::nullopt),
    llama("llama2-70b", kLlama2, 80, 8192, 64, 4096, 32000, 28672, 8),
    llama("llama3-8b", kLlama3, 32, 4096, 32, 8192, 128256, 14336, 8),
    llama("llama3-70b", kLlama3, 80, 8192, 64, 8192, 128256, 28672, 8),
    llama("llama3.1-405b", kLlama3, 126, 16384, 128, 8192, 128256, 53248, 8),
    nemotron4("nemotron4-15b", kNemotron15, 32, 6144, 48, 8),
    nemotron4("nemotron4-340b", kNemotron340, 96, 18432, 96, 8),
    // The Nemotron-3 sizes NeMo's performance table runs (Nemotron-8B, Nemotron-22B): the same layer as
    // Nemotron-4 with one key/value head per query head.
    nemotron4("nemotron3-8b", kNemotron3, 32, 4096, 32, std::nullopt),
    nemotron4("nemotron3-22b", kNemotron3, 40, 6144, 48, std::nullopt),
    moe_llama("mixtral-8x7b", kMixtral8x7b, 32, 4096, 32, 8, 32000, 14336, std::nullopt, false, 8, 2, 14336),
    moe_llama("mixtral-8x22b", kMixtral8x22b, 56, 6144, 48, 8, 32768, 16384, std::nullopt, false, 8, 2,
              16384),
    deepseek_v3(),
    moe_llama("qwen3-30b-a3b", kQwen3, 48, 2048, 32, 4, 151936, 6144, 128, true, 128, 8, 768),
    moe_llama("qwen3-235b-a22b", kQwen3, 94, 4096, 64, 4, 151936, 12288, 128, true, 128, 8, 1536),
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
