// Scenario loading (sim/config): the shipped scenarios, defaults, presets, overrides and enum names.
// The rejected inputs are in config_errors_test.cc.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "sim/config/model_presets.h"
#include "sim/config/scenario.h"
#include "sim/config/scenario_schema.h"
#include "sim/core/input_error.h"

namespace trainsim::config {
namespace {

std::string scenario_path(const std::string& file) {
    return std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/" + file;
}

// Only the required keys; everything else takes its default.
constexpr const char* kMinimal = R"({
  "model": {"num_layers": 24, "hidden_size": 1024, "num_attention_heads": 16,
            "seq_length": 2048, "padded_vocab_size": 51200},
  "parallelism": {"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 4},
  "training": {"micro_batch_size": 1, "global_batch_size": 8},
  "hardware": {"profile": "a100-80gb-selene"}
})";

Scenario parse_minimal(const std::vector<Override>& overrides = {}) {
    return parse_scenario(kMinimal, "minimal", overrides);
}

Override set(const std::string& text) {
    return parse_override(text);
}

// --- shipped scenarios (papers.md §1.5, Korthikanti Table 3; DESIGN.md §4) ---

void expect_model(const ModelConfig& m, std::int64_t layers, std::int64_t hidden, std::int64_t heads) {
    EXPECT_EQ(m.num_layers, layers);
    EXPECT_EQ(m.hidden_size, hidden);
    EXPECT_EQ(m.num_attention_heads, heads);
    EXPECT_EQ(m.ffn_hidden_size, 4 * hidden);
    EXPECT_EQ(m.seq_length, 2048);
    EXPECT_EQ(m.padded_vocab_size, 51200);
}

void expect_selene(const Scenario& s) {
    EXPECT_EQ(s.hardware.profile, "a100-80gb-selene");
    EXPECT_EQ(s.hardware.gpus_per_node, 8);
    EXPECT_FALSE(s.training.use_distributed_optimizer);
    EXPECT_FALSE(s.training.overlap_grad_reduce);
    EXPECT_EQ(s.schedule, ScheduleKind::Auto);
}

TEST(ShippedScenarios, Korthikanti22bIsTheTable4Baseline) {
    const Scenario s = load_scenario(scenario_path("korthikanti-22b.json"));
    EXPECT_EQ(s.name, "korthikanti-22b");
    expect_model(s.model, 48, 6144, 64);
    EXPECT_EQ(s.parallelism.tensor_model_parallel_size, 8);
    EXPECT_EQ(s.parallelism.pipeline_model_parallel_size, 1);
    EXPECT_EQ(s.parallelism.data_parallel_size, 1);
    EXPECT_EQ(s.parallelism.virtual_pipeline_model_parallel_size, 1);
    EXPECT_FALSE(s.parallelism.sequence_parallel);
    EXPECT_EQ(s.training.micro_batch_size, 4);
    EXPECT_EQ(s.training.global_batch_size, 4);
    EXPECT_EQ(s.training.recompute_granularity, RecomputeGranularity::None);
    EXPECT_FALSE(s.training.recompute_method.has_value());
    EXPECT_FALSE(s.training.recompute_num_layers.has_value());
    EXPECT_EQ(s.num_gpus(), 8);
    EXPECT_EQ(s.num_microbatches(), 1);
    EXPECT_EQ(s.resolved_schedule(), ScheduleKind::OneFOneB);
    expect_selene(s);
}

TEST(ShippedScenarios, Korthikanti175bIsInterleavedWithThreeChunks) {
    const Scenario s = load_scenario(scenario_path("korthikanti-175b.json"));
    expect_model(s.model, 96, 12288, 96);
    EXPECT_EQ(s.parallelism.tensor_model_parallel_size, 8);
    EXPECT_EQ(s.parallelism.pipeline_model_parallel_size, 8);
    EXPECT_EQ(s.parallelism.virtual_pipeline_model_parallel_size, 3);
    EXPECT_TRUE(s.parallelism.sequence_parallel);
    EXPECT_EQ(s.training.micro_batch_size, 1);
    EXPECT_EQ(s.training.global_batch_size, 64);
    EXPECT_EQ(s.training.recompute_granularity, RecomputeGranularity::Selective);
    EXPECT_EQ(s.num_gpus(), 64);
    EXPECT_EQ(s.num_microbatches(), 64);
    EXPECT_EQ(s.resolved_schedule(), ScheduleKind::Interleaved);
    expect_selene(s);
}

TEST(ShippedScenarios, Korthikanti530bHasOneLayerPerChunk) {
    const Scenario s = load_scenario(scenario_path("korthikanti-530b.json"));
    expect_model(s.model, 105, 20480, 128);
    EXPECT_EQ(s.parallelism.pipeline_model_parallel_size, 35);
    EXPECT_EQ(s.parallelism.virtual_pipeline_model_parallel_size, 3);
    EXPECT_EQ(s.model.num_layers / (35 * 3), 1);
    EXPECT_TRUE(s.parallelism.sequence_parallel);
    EXPECT_EQ(s.training.recompute_granularity, RecomputeGranularity::Selective);
    EXPECT_EQ(s.num_gpus(), 280);
    EXPECT_EQ(s.num_microbatches(), 280);
    EXPECT_EQ(s.resolved_schedule(), ScheduleKind::Interleaved);
    expect_selene(s);
}

TEST(ShippedScenarios, Korthikanti1tIsNotInterleaved) {
    const Scenario s = load_scenario(scenario_path("korthikanti-1t.json"));
    expect_model(s.model, 128, 25600, 160);
    EXPECT_EQ(s.parallelism.pipeline_model_parallel_size, 64);
    EXPECT_EQ(s.parallelism.virtual_pipeline_model_parallel_size, 1);
    EXPECT_TRUE(s.parallelism.sequence_parallel);
    EXPECT_EQ(s.training.recompute_granularity, RecomputeGranularity::Selective);
    EXPECT_EQ(s.num_gpus(), 512);
    EXPECT_EQ(s.num_microbatches(), 512);
    EXPECT_EQ(s.resolved_schedule(), ScheduleKind::OneFOneB);
    expect_selene(s);
}

TEST(ShippedScenarios, MtNlgIsTheDesignExample) {
    const Scenario s = load_scenario(scenario_path("mt-nlg-530b-2240gpu.json"));
    EXPECT_EQ(s.name, "mt-nlg-530b-2240gpu");
    expect_model(s.model, 105, 20480, 128);
    EXPECT_EQ(s.model.preset, "");
    EXPECT_EQ(s.parallelism.tensor_model_parallel_size, 8);
    EXPECT_EQ(s.parallelism.pipeline_model_parallel_size, 35);
    EXPECT_EQ(s.parallelism.data_parallel_size, 8);
    EXPECT_EQ(s.parallelism.virtual_pipeline_model_parallel_size, 3);
    EXPECT_TRUE(s.parallelism.sequence_parallel);
    EXPECT_EQ(s.training.micro_batch_size, 1);
    EXPECT_EQ(s.training.global_batch_size, 2240);
    EXPECT_EQ(s.training.recompute_granularity, RecomputeGranularity::Selective);
    EXPECT_FALSE(s.training.recompute_method.has_value());
    EXPECT_FALSE(s.training.recompute_num_layers.has_value());
    EXPECT_EQ(s.num_gpus(), 2240);
    EXPECT_EQ(s.num_microbatches(), 280);
    EXPECT_EQ(s.resolved_schedule(), ScheduleKind::Interleaved);
    expect_selene(s);
}

TEST(ShippedScenarios, EveryTopLevelScenarioFileLoads) {
    int count = 0;
    for (const auto& entry :
         std::filesystem::directory_iterator(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios")) {
        if (entry.path().extension() == ".json") {
            SCOPED_TRACE(entry.path().string());
            const Scenario s = load_scenario(entry.path().string());
            EXPECT_EQ(s.name, entry.path().stem().string()) << "a file's name should match its stem";
            ++count;
        }
    }
    EXPECT_GE(count, 5);
}

// --- defaults ---

TEST(ScenarioDefaults, OptionalKeysTakeMegatronDefaults) {
    const Scenario s = parse_minimal();
    EXPECT_EQ(s.name, "minimal");
    EXPECT_EQ(s.model.preset, "");
    EXPECT_EQ(s.model.ffn_hidden_size, 4 * 1024);
    EXPECT_EQ(s.parallelism.data_parallel_size, 1);
    EXPECT_EQ(s.parallelism.virtual_pipeline_model_parallel_size, 1);
    EXPECT_FALSE(s.parallelism.sequence_parallel);
    EXPECT_EQ(s.training.recompute_granularity, RecomputeGranularity::None);
    EXPECT_FALSE(s.training.recompute_method.has_value());
    EXPECT_FALSE(s.training.recompute_num_layers.has_value());
    EXPECT_FALSE(s.training.use_distributed_optimizer);
    EXPECT_FALSE(s.training.overlap_grad_reduce);
    EXPECT_EQ(s.schedule, ScheduleKind::Auto);
    EXPECT_EQ(s.resolved_schedule(), ScheduleKind::OneFOneB);
    EXPECT_EQ(s.hardware.gpus_per_node, 8);
    EXPECT_EQ(s.num_gpus(), 8);
    EXPECT_EQ(s.num_microbatches(), 8);
}

TEST(ScenarioDefaults, NullMeansTheDefaultWhereAllowed) {
    const Scenario s =
        parse_minimal({set("parallelism.virtual_pipeline_model_parallel_size=null"),
                       set("training.recompute_granularity=null"), set("training.recompute_method=null"),
                       set("training.recompute_num_layers=null")});
    EXPECT_EQ(s.parallelism.virtual_pipeline_model_parallel_size, 1);
    EXPECT_EQ(s.training.recompute_granularity, RecomputeGranularity::None);
    EXPECT_FALSE(s.training.recompute_method.has_value());
    EXPECT_FALSE(s.training.recompute_num_layers.has_value());
}

TEST(ScenarioDefaults, NameComesFromTheFileStemWhenAbsent) {
    const std::filesystem::path file = std::filesystem::path(::testing::TempDir()) / "my-what-if.json";
    {
        std::ofstream out(file);
        out << kMinimal;
    }
    const Scenario s = load_scenario(file.string());
    std::filesystem::remove(file);
    EXPECT_EQ(s.name, "my-what-if");
}

TEST(ScenarioDefaults, ExplicitNameWins) {
    EXPECT_EQ(parse_minimal({set("name=custom")}).name, "custom");
}

TEST(ScenarioDefaults, FullRecomputeAloneMeansUniformEveryLayer) {
    const Scenario s = parse_minimal({set("training.recompute_granularity=full")});
    EXPECT_EQ(s.training.recompute_granularity, RecomputeGranularity::Full);
    EXPECT_EQ(s.training.recompute_method, RecomputeMethod::Uniform);
    EXPECT_EQ(s.training.recompute_num_layers, 1);
}

TEST(ScenarioDefaults, FullRecomputeWithOnlyALayerCountIsUniform) {
    const Scenario s =
        parse_minimal({set("training.recompute_granularity=full"), set("training.recompute_num_layers=3")});
    EXPECT_EQ(s.training.recompute_method, RecomputeMethod::Uniform);
    EXPECT_EQ(s.training.recompute_num_layers, 3);
}

TEST(ScenarioDefaults, FullBlockRecomputeKeepsItsLayerCount) {
    const Scenario s =
        parse_minimal({set("training.recompute_granularity=full"), set("training.recompute_method=block"),
                       set("training.recompute_num_layers=6")});
    EXPECT_EQ(s.training.recompute_method, RecomputeMethod::Block);
    EXPECT_EQ(s.training.recompute_num_layers, 6);  // all 24 / 4 layers of the stage
}

TEST(ScenarioDefaults, ExplicitFfnHiddenSizeIsKept) {
    EXPECT_EQ(parse_minimal({set("model.ffn_hidden_size=2816")}).model.ffn_hidden_size, 2816);
}

// --- presets ---

constexpr const char* kPresetScenario = R"({
  "model": {"preset": "gpt3-175b"},
  "parallelism": {"tensor_model_parallel_size": 8, "pipeline_model_parallel_size": 8},
  "training": {"micro_batch_size": 1, "global_batch_size": 64},
  "hardware": {"profile": "a100-80gb-selene"}
})";

