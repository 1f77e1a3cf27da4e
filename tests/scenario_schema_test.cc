// schemas/scenario.schema.json against the scenario reader: the same keys in every section, the same enum
// spellings, the same required keys, and the one key ("$schema") the schema adds for editors. A key added to
// scenario_sections() without its schema entry (or the reverse) fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "sim/config/model_presets.h"
#include "sim/config/scenario_enums.h"
#include "sim/config/scenario_schema.h"
#include "sim/config/topology_presets.h"
#include "sim/core/input_error.h"
#include "tests/json_schema_tree.h"
#include "tests/test_support.h"

namespace trainsim::config {
namespace {

using testing::JsonSchemaTree;

const JsonSchemaTree& scenario_schema() {
    return JsonSchemaTree::shipped("scenario.schema.json");
}

std::vector<std::string> sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
}

// What one side has and the other lacks, one line each ("schema lacks model.swiglu").
std::vector<std::string> differences(const std::string& section, const std::vector<std::string>& reader,
                                     const std::vector<std::string>& schema) {
    std::vector<std::string> out;
    const auto prefix = [&](const std::string& key) { return section.empty() ? key : section + "." + key; };
    for (const auto& key : reader) {
        if (std::find(schema.begin(), schema.end(), key) == schema.end()) {
            out.push_back("schema lacks " + prefix(key));
        }
    }
    for (const auto& key : schema) {
        if (std::find(reader.begin(), reader.end(), key) == reader.end()) {
            out.push_back("reader lacks " + prefix(key));
        }
    }
    return out;
}

// Every difference between the schema's keys and the reader's tables: the top level (with "$schema"), each
// section of scenario_sections(), and no object in the schema that is not a section.
std::vector<std::string> key_drift(const JsonSchemaTree& tree) {
    std::vector<std::string> top = top_level_keys();
    top.emplace_back(kSchemaReferenceKey);
    std::vector<std::string> out = differences("", top, tree.property_names(""));
    for (const SectionSchema& section : scenario_sections()) {
        const std::string name(section.name);
        std::vector<std::string> schema_keys;
        try {
            schema_keys = tree.property_names(name);
        } catch (const std::exception&) {
            out.push_back("schema lacks the section " + name);
            continue;
        }
        const auto more = differences(name, section.keys, schema_keys);
        out.insert(out.end(), more.begin(), more.end());
    }
    for (const std::string& path : tree.property_paths()) {
        const bool is_object_schema = [&] {
            try {
                return tree.object_at(path).value("type", Json()) == "object";
            } catch (const std::exception&) {
                return false;  // an array element or map entry: not a section
            }
        }();
        const auto& sections = scenario_sections();
        if (is_object_schema && std::none_of(sections.begin(), sections.end(),
                                             [&](const SectionSchema& s) { return s.name == path; })) {
            out.push_back("the schema's object " + path + " is no section of the reader");
        }
    }
    return out;
}

TEST(ScenarioJsonSchema, KeysAreTheReadersKeys) {
    EXPECT_EQ(key_drift(scenario_schema()), std::vector<std::string>{});
}

// The comparison above can fail: a key missing from the schema, one the reader does not know, and a
// section the reader lacks are each reported.
TEST(ScenarioJsonSchema, KeyDriftIsReported) {
    JsonSchemaTree tree = scenario_schema();
    tree.schema()["$defs"]["model"]["properties"].erase("swiglu");
    tree.schema()["$defs"]["training"]["properties"]["micro_batch_szie"] = Json::object();
    tree.schema()["$defs"]["variability"]["properties"]["extra"] = {{"type", "object"},
                                                                    {"properties", Json::object()}};
    EXPECT_EQ(key_drift(tree), (std::vector<std::string>{
                                   "schema lacks model.swiglu", "reader lacks training.micro_batch_szie",
                                   "reader lacks variability.extra",
                                   "the schema's object variability.extra is no section of the reader"}));
}

struct EnumKey {
    std::string path;
    std::vector<std::string> names;
    bool nullable;
};

// Each key the reader reads through an enum table (sim/config/scenario_reader.cc), with the table's names.
std::vector<EnumKey> enum_keys() {
    return {
        {"model.preset", model_preset_names(), false},
        {"model.normalization", enum_names(kNormalizationNames), false},
        {"model.position_embedding_type", enum_names(kPositionEmbeddingTypeNames), false},
        {"model.moe_token_dispatcher_type", enum_names(kMoeTokenDispatcherNames), false},
        {"parallelism.cp_comm_type", enum_names(kCpCommTypeNames), false},
        {"parallelism.data_parallel_sharding_strategy", enum_names(kDataParallelShardingNames), false},
        {"training.recompute_granularity", enum_names(kRecomputeGranularityNames), true},
        {"training.recompute_method", enum_names(kRecomputeMethodNames), true},
        {"training.recompute_modules[]", enum_names(kRecomputeModuleNames), false},
        {"training.recompute_scheduler", enum_names(kRecomputeSchedulerNames), true},
        {"training.attention_backend", enum_names(kAttentionBackendNames), false},
        {"training.fp8_format", enum_names(kFp8FormatNames), true},
        {"training.fp8_recipe", enum_names(kFp8RecipeNames), true},
        {"training.main_grads_dtype", enum_names(kMainGradsDtypeNames), false},
        {"training.exp_avg_dtype", enum_names(kExpAvgDtypeNames), false},
        {"training.exp_avg_sq_dtype", enum_names(kExpAvgDtypeNames), false},
        {"schedule", enum_names(kScheduleNames), false},
        {"hardware.network_model", enum_names(kNetworkModelNames), false},
        {"hardware.collective_contention", enum_names(kCollectiveContentionNames), false},
        {"hardware.compute_contention", enum_names(kComputeContentionNames), false},
        {"hardware.topology.preset", topology_preset_names(), false},
        {"hardware.topology.kind", enum_names(kFabricKindNames), false},
        {"variability.mode", enum_names(kVariabilityModeNames), false},
    };
}

// The "enum" of the key at `path` ("a.b", "a.b[]" for a list's elements), wherever the schema puts it:
// on the key itself or inside one of its anyOf alternatives.
std::optional<Json> schema_enum(const JsonSchemaTree& tree, const std::string& path) {
    const bool element = path.ends_with("[]");
    const std::string key_path = element ? path.substr(0, path.size() - 2) : path;
    const std::size_t dot = key_path.rfind('.');
    const Json& parent = tree.object_at(dot == std::string::npos ? "" : key_path.substr(0, dot));
    const Json& key = tree.resolve(parent.at("properties").at(key_path.substr(dot + 1)));
    std::vector<const Json*> candidates{&key};
    if (key.contains("anyOf")) {
        for (const Json& alternative : key.at("anyOf")) {
            candidates.push_back(&tree.resolve(alternative));
        }
    }
    for (const Json* c : candidates) {
        const Json* holder = element ? (c->contains("items") ? &tree.resolve(c->at("items")) : nullptr) : c;
        if (holder != nullptr && holder->contains("enum")) {
            return holder->at("enum");
        }
    }
    return std::nullopt;
}

TEST(ScenarioJsonSchema, EnumsAreTheParsersNames) {
    for (const EnumKey& key : enum_keys()) {
        const std::optional<Json> names = schema_enum(scenario_schema(), key.path);
        ASSERT_TRUE(names.has_value()) << key.path << " has no enum in the schema";
        std::vector<std::string> strings;
        bool has_null = false;
        for (const Json& n : *names) {
            if (n.is_null()) {
                has_null = true;
            } else {
                strings.push_back(n.get<std::string>());
            }
        }
        EXPECT_EQ(sorted(strings), sorted(key.names)) << key.path;
        EXPECT_EQ(has_null, key.nullable) << key.path << ": null in the schema's enum";
    }
}

// An enum the schema gives that the list above does not check would drift unnoticed.
TEST(ScenarioJsonSchema, EveryEnumOfTheSchemaIsChecked) {
    const auto keys = enum_keys();
    int enums = 0;
    for (const std::string& key : scenario_schema().property_paths()) {
        // A key's own enum, or its list elements' (inside an anyOf, which property_paths does not walk).
        for (const std::string& path : {key, key + "[]"}) {
            if (key.ends_with("[]") || !schema_enum(scenario_schema(), path)) {
                continue;
            }
            ++enums;
            EXPECT_TRUE(
                std::any_of(keys.begin(), keys.end(), [&](const EnumKey& k) { return k.path == path; }))
                << path << " has an enum in the schema that this test does not compare with the reader's";
        }
    }
    EXPECT_EQ(enums, static_cast<int>(keys.size()));
}

// A minimal scenario: every key the schema requires and nothing else.
Json minimal_scenario() {
    return Json::parse(R"({
        "model": {"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "seq_length": 32,
                  "padded_vocab_size": 128},
        "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1},
        "training": {"micro_batch_size": 1, "global_batch_size": 1},
        "hardware": {"profile": "a100-80gb-selene"}})");
}

