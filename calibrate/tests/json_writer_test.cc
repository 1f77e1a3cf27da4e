// The profile-style JSON writer: fitted profiles are reviewed as diffs against hand-written ones.
#include <gtest/gtest.h>

#include "calibrate/measure/json_writer.h"
#include "calibrate/measure/source_id.h"
#include "calibrate/tests/calibrate_test_support.h"

namespace trainsim::calibrate {
namespace {

TEST(JsonWriter, RewritesTheShippedProfileByteForByte) {
    const std::string text = read_text_file(testing::source_path("scenarios/hardware/a100-80gb-selene.json"));
    EXPECT_EQ(to_profile_style_json(OrderedJson::parse(text)), text);
}

TEST(JsonWriter, FloatsKeepTheirTypeAndShortestForm) {
    EXPECT_EQ(format_json_float(5.0), "5.0");
    EXPECT_EQ(format_json_float(0.28), "0.28");
    EXPECT_EQ(format_json_float(1.7e10), "1.7e+10");
    EXPECT_EQ(format_json_float(1e14), "1e+14");
    EXPECT_EQ(format_json_float(18.0), "18.0");
    // Read back, every form is the same double and still a float.
    for (const double v : {5.0, 0.28, 1.7e10, 1e14, 0.1 + 0.2}) {
        const OrderedJson j = OrderedJson::parse(format_json_float(v));
        EXPECT_TRUE(j.is_number_float());
        EXPECT_EQ(j.get<double>(), v);
    }
}

TEST(JsonWriter, ScalarObjectsInlineOthersExpanded) {
    const OrderedJson doc = OrderedJson::parse(
        R"({"sources": {"S-A": "a", "S-B": "b"}, "v": {"value": 1, "kind": "k"}, "c": {"points": [{"x": 1, "y": 2.5}]},
            "tags": ["a", "b"], "empty": []})");
    EXPECT_EQ(to_profile_style_json(doc), "{\n"
                                          "  \"sources\": {\n"
                                          "    \"S-A\": \"a\",\n"
                                          "    \"S-B\": \"b\"\n"
                                          "  },\n"
                                          "  \"v\": {\"value\": 1, \"kind\": \"k\"},\n"
                                          "  \"c\": {\n"
                                          "    \"points\": [\n"
                                          "      {\"x\": 1, \"y\": 2.5}\n"
                                          "    ]\n"
                                          "  },\n"
                                          "  \"tags\": [\"a\", \"b\"],\n"
                                          "  \"empty\": []\n"
                                          "}\n");
}

TEST(SourceId, FromTheFileNameInTheProfilesPattern) {
    EXPECT_EQ(source_id_for_path("calibrate/data/a100-all_reduce_perf.log"), "S-DATA-A100-ALL-REDUCE-PERF");
    EXPECT_EQ(source_id_for_path("/tmp/x/run.json"), "S-DATA-RUN");
    EXPECT_EQ(source_id_for_path("__weird..name__.txt"), "S-DATA-WEIRD-NAME");
    EXPECT_TRUE(is_source_id(source_id_for_path("a b.c")));
}

TEST(SourceId, CitedIdsFollowTheLoadersPattern) {
    EXPECT_EQ(cited_source_ids("S-AZURE: 1024^3 and S-ELEUTHER, not XS-NOPE"),
              (std::vector<std::string>{"S-AZURE", "S-ELEUTHER"}));
    EXPECT_EQ(cited_source_ids("(S-NCCL-SRC) S-A- and S- and S-x"),
              (std::vector<std::string>{"S-NCCL-SRC", "S-A"}));
    EXPECT_TRUE(is_source_id("S-DATA-A100-RUN"));
    EXPECT_FALSE(is_source_id("S-A-"));
    EXPECT_FALSE(is_source_id("S-"));
    EXPECT_FALSE(is_source_id("S-a"));
    EXPECT_FALSE(is_source_id("X-A"));
}

}  // namespace
}  // namespace trainsim::calibrate
