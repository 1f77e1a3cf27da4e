// schemas/profile.schema.json against the profile reader and writer: every key the writer writes for the
// shipped profiles (and for one with every optional section) is a key of the schema, every key of the
// schema is written for one of them or is a note or assumptions list the reader accepts there, and an
// object the schema closes refuses an unknown key in the reader too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/core/input_error.h"
#include "sim/cost/hardware_profile.h"
#include "sim/cost/profile_reader.h"
#include "sim/cost/profile_writer.h"
#include "tests/json_schema_tree.h"
#include "tests/test_support.h"

namespace trainsim::cost {
namespace {

using testing::JsonSchemaTree;

const JsonSchemaTree& profile_schema() {
    return JsonSchemaTree::shipped("profile.schema.json");
}

std::string hardware_dir() {
    return testing::source_path("scenarios/hardware");
}

// The shipped profiles, by name.
std::vector<HardwareProfile> shipped_profiles() {
    std::vector<HardwareProfile> out;
    for (const auto& entry : std::filesystem::directory_iterator(hardware_dir())) {
        if (entry.path().extension() == ".json") {
            out.push_back(load_hardware_profile(entry.path().stem().string(), hardware_dir()));
        }
    }
    return out;
}

// Gives every curve of `document` its provenance both on the curve and on each point (the reader takes
// either, and the shipped profiles each use one).
void provenance_on_curves_and_points(Json& document) {
    if (document.is_array()) {
        for (Json& element : document) {
            provenance_on_curves_and_points(element);
        }
        return;
    }
    if (!document.is_object()) {
        return;
    }
    if (document.contains("points")) {
        if (!document.contains("kind")) {
            document["kind"] = "assumed";
            document["source"] = "written by this test";
        }
        for (Json& point : document["points"]) {
            if (!point.contains("kind")) {
                point["kind"] = "assumed";
                point["source"] = "written by this test";
            }
        }
    }
    for (auto& [key, value] : document.items()) {
        provenance_on_curves_and_points(value);
    }
}

// H100's profile with every optional section and value the format has: its own FP8, FlashAttention,
// head-dimension-64 and contention sections, A100's variability (kernel jitter included) restated as
// assumed values so that they need no citation, and every curve's provenance on both levels.
HardwareProfile every_optional_section() {
    HardwareProfile p = load_hardware_profile("h100-80gb-dgx", hardware_dir());
    const HardwareProfile a100 = load_hardware_profile("a100-80gb-selene", hardware_dir());
    p.variability = a100.variability;
    for (const std::string key : {"variability.gpu_slowdown_stddev", "variability.kernel_jitter_stddev"}) {
        p.provenance.values[key] = {"assumed", "copied from a100-80gb-selene by this test"};
    }
    Json document = profile_to_json(p);
    provenance_on_curves_and_points(document);
    return profile_from_json(p.name, document);
}

// Each written profile as the reader reads it back (so the documents below are the format, not a guess).
std::vector<Json> written_profiles() {
    std::vector<Json> out;
    for (const HardwareProfile& p : shipped_profiles()) {
        out.push_back(profile_to_json(p));
    }
    out.push_back(profile_to_json(every_optional_section()));
    return out;
}

TEST(ProfileJsonSchema, EveryKeyTheWriterWritesIsInTheSchema) {
    const auto documents = written_profiles();
    ASSERT_GE(documents.size(), 6U);
    for (const Json& document : documents) {
        std::vector<std::string> unknown;
        (void)profile_schema().document_paths(document, unknown);
        EXPECT_EQ(unknown, std::vector<std::string>{}) << document.at("name");
    }
}

// A key the schema has but no written profile uses: a note or assumptions list (documentation the reader
// allows where the schema does), or a key the reader does not read.
TEST(ProfileJsonSchema, EveryKeyOfTheSchemaIsWrittenOrANote) {
    std::set<std::string> written;
    for (const Json& document : written_profiles()) {
        std::vector<std::string> unknown;
        const auto paths = profile_schema().document_paths(document, unknown);
        written.insert(paths.begin(), paths.end());
    }
    for (const std::string& path : profile_schema().property_paths()) {
        const bool documentation = path.ends_with("note") || path.find("assumptions") != std::string::npos;
        EXPECT_TRUE(written.count(path) != 0 || documentation)
            << path << " is in the schema but the writer writes it for no profile";
    }
}

// The object of `document` at a path in property_paths() spelling ("a.b[].c": the first element).
Json* object_at(Json& document, const std::string& path) {
    Json* at = &document;
    std::size_t begin = 0;
    while (begin < path.size()) {
        const std::size_t dot = std::min(path.find('.', begin), path.size());
        std::string key = path.substr(begin, dot - begin);
        const bool element = key.ends_with("[]");
        if (element) {
            key.resize(key.size() - 2);
        }
        if (!at->is_object() || !at->contains(key)) {
            return nullptr;
        }
        at = &(*at)[key];
        if (element) {
            if (!at->is_array() || at->empty()) {
                return nullptr;
            }
            at = &(*at)[0];
        }
        begin = dot + 1;
    }
    return at->is_object() ? at : nullptr;
}

std::string read_error(const Json& document) {
    try {
        (void)profile_from_json("h100-80gb-dgx", parse_strict_json(document.dump(), "test"));
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

// Where the schema allows a note or an assumptions list, the reader reads one; every object the schema
// closes (additionalProperties false) the reader closes too.
TEST(ProfileJsonSchema, TheReaderAcceptsANoteOrAssumptionsWhereTheSchemaDoesAndNothingElse) {
    const Json base = profile_to_json(every_optional_section());
    ASSERT_EQ(read_error(base), "");
    int notes = 0;
    int assumption_lists = 0;
    int closed = 0;
    for (const std::string& path : profile_schema().property_paths()) {
        const std::size_t dot = path.rfind('.');
        const std::string parent = dot == std::string::npos ? "" : path.substr(0, dot);
        const std::string key = path.substr(dot == std::string::npos ? 0 : dot + 1);
        if (key != "note" && key != "assumptions") {
            continue;
        }
        Json document = base;
        Json* object = object_at(document, parent);
        if (object == nullptr || object->contains(key)) {
            continue;  // the object is not in this profile, or already has one
        }
        if (key == "note") {
            (*object)["note"] = "a note";
            ++notes;
        } else {
            (*object)["assumptions"] =
                Json::array({{{"what", "a test"}, {"kind", "assumed"}, {"source", "this test"}}});
            ++assumption_lists;
        }
        EXPECT_EQ(read_error(document), "") << "the schema allows " << path;
    }
    // Every object the schema describes and the profile has, closed in the schema: an unknown key fails.
    std::vector<std::string> unused;
    std::set<std::string> objects = profile_schema().document_paths(base, unused);
    objects.insert("");
    for (const std::string& path : objects) {
        Json document = base;
        Json* object = object_at(document, path);
        if (object == nullptr || path.ends_with(".*") || path == "sources") {
            continue;  // not an object here, or the sources map (any id)
        }
        ++closed;
        (*object)["an_unknown_key"] = 1;
        const std::string error = read_error(document);
        EXPECT_NE(error.find("an_unknown_key is not a known key"), std::string::npos)
            << path << ": " << (error.empty() ? "accepted" : error);
    }
    // Enough of each to mean something (H100's profile already has notes in some places and assumptions in
    // all but one section that takes them).
    EXPECT_GT(notes, 50);
    EXPECT_GE(assumption_lists, 1);
    EXPECT_GT(closed, 80);
}

// The kinds of a value's provenance are the reader's: each is accepted (citing a source where it must) and
// a near miss is refused.
TEST(ProfileJsonSchema, KindsAreTheReadersKinds) {
    const Json& kinds = profile_schema().schema().at("$defs").at("kind").at("enum");
    ASSERT_EQ(kinds.size(), 5U);
    Json base = profile_to_json(every_optional_section());
    const std::string cited = base.at("gpu").at("hbm_GBps").at("source").get<std::string>();
    for (const Json& kind : kinds) {
        Json document = base;
        document["gpu"]["hbm_GBps"]["kind"] = kind;
        EXPECT_EQ(read_error(document), "") << kind;
    }
    base["gpu"]["hbm_GBps"]["kind"] = "estimated";
    EXPECT_NE(read_error(base).find("gpu.hbm_GBps.kind must be one of"), std::string::npos)
        << read_error(base);
    EXPECT_FALSE(cited.empty());
}

}  // namespace
}  // namespace trainsim::cost