std::string error_of(const Json& document) {
    try {
        (void)parse_scenario(document.dump(), "schema-test");
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

// The schema's "required" lists are the keys whose absence the reader refuses: each one removed from the
// minimal scenario fails with "required key is missing", and the model's sizes are required unless a preset.
TEST(ScenarioJsonSchema, RequiredKeysAreTheReadersRequiredKeys) {
    ASSERT_EQ(error_of(minimal_scenario()), "");
    const JsonSchemaTree& tree = scenario_schema();
    EXPECT_EQ(sorted(tree.object_at("").at("required").get<std::vector<std::string>>()),
              sorted({"hardware", "model", "parallelism", "training"}));
    for (const std::string section : {"parallelism", "training", "hardware"}) {
        const auto required = tree.object_at(section).at("required").get<std::vector<std::string>>();
        const Json minimal = minimal_scenario();  // a temporary's member would die before the loop (C++20)
        for (const auto& [key, value] : minimal.at(section).items()) {
            EXPECT_NE(std::find(required.begin(), required.end(), key), required.end())
                << section << "." << key << " is in the minimal scenario but not required by the schema";
        }
        for (const std::string& key : required) {
            Json document = minimal_scenario();
            document[section].erase(key);
            EXPECT_EQ(error_of(document), section + "." + key + ": required key is missing");
        }
    }
    // model: anyOf [{required: [preset]}, {required: the five sizes}].
    const Json& alternatives = tree.object_at("model").at("anyOf");
    ASSERT_EQ(alternatives.size(), 2U);
    EXPECT_EQ(alternatives[0].at("required"), Json::array({"preset"}));
    for (const auto& key : alternatives[1].at("required")) {
        Json document = minimal_scenario();
        document["model"].erase(key.get<std::string>());
        EXPECT_TRUE(
            error_of(document).starts_with("model." + key.get<std::string>() + ": required key is missing"))
            << error_of(document);
    }
    EXPECT_EQ(alternatives[1].at("required").size(), minimal_scenario().at("model").size());
}

// "$schema" (for editors) is read at the top level only, as a string, and changes nothing.
TEST(ScenarioJsonSchema, SchemaReferenceIsAcceptedAtTheTopLevelOnly) {
    Json with = minimal_scenario();
    with["$schema"] = "../schemas/scenario.schema.json";
    EXPECT_EQ(error_of(with), "");
    EXPECT_EQ(parse_scenario(with.dump(), "x").model.num_layers, 2);
    with["$schema"] = 3;
    EXPECT_EQ(error_of(with),
              "$schema: expected a string (the JSON Schema the file follows, for editors), got 3");
    Json nested = minimal_scenario();
    nested["model"]["$schema"] = "x";
    EXPECT_TRUE(error_of(nested).starts_with("model.$schema: unknown key")) << error_of(nested);
    Json other = minimal_scenario();
    other["$id"] = "x";
    EXPECT_TRUE(error_of(other).starts_with("$id: unknown key")) << error_of(other);
    // Not a setting: --set does not know it.
    EXPECT_THROW((void)parse_scenario(minimal_scenario().dump(), "x", {{"$schema", "\"y\""}}), InputError);
}

}  // namespace
}  // namespace trainsim::config