TEST(ModelPresets, PresetGivesEveryModelSize) {
    const Scenario s = parse_scenario(kPresetScenario, "preset");
    EXPECT_EQ(s.model.preset, "gpt3-175b");
    expect_model(s.model, 96, 12288, 96);
}

TEST(ModelPresets, ExplicitKeysBesideThePresetOverrideIt) {
    const Scenario s = parse_scenario(R"({
      "model": {"preset": "gpt-22b", "num_layers": 8, "seq_length": 4096},
      "parallelism": {"tensor_model_parallel_size": 8, "pipeline_model_parallel_size": 1},
      "training": {"micro_batch_size": 1, "global_batch_size": 1},
      "hardware": {"profile": "a100-80gb-selene"}
    })",
                                      "preset");
    EXPECT_EQ(s.model.preset, "gpt-22b");
    EXPECT_EQ(s.model.num_layers, 8);
    EXPECT_EQ(s.model.seq_length, 4096);
    EXPECT_EQ(s.model.hidden_size, 6144);
    EXPECT_EQ(s.model.num_attention_heads, 64);
}

TEST(ModelPresets, OverridingHiddenSizeScalesTheDefaultFfn) {
    const Scenario s = parse_scenario(kPresetScenario, "preset", {set("model.hidden_size=6144")});
    EXPECT_EQ(s.model.hidden_size, 6144);
    EXPECT_EQ(s.model.ffn_hidden_size, 4 * 6144);
}

