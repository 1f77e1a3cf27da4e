// Bad input: one line on stderr naming the file or key and the rule, exit status 2, nothing written.
#include <gtest/gtest.h>

#include <filesystem>

#include "calibrate/measure/json_writer.h"
#include "calibrate/measure/source_id.h"
#include "calibrate/tests/calibrate_test_support.h"

namespace trainsim::calibrate {
namespace {

namespace fs = std::filesystem;

// Runs `args`, expects exit 2 and one line containing `expected`, and that `output` was not written.
void expect_rejected(const std::string& args, const std::string& expected, const std::string& output = "") {
    const testing::CommandResult r = testing::calibrate(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << "stderr: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "not one line: " << r.err;
    if (!output.empty()) {
        EXPECT_FALSE(fs::exists(output)) << output;
        // No temporary left beside it either.
        for (const auto& entry : fs::directory_iterator(fs::path(output).parent_path())) {
            EXPECT_EQ(entry.path().filename().string().find(".trainsim-fit"), std::string::npos)
                << entry.path();
        }
    }
}

TEST(CliErrors, AMalformedLogIsNamedByFileAndLine) {
    const testing::TempDir dir;
    const std::string log = dir.path("bad.log");
    testing::write_file(log, "# all_reduce_perf\n# nThread 1 nGpus 8\n  1024  256  float  sum  -1  10.0\n");
    expect_rejected("fit --base a100-80gb-selene '" + log + "' --output '" + dir.path("out.json") + "'",
                    "trainsim-calibrate fit: " + log + ":3: a result row is size count type [redop] [root]",
                    dir.path("out.json"));
    expect_rejected("import '" + log + "' --output '" + dir.path("out.json") + "'", log + ":3: a result row",
                    dir.path("out.json"));
}

TEST(CliErrors, ASpecDirectiveWithATypoIsNamed) {
    const testing::TempDir dir;
    OrderedJson spec =
        OrderedJson::parse(read_text_file(testing::source_path("calibrate/data/a100-80gb-selene.fit.json")));
    spec["profile"]["network"]["intra_node"]["p2p_GBps"]["fit"]["decimal"] = 1;
    for (auto& input : spec["inputs"]) {  // the copy lives elsewhere: point at the kept data
        input["file"] = testing::source_path("calibrate/data/" + input["file"].get<std::string>());
    }
    const std::string path = dir.path("spec.json");
    testing::write_file(path, to_profile_style_json(spec));
    expect_rejected(
        "fit --spec '" + path + "' --output '" + dir.path("a100.json") + "'",
        path + ": network.intra_node.p2p_GBps.fit.decimal is not a known key (did you mean 'decimals'?)",
        dir.path("a100.json"));
}

TEST(CliErrors, ADirectiveWhereNothingIsFittedIsNamed) {
    const testing::TempDir dir;
    OrderedJson spec =
        OrderedJson::parse(read_text_file(testing::source_path("calibrate/data/a100-80gb-selene.fit.json")));
    spec["profile"]["gpu"]["memory_reserved_bytes"]["fit"] = OrderedJson::object();
    for (auto& input : spec["inputs"]) {
        input["file"] = testing::source_path("calibrate/data/" + input["file"].get<std::string>());
    }
    const std::string path = dir.path("spec.json");
    testing::write_file(path, to_profile_style_json(spec));
    expect_rejected(
        "fit --spec '" + path + "' --output '" + dir.path("a100.json") + "'",
        path + ": gpu.memory_reserved_bytes.fit asks to fit gpu.memory_reserved_bytes, which is not fittable",
        dir.path("a100.json"));
}

TEST(CliErrors, AProfileTheLoaderRejectsIsNotWritten) {
    // An all-reduce table faster than the base profile's NCCL latency, with nothing to refit the latency
    // from: the simulator's loader refuses the result, so no file appears.
    const testing::TempDir dir;
    const std::string m = dir.path("fast.json");
    testing::write_file(
        m, R"({"schema": "trainsim-measurements/1", "description": "too fast", "sources": {"S-T": "test"},
        "collectives": [{"op": "all_reduce", "ranks": 8, "bytes": 1024, "time_us": 2.0, "source": "S-T"},
                        {"op": "all_reduce", "ranks": 8, "bytes": 4096, "time_us": 3.0, "source": "S-T"}]})");
    expect_rejected("fit --base a100-80gb-selene '" + m + "' --output '" + dir.path("fast-profile.json") +
                        "'",
                    "the fitted profile does not load, nothing written: profile fast-profile: "
                    "network.intra_node.latency_base_us gives an all-reduce latency of 15 us",
                    dir.path("fast-profile.json"));
}

TEST(CliErrors, OptionsAreCheckedByName) {
    const testing::TempDir dir;
    expect_rejected("run --backend tpu --output '" + dir.path("x.json") + "'",
                    "--backend=tpu must be cpu or cuda", dir.path("x.json"));
    expect_rejected("run --backend cpu", "--output is required");
    expect_rejected("import calibrate/data/a100-all_reduce_perf.log --op all_to_all --output '" +
                        dir.path("x.json") + "'",
                    "--op=all_to_all must be one of all_reduce, all_gather, reduce_scatter, send_recv",
                    dir.path("x.json"));
    expect_rejected("fit calibrate/data/a100-all_reduce_perf.log --output '" + dir.path("x.json") + "'",
                    "give exactly one of --base PROFILE");
    expect_rejected("fit --base no-such-profile calibrate/data/a100-all_reduce_perf.log --output '" +
                        dir.path("x.json") + "'",
                    "--base=no-such-profile: hardware.profile: no profile named 'no-such-profile'");
    expect_rejected("compare a100-80gb-selene",
                    "needs PROFILE SCENARIO or PROFILE_A PROFILE_B SCENARIO, got 1");
    expect_rejected("compare a100-80gb-selene calibrate/tests/data/tiny-scenario.json --format yaml",
                    "--format=yaml must be text or json");
    expect_rejected("frobnicate", "unknown command 'frobnicate'");
}

}  // namespace
}  // namespace trainsim::calibrate
