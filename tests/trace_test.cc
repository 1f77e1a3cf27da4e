// Traces that open: gzip'd JSON chosen by the extension, and subsets by rank and by time window.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "sim/report/gzip_stream.h"
#include "tests/support/json_file.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

// 175B's layout (t8 p8 v3: 64 GPUs folded to 8) with one layer per virtual stage and 8 micro-batches: every
// trace feature below on an eighth of the events (a trace costs 0.8 s instead of 4.8 s under the sanitizers).
const std::string k175b = testing::source_path("scenarios/korthikanti-175b.json") +
                          " --set model.num_layers=24 --set training.global_batch_size=8";

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string gunzip(const std::string& path) {
    gzFile f = gzopen(path.c_str(), "rb");
    EXPECT_NE(f, nullptr);
    std::string out;
    char buffer[1 << 16];
    int n = 0;
    while ((n = gzread(f, buffer, sizeof buffer)) > 0) {
        out.append(buffer, static_cast<std::size_t>(n));
    }
    gzclose(f);
    return out;
}

TEST(GzipStream, RoundTripsThroughZlib) {
    const std::string path = ::testing::TempDir() + "gzip_stream_test.gz";
    std::string text;
    for (int i = 0; i < 100000; ++i) {
        text += "line " + std::to_string(i) + "\n";
    }
    {
        std::ofstream file(path, std::ios::binary);
        report::GzipOStream out(file);
        out << text;
        out.finish();
    }
    EXPECT_EQ(gunzip(path), text);
    EXPECT_LT(std::filesystem::file_size(path), text.size() / 4);
}

// `--trace` to `plain`, then to `zipped` (its name + .gz): the second is the first, gzip'd, and at least
// `ratio` times smaller.
void expect_zipped_copy(const std::string& plain_name, std::uintmax_t ratio) {
    const std::string plain = ::testing::TempDir() + plain_name;
    const std::string zipped = plain + ".gz";
    ASSERT_EQ(testing::run_trainsim("run " + k175b + " --trace " + plain).status, 0);
    const auto r = testing::run_trainsim("run " + k175b + " --trace " + zipped);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string bytes = read_file(zipped);
    ASSERT_GE(bytes.size(), 2U);
    EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);  // gzip magic
    EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
    EXPECT_EQ(gunzip(zipped), read_file(plain));
    EXPECT_LT(bytes.size() * ratio, std::filesystem::file_size(plain));
}

TEST(Trace, GzExtensionWritesTheSameTraceCompressed) {
    expect_zipped_copy("trace_plain.json", 5);
}

#ifdef TRAINSIM_WITH_PROTOBUF
// FILE.pftrace.gz: the protobuf trace, gzip'd (it once wrote gzip'd JSON under that name).
TEST(Trace, PftraceGzWritesTheProtobufTraceCompressed) {
    expect_zipped_copy("trace_plain.pftrace", 3);
}
#endif

nlohmann::json trace_of(const std::string& extra, const std::string& name) {
    const std::string path = ::testing::TempDir() + name;
    const auto r = testing::run_trainsim("run " + k175b + " --trace " + path + " " + extra);
    EXPECT_EQ(r.status, 0) << r.err;
    return testing::read_json_file(path);
}

TEST(Trace, RanksKeepOnlyTheirGpus) {
    // t 8, p 8, d 1: 64 GPUs; folded, one per stage, ranks 0, 8, ..., 56.
    const nlohmann::json all = trace_of("", "trace_all.json");
    const nlohmann::json some = trace_of("--trace-ranks 0-15,56", "trace_some.json");
    std::set<int> pids;
    std::size_t all_slices = 0;
    std::size_t some_slices = 0;
    for (const auto& e : some["traceEvents"]) {
        pids.insert(e["pid"].get<int>());
        some_slices += e["ph"] == "X" ? 1 : 0;
    }
    for (const auto& e : all["traceEvents"]) {
        all_slices += e["ph"] == "X" ? 1 : 0;
    }
    EXPECT_EQ(pids, (std::set<int>{0, 1, 7}));
    EXPECT_GT(some_slices, 0U);
    EXPECT_LT(some_slices, all_slices);
}

TEST(Trace, WindowKeepsTheSlicesThatOverlapIt) {
    const nlohmann::json some = trace_of("--trace-window 0.1:0.2", "trace_window.json");
    std::size_t slices = 0;
    for (const auto& e : some["traceEvents"]) {
        if (e["ph"] == "X") {
            ++slices;
            const double ts = e["ts"].get<double>();
            // A compute task's ops are kept whole with their task: each op overlaps the task's span, so
            // allow one task's length either side.
            EXPECT_LE(ts, 0.2e6 + 1e5);
            EXPECT_GE(ts + e["dur"].get<double>(), 0.1e6 - 1e5);
        } else if (e["ph"] == "C") {
            EXPECT_GE(e["ts"].get<double>(), 0.1e6);
            EXPECT_LE(e["ts"].get<double>(), 0.2e6);
        }
    }
    EXPECT_GT(slices, 0U);
}

TEST(Trace, BadSelectionsAreOneLineErrorsAndWriteNothing) {
    const std::string path = ::testing::TempDir() + "trace_bad.json";
    std::filesystem::remove(path);
    for (const auto& [args, words] : std::vector<std::pair<std::string, std::string>>{
             {"--trace-ranks 1-7", "selects none of the simulated GPUs (ranks 0, 8, 16"},
             {"--trace-ranks 3-1", "'3-1' must be ranks in [0, 63], low to high"},
             {"--trace-ranks x", "'x' is not a rank"},
             {"--trace-window 2", "must be START:END in seconds"},
             {"--trace-window 2:1", "END must not be before START"},
             {"--trace-window -1:", "is not a time ≥ 0"}}) {
        const auto r = testing::run_trainsim("run " + k175b + " --trace " + path + " " + args);
        EXPECT_EQ(r.status, 2) << args;
        EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
        EXPECT_FALSE(std::filesystem::exists(path)) << args;
    }
    const auto r = testing::run_trainsim("run " + k175b + " --trace-ranks 0");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--trace-ranks needs --trace FILE"), std::string::npos);
}

}  // namespace
}  // namespace trainsim