TEST(ModelPresets, KorthikantiPresetsMatchTheShippedScenarios) {
    const std::pair<const char*, const char*> pairs[] = {{"gpt-22b", "korthikanti-22b.json"},
                                                         {"gpt3-175b", "korthikanti-175b.json"},
                                                         {"mt-nlg-530b", "korthikanti-530b.json"},
                                                         {"gpt-1t", "korthikanti-1t.json"}};
    for (const auto& [preset, file] : pairs) {
        SCOPED_TRACE(preset);
        const Scenario from_file = load_scenario(scenario_path(file));
        const Scenario from_preset =
            load_scenario(scenario_path(file), {set(std::string("model={\"preset\": \"") + preset + "\"}")});
        EXPECT_EQ(from_preset.model.preset, preset);
        EXPECT_EQ(from_preset.model.num_layers, from_file.model.num_layers);
        EXPECT_EQ(from_preset.model.hidden_size, from_file.model.hidden_size);
        EXPECT_EQ(from_preset.model.num_attention_heads, from_file.model.num_attention_heads);
        EXPECT_EQ(from_preset.model.ffn_hidden_size, from_file.model.ffn_hidden_size);
        EXPECT_EQ(from_preset.model.seq_length, from_file.model.seq_length);
        EXPECT_EQ(from_preset.model.padded_vocab_size, from_file.model.padded_vocab_size);
    }
}

