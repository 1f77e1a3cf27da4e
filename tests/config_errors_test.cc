// Rejected scenarios (sim/config): each case asserts that the one-line InputError names the key and the
// rule (DESIGN.md §5), so a user can fix the file from the message alone.
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"
#include "sim/core/input_error.h"

namespace trainsim::config {
namespace {

using nlohmann::json;

// A valid scenario that each case breaks in one place: t=2, p=4, 24 layers, 8 micro-batches.
json base() {
    return json::parse(R"({
      "model": {"num_layers": 24, "hidden_size": 1024, "num_attention_heads": 16,
                "seq_length": 2048, "padded_vocab_size": 51200},
      "parallelism": {"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 4},
      "training": {"micro_batch_size": 1, "global_batch_size": 8},
      "hardware": {"profile": "a100-80gb-selene"}
    })");
}

// `base()` with `section.key` set to `value` (a null `value` removes the key).
json with(const std::string& section, const std::string& key, const json& value, json doc = base()) {
    if (value.is_null()) {
        doc[section].erase(key);
    } else {
        doc[section][key] = value;
    }
    return doc;
}

// Asserts that parsing `text` throws InputError whose one-line message contains every one of `parts`.
void expect_error(const std::string& text, std::initializer_list<std::string_view> parts,
                  const std::vector<Override>& overrides = {}) {
    try {
        (void)parse_scenario(text, "scenario.json", overrides);
        ADD_FAILURE() << "no InputError for:\n" << text;
    } catch (const InputError& e) {
        const std::string message = e.what();
        EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
        for (const auto part : parts) {
            EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nlacks: " << part;
        }
    }
}

void expect_error(const json& doc, std::initializer_list<std::string_view> parts,
                  const std::vector<Override>& overrides = {}) {
    expect_error(doc.dump(2), parts, overrides);
}

TEST(ScenarioErrors, BaseScenarioIsValid) {
    EXPECT_NO_THROW((void)parse_scenario(base().dump(), "base"));
}

// --- malformed JSON: the position is line and column, not nlohmann's byte offset ---

TEST(ScenarioErrors, MalformedJsonGivesLineAndColumn) {
    // nlohmann stops at the end of the offending token: the "4" of "24", column 19.
    expect_error(std::string("{\n  \"model\": {\n    \"num_layers\" 24\n"),
                 {"scenario.json: invalid JSON at line 3, column 19: ", "syntax error"});
}

TEST(ScenarioErrors, TrailingCommaGivesItsColumn) {
    expect_error(std::string(R"({"name": "x",})"), {"scenario.json: invalid JSON at line 1, column 14: "});
}

TEST(ScenarioErrors, TruncatedFileIsAnUnexpectedEnd) {
    expect_error(std::string("{\n"), {"invalid JSON at line 2, column 1: ", "unexpected end of input"});
    expect_error(std::string(""), {"invalid JSON at line 1, column 1: ", "unexpected end of input"});
}

TEST(ScenarioErrors, NewlineInsideAStringIsReportedOnItsOwnLine) {
    expect_error(std::string("{\"name\":\n\"abc\ndef\"}"),
                 {"invalid JSON at line 2, column 5: ", "control character"});
}

TEST(ScenarioErrors, TopLevelMustBeAnObject) {
    expect_error(std::string("[1, 2]"),
                 {"scenario.json: expected a JSON object at the top level, got [1,2]"});
}

TEST(ScenarioErrors, DuplicateKeyIsAnError) {
    expect_error(std::string(R"({"model": {"num_layers": 24, "num_layers": 48}})"),
                 {"model.num_layers: duplicate key"});
}

// --- unknown keys ---

TEST(ScenarioErrors, UnknownKeySuggestsTheClosest) {
    json doc = base();
    doc["model"]["hiden_size"] = 1024;
    expect_error(doc, {"model.hiden_size: unknown key (did you mean model.hidden_size?)"});
}

TEST(ScenarioErrors, UnknownSectionSuggestsTheClosest) {
    json doc = base();
    doc["paralelism"] = doc["parallelism"];
    doc.erase("parallelism");
    expect_error(doc, {"paralelism: unknown key (did you mean parallelism?)"});
}

TEST(ScenarioErrors, KeyInTheWrongSectionSuggestsItsSection) {
    json doc = base();
    doc["num_layers"] = 24;
    expect_error(doc, {"num_layers: unknown key (did you mean model.num_layers?)"});
    expect_error(with("model", "micro_batch_size", 1), {"model.micro_batch_size: unknown key (did you mean "
                                                        "training.micro_batch_size?)"});
}

TEST(ScenarioErrors, UnknownKeyWithNothingCloseListsTheKeys) {
    expect_error(with("hardware", "interconnect", "nvlink"),
                 {"hardware.interconnect: unknown key (expected one of: profile, gpus_per_node, "
                  "network_model, collective_contention, compute_contention, topology)"});
}

// --- types ---

TEST(ScenarioErrors, IntegerGivenAsStringIsRejected) {
    expect_error(with("training", "micro_batch_size", "4"),
                 {"training.micro_batch_size: expected a positive integer, got \"4\""});
}

TEST(ScenarioErrors, FractionalIntegerIsRejected) {
    expect_error(with("training", "micro_batch_size", 4.5),
                 {"training.micro_batch_size: expected a positive integer, got 4.5"});
}

TEST(ScenarioErrors, IntegralFloatIsRejectedToo) {
    expect_error(with("model", "num_layers", 24.0),
                 {"model.num_layers: expected a positive integer, got 24.0", "without a decimal point"});
    expect_error(std::string(R"({"model": {"num_layers": 2.4e1}})"),
                 {"model.num_layers: expected a positive integer"});
}

TEST(ScenarioErrors, BooleanMustBeAJsonBoolean) {
    expect_error(with("parallelism", "sequence_parallel", "true"),
                 {"parallelism.sequence_parallel: expected a JSON boolean (true or false), got \"true\""});
    expect_error(with("training", "use_distributed_optimizer", 1),
                 {"training.use_distributed_optimizer: expected a JSON boolean (true or false), got 1"});
}

TEST(ScenarioErrors, NullOnlyWhereTheSchemaAllowsIt) {
    expect_error(with("parallelism", "data_parallel_size", json::array()),
                 {"parallelism.data_parallel_size: expected a positive integer, got []"});
    json doc = base();
    doc["parallelism"]["data_parallel_size"] = nullptr;
    expect_error(doc, {"parallelism.data_parallel_size: expected a positive integer, got null"});
}

TEST(ScenarioErrors, EnumValueSuggestsTheClosest) {
    expect_error(with("training", "recompute_granularity", "ful"),
                 {"training.recompute_granularity: expected one of \"none\", \"full\", \"selective\", "
                  "\"overlapped\" or "
                  "null, got \"ful\" (did you mean \"full\"?)"});
    json doc = base();
    doc["schedule"] = "1F1B";
    expect_error(
        doc, {"schedule: expected one of \"auto\", \"gpipe\", \"1f1b\", \"interleaved\", \"breadth_first\", "
              "\"zb-h1\", \"zb-h2\", \"zb-v\", \"dualpipe\", \"dualpipev\", got \"1F1B\" "
              "(did you mean \"1f1b\"?)"});
    expect_error(with("training", "recompute_method", 2),
                 {"training.recompute_method: expected one of", "got 2"});
}

TEST(ScenarioErrors, SectionMustBeAnObject) {
    json doc = base();
    doc["training"] = 5;
    expect_error(doc, {"training: expected an object, got 5"});
}

TEST(ScenarioErrors, StringKeysRejectOtherTypes) {
    expect_error(with("hardware", "profile", 80), {"hardware.profile: expected a string, got 80"});
    json doc = base();
    doc["name"] = json::array({"a"});
    expect_error(doc, {"name: expected a string, got [\"a\"]"});
}

// --- required keys ---

TEST(ScenarioErrors, MissingModelSizeIsNamed) {
    expect_error(with("model", "seq_length", nullptr),
                 {"model.seq_length: required key is missing", "model.preset"});
}

TEST(ScenarioErrors, MissingParallelAndTrainingKeysAreNamed) {
    expect_error(with("parallelism", "pipeline_model_parallel_size", nullptr),
                 {"parallelism.pipeline_model_parallel_size: required key is missing"});
    expect_error(with("training", "global_batch_size", nullptr),
                 {"training.global_batch_size: required key is missing"});
    json doc = base();
    doc.erase("hardware");
    expect_error(doc, {"hardware.profile: required key is missing"});
}

// --- ranges and caps ---

TEST(ScenarioErrors, ZeroAndNegativeSizesAreRejected) {
    expect_error(with("training", "micro_batch_size", 0),
                 {"training.micro_batch_size: expected a positive integer, got 0"});
    expect_error(with("model", "num_layers", -24),
                 {"model.num_layers: expected a positive integer, got -24"});
    expect_error(with("hardware", "gpus_per_node", 0),
                 {"hardware.gpus_per_node: expected a positive integer, got 0"});
    expect_error(with("training", "recompute_num_layers", 0),
                 {"training.recompute_num_layers: expected a positive integer, got 0"});
}

TEST(ScenarioErrors, SizeAboveTwoToTheFortyIsRejected) {
    expect_error(
        with("model", "hidden_size", (std::int64_t{1} << 40) + 1),
        {"model.hidden_size: expected a positive integer at most 2^40 (1099511627776), got 1099511627777"});
    expect_error(
        with("training", "global_batch_size", std::uint64_t{18446744073709551615U}),
        {"training.global_batch_size: expected a positive integer at most 2^40", "got 18446744073709551615"});
    expect_error(std::string(R"({"model": {"num_layers": 1e300}})"),
                 {"model.num_layers: expected a positive integer"});
}

TEST(ScenarioErrors, ProductThatWouldOverflowIsRejected) {
    // Each size is legal on its own; 24 layers × 2^20 tokens × 2^36 hidden is not.
    json doc = with("model", "seq_length", std::int64_t{1} << 20);
    doc["model"]["hidden_size"] = std::int64_t{1} << 36;
    expect_error(doc, {"model.num_layers=24 × training.micro_batch_size=1 × model.seq_length=1048576 × "
                       "model.hidden_size=68719476736 exceeds 2^56 (activation elements of all layers)"});
    json gpus = base();
    gpus["parallelism"]["tensor_model_parallel_size"] = std::int64_t{1} << 20;
    gpus["parallelism"]["pipeline_model_parallel_size"] = std::int64_t{1} << 20;
    gpus["parallelism"]["data_parallel_size"] = std::int64_t{1} << 20;
    expect_error(
        gpus,
        {"parallelism.tensor_model_parallel_size=1048576 × parallelism.pipeline_model_parallel_size=1048576 "
         "× parallelism.data_parallel_size=1048576 exceeds 2^56 (GPUs)"});
}

TEST(ScenarioErrors, EmptyNamesAreRejected) {
    expect_error(with("hardware", "profile", ""), {"hardware.profile: must not be empty"});
    json doc = base();
    doc["name"] = "";
    expect_error(doc, {"name: must not be empty"});
}

// --- presets ---

TEST(ScenarioErrors, UnknownPresetSuggestsTheClosest) {
    json doc = base();
    doc["model"] = {{"preset", "gpt3-17b"}};
    expect_error(doc, {"model.preset: unknown preset \"gpt3-17b\" (did you mean \"gpt3-175b\"?)",
                       "known presets: gpt-22b, gpt3-175b, mt-nlg-530b, gpt-1t"});
}

TEST(ScenarioErrors, PresetMustBeAString) {
    json doc = base();
    doc["model"] = {{"preset", 175}};
    expect_error(doc, {"model.preset: expected a string, got 175"});
}

TEST(ScenarioErrors, PresetKeysAreTypeCheckedToo) {
    json doc = base();
    doc["model"] = {{"preset", "gpt-22b"}, {"num_layers", "48"}};
    expect_error(doc, {"model.num_layers: expected a positive integer, got \"48\""});
}

// --- Megatron's divisibility rules ---

TEST(ScenarioErrors, HiddenSizeMustBeDivisibleByHeads) {
    expect_error(with("model", "hidden_size", 1000),
                 {"model.hidden_size=1000 must be divisible by model.num_attention_heads=16"});
}

TEST(ScenarioErrors, TensorParallelMustDivideHeads) {
    json doc = with("model", "num_attention_heads", 64);
    doc["model"]["hidden_size"] = 6144;
    doc["parallelism"]["tensor_model_parallel_size"] = 6;
    expect_error(doc, {"parallelism.tensor_model_parallel_size=6 must divide model.num_attention_heads=64"});
}

TEST(ScenarioErrors, TensorParallelMustDivideFfnAndVocab) {
    json doc = with("model", "ffn_hidden_size", 4100);
    doc["parallelism"]["tensor_model_parallel_size"] = 8;
    expect_error(doc, {"parallelism.tensor_model_parallel_size=8 must divide model.ffn_hidden_size=4100"});
    expect_error(with("model", "padded_vocab_size", 50257),
                 {"parallelism.tensor_model_parallel_size=2 must divide model.padded_vocab_size=50257"});
}

TEST(ScenarioErrors, LayersMustSplitIntoPipelineStages) {
    expect_error(with("parallelism", "pipeline_model_parallel_size", 5),
                 {"model.num_layers=24 must be divisible by parallelism.pipeline_model_parallel_size=5"});
}

TEST(ScenarioErrors, LayersMustSplitIntoVirtualChunks) {
    expect_error(with("parallelism", "virtual_pipeline_model_parallel_size", 4),
                 {"model.num_layers=24 must be divisible by parallelism.pipeline_model_parallel_size=4 × "
                  "parallelism.virtual_pipeline_model_parallel_size=4 = 16"});
}

TEST(ScenarioErrors, GlobalBatchMustSplitIntoMicroBatchesAndReplicas) {
    expect_error(with("training", "micro_batch_size", 3),
                 {"training.global_batch_size=8 must be divisible by training.micro_batch_size=3"});
    expect_error(with("parallelism", "data_parallel_size", 3),
                 {"training.global_batch_size=8 must be divisible by training.micro_batch_size=1 × "
                  "parallelism.data_parallel_size=3 = 3"});
}

TEST(ScenarioErrors, SequenceParallelNeedsTensorParallel) {
    json doc = with("parallelism", "sequence_parallel", true);
    doc["parallelism"]["tensor_model_parallel_size"] = 1;
    expect_error(doc,
                 {"parallelism.sequence_parallel=true requires parallelism.tensor_model_parallel_size > 1"});
}

TEST(ScenarioErrors, SequenceParallelNeedsDivisibleSequence) {
    json doc = with("parallelism", "sequence_parallel", true);
    doc["model"]["seq_length"] = 2049;
    expect_error(doc, {"parallelism.tensor_model_parallel_size=2 must divide model.seq_length=2049",
                       "parallelism.sequence_parallel=true"});
    // Without sequence parallelism the same sequence length is fine.
    EXPECT_NO_THROW((void)parse_scenario(with("model", "seq_length", 2049).dump(), "ok"));
}

TEST(ScenarioErrors, TensorParallelMustFitTheNode) {
    expect_error(with("hardware", "gpus_per_node", 3),
                 {"parallelism.tensor_model_parallel_size=2 must divide hardware.gpus_per_node=3 or be a "
                  "multiple of it"});
    json doc = with("hardware", "gpus_per_node", 6);
    doc["parallelism"]["tensor_model_parallel_size"] = 4;
    expect_error(doc, {"parallelism.tensor_model_parallel_size=4 must divide hardware.gpus_per_node=6"});
    // A group spanning whole nodes is fine.
    EXPECT_NO_THROW((void)parse_scenario(with("hardware", "gpus_per_node", 1).dump(), "ok"));
}

// --- recomputation rules ---

TEST(ScenarioErrors, RecomputeMethodOnlyWithFull) {
    json doc = with("training", "recompute_granularity", "selective");
    doc["training"]["recompute_method"] = "uniform";
    expect_error(
        doc, {"training.recompute_method=\"uniform\" requires training.recompute_granularity=\"full\", got "
              "\"selective\""});
}

TEST(ScenarioErrors, RecomputeNumLayersOnlyWithFull) {
    expect_error(
        with("training", "recompute_num_layers", 2),
        {"training.recompute_num_layers=2 requires training.recompute_granularity=\"full\", got \"none\""});
}

TEST(ScenarioErrors, BlockRecomputeNeedsALayerCount) {
    json doc = with("training", "recompute_granularity", "full");
    doc["training"]["recompute_method"] = "block";
    expect_error(doc, {"training.recompute_num_layers: required with training.recompute_method=\"block\""});
}

TEST(ScenarioErrors, BlockRecomputeAtMostTheLayersPerStage) {
    json doc = with("training", "recompute_granularity", "full");
    doc["training"]["recompute_method"] = "block";
    doc["training"]["recompute_num_layers"] = 7;
    expect_error(doc,
                 {"training.recompute_num_layers=7 must be at most the 6 layers per pipeline stage "
                  "(model.num_layers=24 divided among parallelism.pipeline_model_parallel_size=4 stages)",
                  "recompute_method=\"block\""});
    doc["parallelism"]["virtual_pipeline_model_parallel_size"] = 3;
    doc["training"]["recompute_num_layers"] = 3;
    expect_error(doc, {"training.recompute_num_layers=3 must be at most the 2 layers per pipeline chunk "
                       "(model.num_layers=24 divided "
                       "among parallelism.pipeline_model_parallel_size=4 × "
                       "parallelism.virtual_pipeline_model_parallel_size=3 "
                       "chunks)"});
}

TEST(ScenarioErrors, UniformRecomputeMustDivideTheLayersPerStage) {
    json doc = with("training", "recompute_granularity", "full");
    doc["training"]["recompute_method"] = "uniform";
    doc["training"]["recompute_num_layers"] = 4;
    expect_error(doc, {"training.recompute_num_layers=4 must divide the 6 layers per pipeline stage",
                       "recompute_method=\"uniform\""});
    doc["training"].erase("recompute_method");  // uniform is also the default with full
    expect_error(doc, {"training.recompute_num_layers=4 must divide the 6 layers per pipeline stage"});
}

TEST(ScenarioErrors, UnevenPipelineSplitMustMatchTheStagesAndLayers) {
    expect_error(with("parallelism", "layers_per_pipeline_stage", json::array({6, 6, 12})),
                 {"parallelism.layers_per_pipeline_stage=[6,6,12] has 3 entries",
                  "one per pipeline rank (parallelism.pipeline_model_parallel_size=4)"});
    expect_error(
        with("parallelism", "layers_per_pipeline_stage", json::array({6, 6, 6, 5})),
        {"parallelism.layers_per_pipeline_stage=[6,6,6,5] adds up to 23 layers", "model.num_layers=24"});
    expect_error(with("parallelism", "layers_per_pipeline_stage", json::array({6, 0, 6, 12})),
                 {"parallelism.layers_per_pipeline_stage[1]: expected a positive integer, got 0"});
    expect_error(with("parallelism", "layers_per_pipeline_stage", json::array({6, "6", 6, 6})),
                 {"parallelism.layers_per_pipeline_stage[1]: expected a positive integer"});
    expect_error(with("parallelism", "layers_per_pipeline_stage", 24),
                 {"parallelism.layers_per_pipeline_stage: expected a non-empty list of positive integers"});
    expect_error(with("parallelism", "layers_per_pipeline_stage", json::array()),
                 {"parallelism.layers_per_pipeline_stage: expected a non-empty list"});
    json doc = with("parallelism", "layers_per_pipeline_stage", json::array({4, 6, 6, 8}));
    doc["parallelism"]["virtual_pipeline_model_parallel_size"] = 2;
    doc["training"]["global_batch_size"] = 8;
    (void)parse_scenario(doc.dump(), "ok.json");  // every stage's layers split into 2 chunks
    doc["parallelism"]["layers_per_pipeline_stage"] = json::array({3, 7, 6, 8});
    expect_error(doc, {"parallelism.layers_per_pipeline_stage[0]=3 must be divisible by "
                       "parallelism.virtual_pipeline_model_parallel_size=2"});
}

TEST(ScenarioErrors, UnevenSplitLetsLayersNotDivideThePipeline) {
    json doc = base();
    doc["model"]["num_layers"] = 25;
    expect_error(doc, {"model.num_layers=25 must be divisible by parallelism.pipeline_model_parallel_size=4",
                       "layers_per_pipeline_stage"});
    doc["parallelism"]["layers_per_pipeline_stage"] = json::array({5, 7, 7, 6});
    const Scenario sc = parse_scenario(doc.dump(), "uneven.json");
    EXPECT_EQ(sc.stage_num_layers(0), 5);
    EXPECT_EQ(sc.stage_num_layers(3), 6);
    // Full recompute must fit every stage: uniform groups of 2 do not divide the 5- and 7-layer stages.
    doc["training"]["recompute_granularity"] = "full";
    doc["training"]["recompute_method"] = "uniform";
    doc["training"]["recompute_num_layers"] = 2;
    expect_error(doc,
                 {"training.recompute_num_layers=2 must divide the 5 layers per pipeline stage (pipeline "
                  "rank 0 of parallelism.layers_per_pipeline_stage=[5,7,7,6])"});
    doc["training"]["recompute_method"] = "block";
    doc["training"]["recompute_num_layers"] = 6;
    expect_error(doc, {"training.recompute_num_layers=6 must be at most the 5 layers per pipeline stage"});
}

// --- schedule rules ---

TEST(ScenarioErrors, InterleavedNeedsVirtualStages) {
    json doc = base();
    doc["schedule"] = "interleaved";
    expect_error(doc,
                 {"schedule=\"interleaved\" requires parallelism.virtual_pipeline_model_parallel_size > 1"});
}

TEST(ScenarioErrors, NonInterleavedScheduleRejectsVirtualStages) {
    for (const char* schedule : {"1f1b", "gpipe"}) {
        json doc = with("parallelism", "virtual_pipeline_model_parallel_size", 3);
        doc["schedule"] = schedule;
        expect_error(doc, {std::string("schedule=\"") + schedule + "\"",
                           "requires parallelism.virtual_pipeline_model_parallel_size=1, got 3"});
    }
}

TEST(ScenarioErrors, VirtualStagesNeedMoreThanTwoPipelineStagesWithBlockingTransfers) {
    // Megatron-LM arguments.py: p > 2 without overlap_p2p_comm, p > 1 with it.
    json doc = with("parallelism", "virtual_pipeline_model_parallel_size", 3);
    doc["parallelism"]["pipeline_model_parallel_size"] = 2;
    doc["parallelism"]["overlap_p2p_comm"] = false;
    expect_error(
        doc, {"parallelism.virtual_pipeline_model_parallel_size=3 requires "
              "parallelism.pipeline_model_parallel_size > 2 with parallelism.overlap_p2p_comm=false, got 2"});
    doc["parallelism"]["overlap_p2p_comm"] = true;
    doc["parallelism"]["pipeline_model_parallel_size"] = 1;
    expect_error(doc, {"parallelism.virtual_pipeline_model_parallel_size=3 requires "
                       "parallelism.pipeline_model_parallel_size > 1, got 1"});
}

TEST(ScenarioErrors, InterleavedNeedsMicroBatchesAMultipleOfStages) {
    json doc = with("parallelism", "virtual_pipeline_model_parallel_size", 3);
    doc["training"]["global_batch_size"] = 6;
    expect_error(
        doc, {"training.global_batch_size=6 / (training.micro_batch_size=1) = 6 micro-batches",
              "the interleaved schedule requires a multiple of parallelism.pipeline_model_parallel_size=4",
              "Megatron's 2022 rule"});
    doc["training"]["global_batch_size"] = 8;
    EXPECT_NO_THROW((void)parse_scenario(doc.dump(), "ok"));
}

// --- overrides ---

TEST(ScenarioErrors, OverrideOfUnknownKeySuggestsTheClosest) {
    expect_error(
        base(),
        {"--set paralelism.data_parallel_size: unknown key (did you mean parallelism.data_parallel_size?)"},
        {parse_override("paralelism.data_parallel_size=2")});
    expect_error(base(), {"--set model.hidden: unknown key (did you mean model.hidden_size?)"},
                 {parse_override("model.hidden=2")});
    expect_error(base(), {"--set model.num_layers.x: unknown key"}, {parse_override("model.num_layers.x=2")});
}

TEST(ScenarioErrors, OverriddenValueIsTypeChecked) {
    expect_error(base(), {"training.micro_batch_size: expected a positive integer, got \"four\""},
                 {parse_override("training.micro_batch_size=four")});
    expect_error(base(), {"training.micro_batch_size: expected a positive integer, got 1.5"},
                 {parse_override("training.micro_batch_size=1.5")});
}

TEST(ScenarioErrors, OverriddenValueIsValidated) {
    expect_error(base(),
                 {"parallelism.tensor_model_parallel_size=3 must divide model.num_attention_heads=16"},
                 {parse_override("parallelism.tensor_model_parallel_size=3")});
}

TEST(ScenarioErrors, OverrideIntoANonObjectSection) {
    json doc = base();
    doc["training"] = 5;
    expect_error(doc, {"--set training.micro_batch_size: training is 5 in the scenario, not an object"},
                 {parse_override("training.micro_batch_size=2")});
}

TEST(ScenarioErrors, OverrideWithoutEqualsIsRejected) {
    EXPECT_THROW((void)parse_override("parallelism.data_parallel_size"), InputError);
    EXPECT_THROW((void)parse_override("=4"), InputError);
    try {
        (void)parse_override("parallelism.data_parallel_size");
    } catch (const InputError& e) {
        EXPECT_STREQ(e.what(), "--set parallelism.data_parallel_size: expected key=value");
    }
}

// --- files ---

TEST(ScenarioErrors, MissingFileIsNamed) {
    const std::string path = (std::filesystem::path(::testing::TempDir()) / "no-such-scenario.json").string();
    try {
        (void)load_scenario(path);
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), path + ": cannot open scenario file (no such file)");
    }
}

TEST(ScenarioErrors, SyntaxErrorInAFileNamesThePath) {
    const std::filesystem::path file = std::filesystem::path(::testing::TempDir()) / "broken.json";
    {
        std::ofstream out(file);
        out << "{\n  \"name\": \"x\"\n  \"model\": {}\n}\n";
    }
    try {
        (void)load_scenario(file.string());
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()).rfind(file.string() + ": invalid JSON at line 3, column 9: ", 0), 0U)
            << e.what();
    }
    std::filesystem::remove(file);
}

}  // namespace
}  // namespace trainsim::config
