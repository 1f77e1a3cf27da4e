// Issue 9: every bad input is answered with one line that names the key and the rule (exit status 2 from
// the CLI) and leaves no output file behind; a run that cannot finish stops and names the ranks; the same
// input gives the same answer. This catalogue extends tests/config_errors_test.cc,
// tests/hardware_profile_test.cc and tests/cli_test.cc with cases they do not have: sizes whose products
// overflow, layouts and schedules the rules reject, mutilated profiles, overrides, JSON that is deep or
// not text, paths that cannot be written, and the inputs fuzzing found.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/core/input_error.h"
#include "sim/cost/hardware_profile.h"
#include "sim/engine/fingerprint.h"
#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"
#include "sim/report/iteration_report.h"
#include "sim/sweep/point_runner.h"
#include "sim/sweep/worker_pool.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::int64_t k2to20 = std::int64_t{1} << 20;
constexpr std::int64_t k2to30 = std::int64_t{1} << 30;
constexpr std::int64_t k2to40 = std::int64_t{1} << 40;

std::size_t count_lines(const std::string& s) {
    return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

// A fresh directory per test, removed afterwards, so that "no file was left behind" can be checked.
fs::path private_dir(const std::string& tag) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name =
        std::string("trainsim_robust_") + tag + "_" + info->name() + "_" + std::to_string(::getpid());
    std::replace(name.begin(), name.end(), '/', '_');
    const fs::path dir = fs::temp_directory_path() / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

// Asserts that `message` is one line containing every one of `parts`.
void expect_message(const std::string& message, const std::vector<std::string>& parts) {
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    for (const std::string& part : parts) {
        EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nlacks: " << part;
    }
}

// A text several levels deeper than any scenario or profile: nlohmann parses it, but printing it (every
// error message describes the offending value) recursed once per level and overflowed the stack.
std::string deeply_nested(std::size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
}

// ---------------------------------------------------------------------------------------------------
// Scenarios: parse_scenario must throw InputError (one line, key and rule).

// A valid scenario that each case breaks in one place: t=2, p=4, 24 layers, 8 micro-batches.
json base_scenario() {
    return json::parse(R"({
      "model": {"num_layers": 24, "hidden_size": 1024, "num_attention_heads": 16,
                "seq_length": 2048, "padded_vocab_size": 51200},
      "parallelism": {"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 4},
      "training": {"micro_batch_size": 1, "global_batch_size": 8},
      "hardware": {"profile": "a100-80gb-selene"}
    })");
}

struct ScenarioCase {
    std::string name;
    std::function<std::string()> text;   // the scenario file
    std::vector<std::string> overrides;  // --set KEY=VALUE
    std::vector<std::string> expect;     // parts of the message
};

std::function<std::string()> edited(std::function<void(json&)> edit) {
    return [edit] {
        json doc = base_scenario();
        edit(doc);
        return doc.dump(2);
    };
}

std::function<std::string()> verbatim(std::string text) {
    return [text] { return text; };
}

std::string base_text() {
    return base_scenario().dump(2);
}

std::vector<ScenarioCase> scenario_cases() {
    return {
        // --- sizes whose products overflow the byte and FLOP counts (each size alone is legal)
        {"TokensPerIterationOverflow",
         edited([](json& d) {
             d["training"]["global_batch_size"] = k2to40;
             d["model"]["seq_length"] = k2to20;
         }),
         {},
         {"training.global_batch_size=1099511627776 × model.seq_length=1048576 exceeds 2^56 (tokens per "
          "iteration)"}},
        {"AttentionScoresOverflow",
         edited([](json& d) { d["model"]["seq_length"] = std::int64_t{1} << 24; }),
         {},
         {"model.seq_length=16777216 × model.seq_length=16777216 exceeds 2^56 (attention-score elements"}},
        {"LogitsOverflow",
         edited([](json& d) {
             d["training"]["micro_batch_size"] = k2to20;
             d["training"]["global_batch_size"] = k2to20;
             d["model"]["padded_vocab_size"] = std::int64_t{1} << 26;
         }),
         {},
         {"model.padded_vocab_size=67108864 exceeds 2^56 (logit elements)"}},
        {"EmbeddingOverflow",
         edited([](json& d) {
             d["model"]["padded_vocab_size"] = k2to40;
             d["model"]["hidden_size"] = std::int64_t{1} << 17;
         }),
         {},
         {"model.padded_vocab_size=1099511627776 × model.hidden_size=131072 exceeds 2^52 (embedding "
          "weights)"}},
        {"AttentionWeightsOverflow",
         edited([](json& d) { d["model"]["hidden_size"] = std::int64_t{1} << 28; }),
         {},
         {"model.num_layers=24 × model.hidden_size=268435456 × model.hidden_size=268435456 exceeds 2^52 "
          "(attention "
          "weights)"}},
        {"MlpActivationOverflow",
         edited([](json& d) {
             d["model"]["ffn_hidden_size"] = k2to40;
             d["model"]["seq_length"] = 8192;
         }),
         {},
         {"model.ffn_hidden_size=1099511627776 exceeds 2^56 (MLP activation elements of all layers)"}},
        {"MlpWeightsOverflow",
         edited([](json& d) {
             d["model"]["hidden_size"] = k2to20;
             d["model"]["ffn_hidden_size"] = std::int64_t{1} << 36;
             d["model"]["seq_length"] = 16;
         }),
         {},
         {"model.ffn_hidden_size=68719476736 exceeds 2^52 (MLP weights)"}},
        {"PipelineChunksOverflow",
         edited([](json& d) {
             d["parallelism"]["pipeline_model_parallel_size"] = k2to30;
             d["parallelism"]["virtual_pipeline_model_parallel_size"] = k2to30;
         }),
         {},
         {"parallelism.virtual_pipeline_model_parallel_size=1073741824 exceeds 2^56 (pipeline chunks)"}},
        {"MicroBatchTasksOverflow",
         edited([](json& d) {
             d["training"]["global_batch_size"] = k2to40;
             d["parallelism"]["virtual_pipeline_model_parallel_size"] = std::int64_t{1} << 17;
         }),
         {},
         {"exceeds 2^56 (micro-batch tasks per iteration)"}},
        {"SamplesPerStepOverflow",
         edited([](json& d) {
             d["training"]["micro_batch_size"] = k2to30;
             d["training"]["global_batch_size"] = k2to30;
             d["parallelism"]["data_parallel_size"] = k2to30;
             d["model"]["seq_length"] = 16;
         }),
         {},
         {"training.micro_batch_size=1073741824 × parallelism.data_parallel_size=1073741824 exceeds 2^56 "
          "(samples per "
          "micro-batch step)"}},
        {"NumberBeyondDouble",
         verbatim(R"({"model": {"num_layers": 1e400}})"),
         {},
         {"invalid JSON", "1e400"}},

        // --- layouts and schedules that cannot run with the given micro-batches
        {"GroupSizeBelowPipeline",
         edited([](json& d) {
             d["parallelism"]["virtual_pipeline_model_parallel_size"] = 3;
             d["parallelism"]["microbatch_group_size_per_vp_stage"] = 2;
         }),
         {},
         {"parallelism.microbatch_group_size_per_vp_stage=2 must be between "
          "parallelism.pipeline_model_parallel_size=4 and the 8 micro-batches per pipeline"}},
        {"GroupSizeLeavesAShortLastGroup",
         edited([](json& d) {
             d["parallelism"]["virtual_pipeline_model_parallel_size"] = 3;
             d["parallelism"]["microbatch_group_size_per_vp_stage"] = 5;
             d["training"]["global_batch_size"] = 12;
         }),
         {},
         {"12 micro-batches leave a last group of 2, which must be 0 or at least "
          "parallelism.pipeline_model_parallel_size=4"}},
        {"GroupSizeWithoutInterleaving",
         edited([](json& d) { d["parallelism"]["microbatch_group_size_per_vp_stage"] = 4; }),
         {},
         {"parallelism.microbatch_group_size_per_vp_stage is only used by the interleaved schedule"}},
        {"PartialCheckpointsWithoutFullRecompute",
         edited([](json& d) { d["training"]["num_microbatches_with_partial_activation_checkpoints"] = 2; }),
         {},
         {"training.num_microbatches_with_partial_activation_checkpoints=2 requires "
          "training.recompute_granularity=\"full\""}},
        {"PartialCheckpointsWithTheInterleavedSchedule",
         edited([](json& d) {
             d["parallelism"]["virtual_pipeline_model_parallel_size"] = 3;
             d["training"]["recompute_granularity"] = "full";
             d["training"]["num_microbatches_with_partial_activation_checkpoints"] = 1;
         }),
         {},
         {"training.num_microbatches_with_partial_activation_checkpoints requires schedule \"1f1b\"",
          "got \"interleaved\""}},
        {"BucketSizeWithoutOverlap",
         edited([](json& d) { d["training"]["ddp_bucket_size"] = 1000000; }),
         {},
         {"training.ddp_bucket_size requires training.overlap_grad_reduce=true"}},
        {"ParamGatherOverlapWithoutTheDistributedOptimizer",
         edited([](json& d) {
             d["training"]["overlap_grad_reduce"] = true;
             d["training"]["overlap_param_gather"] = true;
         }),
         {},
         {"training.overlap_param_gather requires training.use_distributed_optimizer=true"}},
        {"ParamGatherOverlapWithoutGradientOverlap",
         edited([](json& d) {
             d["training"]["use_distributed_optimizer"] = true;
             d["training"]["overlap_param_gather"] = true;
         }),
         {},
         {"training.overlap_param_gather requires training.overlap_grad_reduce=true"}},
        {"ParamGatherOverlapUnderFsdp",
         edited([](json& d) {
             d["parallelism"]["data_parallel_sharding_strategy"] = "optim_grads_params";
             d["training"]["use_distributed_optimizer"] = true;
             d["training"]["overlap_grad_reduce"] = true;
             d["training"]["overlap_param_gather"] = true;
         }),
         {},
         {"training.overlap_param_gather is not modelled with",
          "data_parallel_sharding_strategy=\"optim_grads_params\""}},
        {"MemoryBudgetWithoutOverlappedRecompute",
         edited([](json& d) { d["training"]["recompute_memory_budget"] = k2to30; }),
         {},
         {"training.recompute_memory_budget", "requires training.recompute_granularity=\"overlapped\""}},
        {"SchedulerMisspelt",
         edited([](json& d) { d["training"]["recompute_scheduler"] = "optimial"; }),
         {},
         {"training.recompute_scheduler: expected one of", "(did you mean \"optimal\"?)"}},
        {"ScatterGatherGivenAsString",
         edited([](json& d) { d["parallelism"]["scatter_gather_tensors_in_pipeline"] = "yes"; }),
         {},
         {"parallelism.scatter_gather_tensors_in_pipeline: expected a JSON boolean (true or false), got "
          "\"yes\""}},
        {"DeallocateOutputsNull",
         edited([](json& d) { d["training"]["deallocate_pipeline_outputs"] = nullptr; }),
         {},
         {"training.deallocate_pipeline_outputs: expected a JSON boolean (true or false), got null"}},
        {"VirtualSizeZero",
         edited([](json& d) { d["parallelism"]["virtual_pipeline_model_parallel_size"] = 0; }),
         {},
         {"parallelism.virtual_pipeline_model_parallel_size: expected a positive integer", "got 0"}},

        // --- text that is not the JSON it looks like
        {"DeeplyNestedValue",
         verbatim(R"({"model": {"num_layers": )" + deeply_nested(100000) + "}}"),
         {},
         {"model.num_layers", "nested deeper than"}},
        {"DeeplyNestedDocument",
         verbatim(deeply_nested(100000)),
         {},
         {"scenario.json", "nested deeper than"}},
        {"IllFormedUtf8",
         verbatim("{\"name\": \"\xff\"}"),
         {},
         {"scenario.json: invalid JSON at line 1, column 11", "ill-formed UTF-8"}},
        {"NulByteInAString",
         verbatim(std::string("{\"name\": \"a\0\"}", 14)),
         {},
         {"scenario.json: invalid JSON at line 1, column 12", "U+0000"}},
        {"ControlCharacterInAKey",
         verbatim(R"({"model": {"a\nb": 1}})"),
         {},
         {"model.a\\nb: unknown key (expected one of: preset, num_layers"}},
        {"Comment",
         verbatim("// a scenario\n" + base_text()),
         {},
         {"scenario.json: invalid JSON at line 1, column 1"}},
        {"NaNLiteral",
         verbatim(R"({"model": {"num_layers": NaN}})"),
         {},
         {"scenario.json: invalid JSON at line 1"}},
        {"LeadingZero",
         verbatim(R"({"model": {"num_layers": 024}})"),
         {},
         {"scenario.json: invalid JSON at line 1"}},

        // --- overrides
        {"OverrideObjectWithADuplicateKey",
         verbatim(base_text()),
         {R"(model={"preset": "gpt-22b", "num_layers": 2, "num_layers": 4})"},
         {"--set model", "num_layers: duplicate key"}},
        {"OverrideDeeplyNested",
         verbatim(base_text()),
         {"model.num_layers=" + deeply_nested(50000)},
         {"--set model.num_layers", "nested deeper than"}},
        {"OverrideWithAnEmptyPathSegment",
         verbatim(base_text()),
         {"model..num_layers=2"},
         {"--set model..num_layers: unknown key (did you mean model.num_layers?)"}},
        {"OverrideSectionWithAScalar",
         verbatim(base_text()),
         {"model=5"},
         {"model: expected an object, got 5"}},
        {"OverrideNameWithNothing", verbatim(base_text()), {"name="}, {"name: must not be empty"}},
        {"OverrideThatIsNotJsonIsAString",
         verbatim(base_text()),
         {"model.num_layers={"},
         {"model.num_layers: expected a positive integer, got \"{\""}},
        {"OverrideOfAMisspeltTopLevelKey",
         verbatim(base_text()),
         {"schedul=1f1b"},
         {"--set schedul: unknown key (did you mean schedule?)"}},
        {"OverrideBreaksTheSchedule",
         verbatim(base_text()),
         {"parallelism.virtual_pipeline_model_parallel_size=2", "training.global_batch_size=6"},
         {"training.global_batch_size=6", "the interleaved schedule requires a multiple of "
                                          "parallelism.pipeline_model_parallel_size=4"}},
    };
}

void PrintTo(const ScenarioCase& c, std::ostream* os) {
    *os << c.name;
}

class ScenarioCatalogue : public ::testing::TestWithParam<ScenarioCase> {};

TEST_P(ScenarioCatalogue, OneLineNamingTheKeyAndTheRule) {
    const ScenarioCase& c = GetParam();
    std::vector<config::Override> overrides;
    try {
        for (const std::string& o : c.overrides) {
            overrides.push_back(config::parse_override(o));
        }
        (void)config::parse_scenario(c.text(), "scenario.json", overrides);
        ADD_FAILURE() << "no InputError";
    } catch (const InputError& e) {
        expect_message(e.what(), c.expect);
    }
}

INSTANTIATE_TEST_SUITE_P(Robustness, ScenarioCatalogue, ::testing::ValuesIn(scenario_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(Robustness, ByteOrderMarkIsNotAnError) {
    // Editors on Windows write one; the parser skips it, so the same scenario loads either way.
    const config::Scenario with = config::parse_scenario("\xEF\xBB\xBF" + base_text(), "bom");
    EXPECT_EQ(with.model.num_layers, 24);
}

// ---------------------------------------------------------------------------------------------------
// Profiles: a copy of the shipped A100 profile with one thing broken; load_hardware_profile must throw.

const std::string kProfile = "a100-80gb-selene";

// Keys keep their order, so that the first rule broken is the one each case breaks.
using ProfileJson = nlohmann::ordered_json;

ProfileJson shipped_profile() {
    std::ifstream in(testing::source_path("scenarios/hardware/" + kProfile + ".json"));
    return ProfileJson::parse(in);
}

struct ProfileCase {
    std::string name;
    std::function<std::string()> text;  // the profile file, written as a100-80gb-selene.json
    std::vector<std::string> expect;
};

std::function<std::string()> profile_edited(std::function<void(ProfileJson&)> edit) {
    return [edit] {
        ProfileJson doc = shipped_profile();
        edit(doc);
        return doc.dump(2);
    };
}

std::vector<ProfileCase> profile_cases() {
    const std::string p = "profile " + kProfile + ": ";
    return {
        // --- missing curves and sections
        {"MissingGemmCurve",
         profile_edited([](ProfileJson& j) { j["compute"]["gemm"].erase("efficiency_vs_flops"); }),
         {p + "compute.gemm.efficiency_vs_flops is required"}},
        {"MissingNetworkSection",
         profile_edited([](ProfileJson& j) { j.erase("network"); }),
         {p + "network is required"}},
        {"MissingKindFactor",
         profile_edited([](ProfileJson& j) { j["memory_bound"]["kind_factors"].erase("dropout"); }),
         {p + "memory_bound.kind_factors.dropout is required"}},
        {"ValueObjectWithoutItsValue",
         profile_edited([](ProfileJson& j) { j["gpu"]["hbm_GBps"].erase("value"); }),
         {p + "gpu.hbm_GBps.value is required"}},
        // --- empty, non-monotone and impossible measurements
        {"EmptyMemoryBoundMeasurements",
         profile_edited([](ProfileJson& j) {
             j["memory_bound"]["efficiency_vs_bytes"]["points"] = ProfileJson::array();
         }),
         {p + "memory_bound.efficiency_vs_bytes.points must be a non-empty array of {x, y} points, got []"}},
        {"MeasurementsNotAList",
         profile_edited([](ProfileJson& j) {
             j["network"]["intra_node"]["busbw_GBps_vs_bytes"]["points"] = ProfileJson::object();
         }),
         {p + "network.intra_node.busbw_GBps_vs_bytes.points must be a non-empty array", "got {}"}},
        {"DecreasingMessageSizes",
         profile_edited([](ProfileJson& j) {
             ProfileJson& points = j["network"]["intra_node"]["busbw_GBps_vs_bytes"]["points"];
             points[4]["x"] = points[2]["x"];
         }),
         {p +
          "network.intra_node.busbw_GBps_vs_bytes.points[4].x must be greater than the previous point's x"}},
        {"PointWithoutY",
         profile_edited(
             [](ProfileJson& j) { j["compute"]["gemm"]["efficiency_vs_flops"]["points"][0].erase("y"); }),
         {p + "compute.gemm.efficiency_vs_flops.points[0].y is required"}},
        {"NegativeBandwidth",
         profile_edited([](ProfileJson& j) {
             j["network"]["intra_node"]["busbw_GBps_vs_bytes"]["points"][2]["y"] = -5;
         }),
         {p + "network.intra_node.busbw_GBps_vs_bytes.points[2].y must be greater than 0, got -5"}},
        {"NumberBeyondDouble",
         [] {
             std::string text = shipped_profile().dump(2);
             const std::string from = "\"value\": 2039";
             text.replace(text.find(from), from.size(), "\"value\": 1e400");
             return text;
         },
         {p + "invalid JSON", "1e400"}},
        // --- values outside what the model can use
        {"GroupOfOneRank",
         profile_edited(
             [](ProfileJson& j) { j["network"]["intra_node"]["measured_group_size"]["value"] = 1; }),
         {p + "network.intra_node.measured_group_size.value must be between 2 and node.gpus_per_node (8), "
              "got 1"}},
        {"CollectiveTakesTheWholeGpu",
         profile_edited([](ProfileJson& j) {
             j["network"]["inter_node"]["compute_share_while_overlapped"]["value"] = 1;
         }),
         {p + "network.inter_node.compute_share_while_overlapped.value must be less than 1, got 1"}},
        {"GpusPerNodeBeyondInt",
         profile_edited([](ProfileJson& j) { j["node"]["gpus_per_node"]["value"] = std::int64_t{1} << 31; }),
         {p + "node.gpus_per_node.value is too large, got 2147483648"}},
        {"NoNics",
         profile_edited([](ProfileJson& j) { j["network"]["inter_node"]["nics_per_node"]["value"] = 0; }),
         {p + "network.inter_node.nics_per_node.value must be greater than 0, got 0"}},
        {"WrongSchema",
         profile_edited([](ProfileJson& j) { j["schema"] = "trainsim-hardware-profile/2"; }),
         {p + "schema must be \"trainsim-hardware-profile/1\", got \"trainsim-hardware-profile/2\""}},
        {"PointWithoutProvenance",
         profile_edited(
             [](ProfileJson& j) { j["compute"]["gemm"]["efficiency_vs_flops"]["points"][0].erase("kind"); }),
         {p + "compute.gemm.efficiency_vs_flops.points[0]", "kind is required"}},
        {"AssumptionWithoutWhat",
         profile_edited([](ProfileJson& j) { j["compute"]["gemm"]["assumptions"][0].erase("what"); }),
         {p + "compute.gemm.assumptions[0].what is required"}},
        {"SourceIdNotAnId",
         profile_edited([](ProfileJson& j) { j["sources"]["s-lower"] = "a citation"; }),
         {p + "sources.s-lower is not a source id"}},
        // --- documents that are not a profile at all
        {"EmptyFile", [] { return std::string(); }, {p + "invalid JSON"}},
        {"TopLevelArray",
         [] { return std::string("[1, 2]"); },
         {p + "the document must be a JSON object, got [1,2]"}},
        {"DeeplyNestedDescription",
         profile_edited(
             [](ProfileJson& j) { j["description"] = ProfileJson::array(); }),  // replaced by deep text below
         {p + "description", "nested deeper than"}},
        // --- text that would break the one-line contract if printed raw
        {"NewlineInAnUnknownKey",
         profile_edited([](ProfileJson& j) { j["gpu"]["peak\ntflops"] = 1; }),
         {p + "gpu.peak\\ntflops is not a known key"}},
        {"NewlineInTheSchema",
         profile_edited([](ProfileJson& j) { j["schema"] = "trainsim\nhardware"; }),
         {p + "schema must be \"trainsim-hardware-profile/1\", got \"trainsim\\nhardware\""}},
        {"NewlineInTheName",
         profile_edited([](ProfileJson& j) { j["name"] = "a100\nh100"; }),
         {p + "name must match the file name 'a100-80gb-selene', got 'a100\\nh100'"}},
        {"NewlineInASourceId",
         profile_edited([](ProfileJson& j) { j["sources"]["S-A\nB"] = "a citation"; }),
         {p + "sources.S-A\\nB is not a source id"}},
    };
}

void PrintTo(const ProfileCase& c, std::ostream* os) {
    *os << c.name;
}

class ProfileCatalogue : public ::testing::TestWithParam<ProfileCase> {};

TEST_P(ProfileCatalogue, OneLineNamingTheFieldAndTheRule) {
    const ProfileCase& c = GetParam();
    const fs::path dir = private_dir("profile");
    std::string text = c.text();
    if (c.name == "DeeplyNestedDescription") {
        const std::string from = "\"description\": []";
        text.replace(text.find(from), from.size(), "\"description\": " + deeply_nested(100000));
    }
    std::ofstream(dir / (kProfile + ".json"), std::ios::binary) << text;
    try {
        (void)cost::load_hardware_profile(kProfile, dir.string());
        ADD_FAILURE() << "no InputError";
    } catch (const InputError& e) {
        expect_message(e.what(), c.expect);
    }
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Robustness, ProfileCatalogue, ::testing::ValuesIn(profile_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(Robustness, ProfileNameWithANewlineIsOneLine) {
    // `--set hardware.profile=...` takes any string; the lookup's message must still be one line.
    try {
        (void)cost::load_hardware_profile("a100\nh100", testing::source_path("scenarios/hardware"));
        ADD_FAILURE() << "no InputError";
    } catch (const InputError& e) {
        expect_message(e.what(), {"hardware.profile: no profile named 'a100\\nh100'"});
    }
}

// ---------------------------------------------------------------------------------------------------
// The command line: exit status 2, one line on stderr, nothing on stdout, and no file where --trace
// pointed (nor a temporary beside it).

const std::string k22b = testing::source_path("scenarios/korthikanti-22b.json");
const std::string k175b = testing::source_path("scenarios/korthikanti-175b.json");

struct CliCase {
    CliCase(std::string name_, std::string args_, std::vector<std::string> expect_, bool add_trace_ = true,
            int status_ = 2, std::string scenario_ = {})
        : name(std::move(name_)), args(std::move(args_)), expect(std::move(expect_)), add_trace(add_trace_),
          status(status_), scenario(std::move(scenario_)) {}

    std::string name;
    std::string args;  // before "--trace FILE"; DIR stands for the test's private directory
    std::vector<std::string> expect;
    bool add_trace;        // false when the case names its own --trace, or its command has none
    int status;            // 3: a valid scenario whose run cannot finish
    std::string scenario;  // written to DIR/scenario.json when not empty
};

// A valid one-layer scenario with the given sizes: each passes every cap of scenarios/README.md, yet
// together they ask for more than the simulator can count (time beyond 2^63 ns, memory beyond 2^62
// bytes). Before the checks these ran into undefined behaviour, an "internal error" or a wrong peak.
std::string one_layer(std::int64_t hidden, std::int64_t seq, std::int64_t global_batch,
                      const char* schedule) {
    return json{{"model",
                 {{"num_layers", 1},
                  {"hidden_size", hidden},
                  {"num_attention_heads", 1},
                  {"ffn_hidden_size", 8},
                  {"seq_length", seq},
                  {"padded_vocab_size", 8}}},
                {"parallelism", {{"tensor_model_parallel_size", 1}, {"pipeline_model_parallel_size", 1}}},
                {"training", {{"micro_batch_size", 1}, {"global_batch_size", global_batch}}},
                {"schedule", schedule},
                {"hardware", {{"profile", "a100-80gb-selene"}}}}
        .dump();
}

std::vector<CliCase> cli_cases() {
    return {
        {"MaxEventsZero",
         "run " + k22b + " --max-events 0",
         {"--max-events=0 must be a whole number of events ≥ 1"}},
        {"MaxEventsNegative", "run " + k22b + " --max-events=-1", {"--max-events=-1 must be a whole number"}},
        {"MaxEventsNotANumber",
         "run " + k22b + " --max-events many",
         {"--max-events=many must be a whole number"}},
        {"TraceIntoADirectory",
         "run " + k22b + " --trace DIR",
         {"--trace=DIR: cannot be written (Is a directory)"},
         false},
        {"TraceUnderAFile",
         "run " + k22b + " --trace DIR/file/trace.json",
         {"--trace=DIR/file/trace.json: DIR/file is not a directory"},
         false},
        {"FormatTwice",
         "run " + k22b + " --format json --format csv",
         {"'--format' cannot be specified more than once"}},
        {"TwoScenarios", "run " + k22b + " " + k22b, {"too many positional options"}},
        {"LayerOfAMissingFile",
         "layer DIR/missing.json",
         {"DIR/missing.json: cannot open scenario file (no such file)"},
         false},
        {"ActivationsOfAMissingFile",
         "activations DIR/missing.json",
         {"DIR/missing.json: cannot open scenario file (no such file)"},
         false},
        {"ScenarioIsADirectory", "run DIR", {"DIR: is a directory, not a scenario file"}},
        {"FoldWithATrailingComma",
         "run " + k22b + " --fold tp,",
         {"--fold=tp, must be 'none' or a comma list of tp, dp"}},
        {"MicroBatchesNotAMultipleOfStages",
         "run " + k175b + " --set training.global_batch_size=12",
         {"training.global_batch_size=12",
          "= 12 micro-batches, but the interleaved schedule requires a multiple of "
          "parallelism.pipeline_model_parallel_size=8"}},
        {"VirtualStagesDoNotDivideLayers",
         "run " + k175b + " --set parallelism.virtual_pipeline_model_parallel_size=5",
         {"model.num_layers=96 must be divisible by parallelism.pipeline_model_parallel_size=8 × "
          "parallelism.virtual_pipeline_model_parallel_size=5"}},
        {"ReplicasDoNotDivideTheBatch",
         "run " + k175b + " --set parallelism.data_parallel_size=3",
         {"training.global_batch_size=64 must be divisible by training.micro_batch_size=1 × "
          "parallelism.data_parallel_size=3"}},
        {"ProfileThatIsNotJson",
         "run " + k22b + " --set hardware.profile=DIR/broken.json",
         {"profile broken: invalid JSON"}},
        {"ProfileThatIsADirectory",
         "run " + k22b + " --set hardware.profile=DIR/",
         {"hardware.profile: cannot open DIR"}},
        {"LayerOfAnOverflowingScenario",
         "layer " + k22b + " --set model.seq_length=1099511627776",
         {"exceeds 2^56"},
         false},
        // --- valid scenarios that ask for more than the simulator can count
        {"OneGemmLongerThan292Years",
         "run DIR/scenario.json",
         {"a cost of ", " s is beyond the 2^63 ns (292 years) simulated time can hold"},
         true,
         2,
         one_layer(std::int64_t{1} << 26, std::int64_t{1} << 28, 1, "1f1b")},
        {"IterationLongerThan292Years",
         "run DIR/scenario.json",
         {"simulation cannot finish: simulated time passes 2^63 ns (292 years) at t=",
          "gpu 0 stream compute"},
         true,
         3,
         one_layer(std::int64_t{1} << 25, std::int64_t{1} << 25, 2, "1f1b")},
        {"GpipeActivationsBeyond2To62Bytes",
         "run DIR/scenario.json",
         {"activation memory of simulated GPU 0 passes 2^62 bytes"},
         true,
         2,
         one_layer(8, std::int64_t{1} << 28, 16, "gpipe")},
        {"MoreMicroBatchesThanTheEventBudget",
         "run " + k22b + " --set training.global_batch_size=1073741824",
         {"simulation cannot finish: the iteration needs at least 2.58e+10 events", "268435456 micro-batches",
          "--max-events=2000000000"},
         true,
         3},
    };
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
        s.replace(at, from.size(), to);
    }
    return s;
}

void PrintTo(const CliCase& c, std::ostream* os) {
    *os << c.name;
}

class CliCatalogue : public ::testing::TestWithParam<CliCase> {};

TEST_P(CliCatalogue, OneLineStatusAndNoFile) {
    const CliCase& c = GetParam();
    const fs::path dir = private_dir("cli");
    std::ofstream(dir / "file") << "not a directory";
    std::ofstream(dir / "broken.json") << "{\"schema\": ";
    std::vector<std::string> expected_files{"broken.json", "file"};
    if (!c.scenario.empty()) {
        std::ofstream(dir / "scenario.json") << c.scenario;
        expected_files.push_back("scenario.json");
    }
    const std::string trace = (dir / "trace.json").string();
    std::string args = replace_all(c.args, "DIR", dir.string());
    if (c.add_trace) {
        args += " --trace " + trace;
    }
    const auto r = testing::run_trainsim(args);
    EXPECT_EQ(r.status, c.status) << r.err;
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
    std::vector<std::string> expect;
    for (const std::string& e : c.expect) {
        expect.push_back(replace_all(e, "DIR", dir.string()));
    }
    expect_message(r.err.substr(0, r.err.size() - 1), expect);
    EXPECT_TRUE(r.out.empty()) << r.out;
    // Nothing was written: the directory holds what the test put there and nothing else.
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(dir)) {
        left.push_back(entry.path().filename().string());
    }
    std::sort(left.begin(), left.end());
    EXPECT_EQ(left, expected_files);
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Robustness, CliCatalogue, ::testing::ValuesIn(cli_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(Robustness, ScenarioThatDoesNotFitIsAResultNotAnError) {
    // Korthikanti Fig. 1: the 22B baseline (no recompute, no SP) exceeds 80 GB. That is an answer: exit 0,
    // fits_in_memory false, and the stage that overflows is named with its excess.
    const auto json_run = testing::run_trainsim("run " + k22b + " --format json");
    ASSERT_EQ(json_run.status, 0) << json_run.err;
    const json j = json::parse(json_run.out);
    EXPECT_FALSE(j["fits_in_memory"].get<bool>());
    EXPECT_GT(j["peak_memory_bytes"].get<std::int64_t>(), std::int64_t{80} << 30);
    const auto text = testing::run_trainsim("run " + k22b);
    ASSERT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("DOES NOT FIT"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("stage 0 is over by"), std::string::npos) << text.out;
}

// ---------------------------------------------------------------------------------------------------
// Runs that cannot finish: stopped by the event budget, with the ranks and what they wait for named.

TEST(Robustness, EventBudgetStopsAnIterationAndNamesTheRanks) {
    const config::Scenario sc =
        testing::shipped_scenario("korthikanti-175b", {{"training.global_batch_size", "16"}});
    const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    engine::RunOptions options;
    options.max_events = 1000;
    try {
        (void)program::simulate(prog, options);
        FAIL() << "the budget did not stop the run";
    } catch (const engine::SimulationError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("event budget of 1000 events exhausted at t="), std::string::npos) << m;
        EXPECT_NE(m.find("gpu "), std::string::npos) << m;
        EXPECT_NE(m.find(" waits at '"), std::string::npos) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
}

TEST(Robustness, CliMaxEventsStopsTheRunWithStatus3AndNoTrace) {
    const fs::path dir = private_dir("budget");
    const std::string trace = (dir / "trace.json").string();
    // 20000 events pass the up-front check (2 × 64 micro-batches × 96 layers = 12288) and run out midway.
    const auto r = testing::run_trainsim("run " + k175b + " --max-events 20000 --trace " + trace);
    EXPECT_EQ(r.status, 3) << r.err;
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("trainsim: simulation cannot finish: event budget of 20000 events exhausted"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("gpu "), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
    EXPECT_TRUE(fs::is_empty(dir));
    fs::remove_all(dir);
    // A budget that is large enough changes nothing.
    const auto ok = testing::run_trainsim("run " + k22b + " --max-events 100000 --format csv");
    EXPECT_EQ(ok.status, 0) << ok.err;
    EXPECT_EQ(ok.out, testing::run_trainsim("run " + k22b + " --format csv").out);
}

// ---------------------------------------------------------------------------------------------------
// The same answer every time: repeated runs, and folded against unfolded runs over a grid of small
// layouts (tests/iteration_test.cc's Folding test varies the knobs of one layout; this varies the layout).

struct Layout {
    int t, p, d, v;
    const char* schedule;
    const char* recompute;
    bool sp;
};

std::string describe(const Layout& l) {
    return "t=" + std::to_string(l.t) + " p=" + std::to_string(l.p) + " d=" + std::to_string(l.d) +
           " v=" + std::to_string(l.v) + " " + l.schedule + " " + l.recompute + (l.sp ? " sp" : "");
}

config::Scenario small_scenario(const Layout& l) {
    json doc = {{"model",
                 {{"num_layers", 2 * l.p * l.v},
                  {"hidden_size", 256},
                  {"num_attention_heads", 8},
                  {"seq_length", 128},
                  {"padded_vocab_size", 1024}}},
                {"parallelism",
                 {{"tensor_model_parallel_size", l.t},
                  {"pipeline_model_parallel_size", l.p},
                  {"data_parallel_size", l.d},
                  {"virtual_pipeline_model_parallel_size", l.v},
                  {"sequence_parallel", l.sp}}},
                {"training",
                 {{"micro_batch_size", 1},
                  {"global_batch_size", 2 * l.p * l.d},
                  {"recompute_granularity", l.recompute},
                  {"use_distributed_optimizer", l.d > 1}}},
                {"schedule", l.schedule},
                {"hardware", {{"profile", "a100-80gb-selene"}, {"gpus_per_node", 4}}}};
    return config::parse_scenario(doc.dump(), "small");
}

std::vector<Layout> layout_grid() {
    std::vector<Layout> grid;
    for (const int t : {1, 2, 8}) {  // inside a node of 4, and spanning two nodes
        for (const int p : {1, 2, 4}) {
            for (const int d : {1, 3}) {
                const bool sp = t > 1;
                grid.push_back({t, p, d, 1, "1f1b", sp ? "selective" : "none", sp});
                grid.push_back({t, p, d, 1, "gpipe", "full", false});
                if (p == 4) {
                    grid.push_back({t, p, d, 2, "interleaved", "selective", sp});
                    grid.push_back({t, p, d, 2, "breadth_first", "none", false});
                }
            }
        }
    }
    return grid;
}

struct RunSummary {
    std::string fingerprint;
    SimTime makespan{};
    std::int64_t peak = 0;
};

RunSummary run_once(const config::Scenario& sc, const program::Fold& fold) {
    static const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram prog = program::build_iteration(sc, cost, fold);
    const engine::RunResult result = program::simulate(prog);
    const report::IterationReport r = report::make_iteration_report(sc, cost, prog, result);
    return {r.fingerprint, result.makespan, r.peak_memory_bytes.value};
}

TEST(Determinism, FoldedAndUnfoldedAgreeOnAGridOfLayouts) {
    const std::vector<Layout> grid = layout_grid();
    ASSERT_GE(grid.size(), 40u);
    for (const Layout& l : grid) {
        const config::Scenario sc = small_scenario(l);
        const RunSummary folded = run_once(sc, {});
        const RunSummary unfolded = run_once(sc, {false, false});
        EXPECT_GT(folded.makespan, 0_ns) << describe(l);
        EXPECT_EQ(folded.makespan, unfolded.makespan) << describe(l);
        EXPECT_EQ(folded.peak, unfolded.peak) << describe(l);
        // Folding only tensor or only data peers lies between the two and must agree as well.
        EXPECT_EQ(run_once(sc, {true, false}).makespan, folded.makespan) << describe(l);
        EXPECT_EQ(run_once(sc, {false, true}).makespan, folded.makespan) << describe(l);
    }
}

TEST(Determinism, FingerprintsDoNotDependOnTheNumberOfWorkerThreads) {
    // trainsim sweep simulates its points on worker threads, each with its own runner and cost model.
    // State shared anywhere in the simulation (a static cache, a global counter, an address used as a
    // key) would make a point's events depend on what ran before or beside it: the fingerprints of the
    // grid, every GPU simulated, must be the same on 1, 2 and 4 threads, i.e. three runs of each layout
    // (tests/sweep_test.cc compares the CSVs, which carry no fingerprint).
    const std::vector<Layout> grid = layout_grid();
    const auto fingerprints = [&grid](unsigned jobs) {
        std::vector<std::string> out(grid.size());
        std::vector<std::unique_ptr<sweep::PointRunner>> runners;
        for (unsigned w = 0; w < jobs; ++w) {
            runners.push_back(std::make_unique<sweep::PointRunner>(testing::source_path("scenarios/hardware"),
                                                                   program::Fold{false, false}));
        }
        sweep::parallel_for(grid.size(), jobs, [&](std::size_t i, unsigned worker) {
            const sweep::PointOutcome o = runners[worker]->simulate(small_scenario(grid[i]));
            out[i] = o.report ? o.report->fingerprint : o.error;
        });
        return out;
    };
    const std::vector<std::string> one = fingerprints(1);
    EXPECT_EQ(fingerprints(2), one);
    EXPECT_EQ(fingerprints(4), one);
}

TEST(Determinism, CliOutputIsIdenticalAcrossProcesses) {
    // Separate processes (fresh address-space layout each time) print the same JSON, byte for byte, for a
    // run with every kind of communication and the overlapped-recompute scheduler, which picks its plan by
    // simulating candidates.
    const std::string args =
        "run " + k175b +
        " --set model.num_layers=24 --set parallelism.data_parallel_size=2"
        " --set training.global_batch_size=32 --set training.recompute_granularity=overlapped"
        " --format json";
    const auto a = testing::run_trainsim(args);
    const auto b = testing::run_trainsim(args);
    ASSERT_EQ(a.status, 0) << a.err;
    json ja = json::parse(a.out);
    json jb = json::parse(b.out);
    // The scheduler's own wall-clock time is the one field that may differ.
    ASSERT_TRUE(ja.contains("recompute_plan")) << a.out;
    ja["recompute_plan"].erase("search_time_s");
    jb["recompute_plan"].erase("search_time_s");
    EXPECT_EQ(ja, jb);
    EXPECT_EQ(ja["fingerprint"], jb["fingerprint"]);
}

}  // namespace
}  // namespace trainsim