TEST(ModelPresets, EveryPresetIsListedWithItsSource) {
    // Korthikanti Table 3 (4), Brown et al. Table 2.1 (4), NeMo GPT-3 (2), Llama 2 (3), Llama 3 (3),
    // Nemotron-4 (2), Nemotron-3 as NeMo configures it (2), mixture of experts: Mixtral (2), DeepSeek-V3,
    // Qwen3 MoE (2).
    EXPECT_EQ(model_presets().size(), 25U);
    for (const auto& p : model_presets()) {
        EXPECT_EQ(find_model_preset(p.name), &p);
        EXPECT_FALSE(p.source.empty());
    }
    EXPECT_EQ(find_model_preset("gpt-175b"), nullptr);
}

// --- overrides ---

TEST(Overrides, ParseSplitsAtTheFirstEquals) {
    const Override o = parse_override("name=a=b");
    EXPECT_EQ(o.key, "name");
    EXPECT_EQ(o.value, "a=b");
    const Override empty = parse_override("name=");
    EXPECT_EQ(empty.key, "name");
    EXPECT_EQ(empty.value, "");
}

TEST(Overrides, ScalarOverrideReplacesTheFileValue) {
    const Scenario s =
        load_scenario(scenario_path("mt-nlg-530b-2240gpu.json"), {set("parallelism.data_parallel_size=16")});
    EXPECT_EQ(s.parallelism.data_parallel_size, 16);
    EXPECT_EQ(s.num_gpus(), 4480);
    EXPECT_EQ(s.num_microbatches(), 140);
}

TEST(Overrides, TextThatIsNotJsonIsAString) {
    const Scenario s = load_scenario(scenario_path("korthikanti-1t.json"),
                                     {set("schedule=gpipe"), set("hardware.profile=h100-80gb-sxm")});
    EXPECT_EQ(s.schedule, ScheduleKind::GPipe);
    EXPECT_EQ(s.resolved_schedule(), ScheduleKind::GPipe);
    EXPECT_EQ(s.hardware.profile, "h100-80gb-sxm");
    // A JSON string literal is the same string.
    EXPECT_EQ(parse_minimal({set("schedule=\"1f1b\"")}).schedule, ScheduleKind::OneFOneB);
}

TEST(Overrides, BooleanAndNullValuesAreJson) {
    const Scenario s =
        load_scenario(scenario_path("korthikanti-22b.json"), {set("parallelism.sequence_parallel=true"),
                                                              set("training.use_distributed_optimizer=true"),
                                                              set("training.recompute_granularity=null")});
    EXPECT_TRUE(s.parallelism.sequence_parallel);
    EXPECT_TRUE(s.training.use_distributed_optimizer);
    EXPECT_EQ(s.training.recompute_granularity, RecomputeGranularity::None);
}

TEST(Overrides, KeyAbsentFromTheFileCanBeSet) {
    const Scenario s =
        parse_minimal({set("training.recompute_granularity=selective"), set("hardware.gpus_per_node=4")});
    EXPECT_EQ(s.training.recompute_granularity, RecomputeGranularity::Selective);
    EXPECT_EQ(s.hardware.gpus_per_node, 4);
}

TEST(Overrides, WholeSectionCanBeReplacedWithAnObject) {
    const Scenario s =
        parse_minimal({set(R"(model={"preset": "gpt-22b"})"), set("parallelism.tensor_model_parallel_size=8"),
                       set("parallelism.pipeline_model_parallel_size=4")});
    EXPECT_EQ(s.model.preset, "gpt-22b");
    EXPECT_EQ(s.model.num_layers, 48);
}

TEST(Overrides, NumLayersOnAPresetModel) {
    const Scenario s = parse_scenario(kPresetScenario, "preset", {set("model.num_layers=48")});
    EXPECT_EQ(s.model.preset, "gpt3-175b");
    EXPECT_EQ(s.model.num_layers, 48);
    EXPECT_EQ(s.model.hidden_size, 12288);
}

TEST(Overrides, MissingSectionIsCreated) {
    const Scenario s = parse_scenario(R"({
      "model": {"preset": "gpt-22b"},
      "parallelism": {"tensor_model_parallel_size": 8, "pipeline_model_parallel_size": 1},
      "training": {"micro_batch_size": 1, "global_batch_size": 1}
    })",
                                      "no-hardware", {set("hardware.profile=a100-80gb-selene")});
    EXPECT_EQ(s.hardware.profile, "a100-80gb-selene");
}

TEST(Overrides, LaterOverrideWins) {
    const Scenario s =
        parse_minimal({set("parallelism.data_parallel_size=2"), set("parallelism.data_parallel_size=4")});
    EXPECT_EQ(s.parallelism.data_parallel_size, 4);
}

TEST(Overrides, KeyIsTrimmed) {
    EXPECT_EQ(parse_override(" parallelism.data_parallel_size =2").key, "parallelism.data_parallel_size");
}

// --- enum names and the schedule actually run ---

TEST(ScenarioEnums, ToStringUsesTheJsonSpelling) {
    EXPECT_STREQ(to_string(RecomputeGranularity::None), "none");
    EXPECT_STREQ(to_string(RecomputeGranularity::Full), "full");
    EXPECT_STREQ(to_string(RecomputeGranularity::Selective), "selective");
    EXPECT_STREQ(to_string(RecomputeGranularity::Overlapped), "overlapped");
    EXPECT_STREQ(to_string(RecomputeMethod::Uniform), "uniform");
    EXPECT_STREQ(to_string(RecomputeMethod::Block), "block");
    EXPECT_STREQ(to_string(ScheduleKind::Auto), "auto");
    EXPECT_STREQ(to_string(ScheduleKind::GPipe), "gpipe");
    EXPECT_STREQ(to_string(ScheduleKind::OneFOneB), "1f1b");
    EXPECT_STREQ(to_string(ScheduleKind::Interleaved), "interleaved");
}

TEST(ScenarioEnums, EveryGranularityAndScheduleRoundTrips) {
    for (const char* g : {"none", "full", "selective", "overlapped"}) {
        EXPECT_STREQ(to_string(parse_minimal({set(std::string("training.recompute_granularity=") + g)})
                                   .training.recompute_granularity),
                     g);
    }
    for (const char* sched : {"auto", "gpipe", "1f1b"}) {
        EXPECT_STREQ(to_string(parse_minimal({set(std::string("schedule=") + sched)}).schedule), sched);
    }
}

TEST(ScenarioEnums, AutoResolvesByVirtualPipelineSize) {
    Scenario s = parse_minimal();
    EXPECT_EQ(s.resolved_schedule(), ScheduleKind::OneFOneB);
    s.parallelism.virtual_pipeline_model_parallel_size = 3;
    EXPECT_EQ(s.resolved_schedule(), ScheduleKind::Interleaved);
    s.schedule = ScheduleKind::GPipe;
    EXPECT_EQ(s.resolved_schedule(), ScheduleKind::GPipe);
}

TEST(ScenarioEnums, ExplicitInterleavedScheduleLoads) {
    const Scenario s = load_scenario(scenario_path("korthikanti-175b.json"), {set("schedule=interleaved")});
    EXPECT_EQ(s.schedule, ScheduleKind::Interleaved);
    EXPECT_EQ(s.resolved_schedule(), ScheduleKind::Interleaved);
}

TEST(ScenarioValidation, BuiltInCodeIsValidatedTheSameWay) {
    Scenario s = parse_minimal();
    EXPECT_NO_THROW(validate_scenario(s));
    s.parallelism.tensor_model_parallel_size = 3;
    EXPECT_THROW(validate_scenario(s), InputError);
}

TEST(ScenarioSchema, EveryKeyHasARowInTheScenarioReference) {
    // scenarios/README.md is where users look a key up: a key the reader accepts but the table does not
    // list is undocumented behaviour.
    std::ifstream in(scenario_path("README.md"));
    ASSERT_TRUE(in) << "scenarios/README.md";
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const SectionSchema& section : scenario_sections()) {
        for (const std::string& key : section.keys) {
            const std::string row = "| `" + std::string(section.name) + "." + key + "` |";
            EXPECT_NE(text.find(row), std::string::npos) << "no row " << row << " in scenarios/README.md";
        }
    }
}

}  // namespace
}  // namespace trainsim::config
