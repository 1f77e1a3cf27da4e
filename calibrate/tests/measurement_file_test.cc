// The measurement file: strict reading, and what `import` writes reads back to the same records.
#include <gtest/gtest.h>

#include "calibrate/import/nccl_tests_log.h"
#include "calibrate/measure/measurement_file.h"
#include "calibrate/tests/calibrate_test_support.h"
#include "sim/core/input_error.h"

namespace trainsim::calibrate {
namespace {

std::string error_of(const std::string& text) {
    try {
        (void)parse_measurement_file(text, "m.json");
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

std::string with_gemm(const std::string& record) {
    return R"({"schema": "trainsim-measurements/1", "description": "d", "sources": {"S-X": "somewhere"},
              "gemm": [)" +
           record + "]}";
}

TEST(MeasurementFile, ThePublishedA100FileReads) {
    const MeasurementSet set =
        read_measurement_file(testing::source_path("calibrate/data/a100-published.measurements.json"));
    EXPECT_EQ(set.gemms.size(), 16U);
    EXPECT_EQ(set.kernels.size(), 10U);
    EXPECT_EQ(set.collectives.size(), 11U);
    const auto cube = std::find_if(set.gemms.begin(), set.gemms.end(),
                                   [](const GemmMeasurement& g) { return g.origin.record == "azure-1024"; });
    ASSERT_NE(cube, set.gemms.end());
    EXPECT_DOUBLE_EQ(cube->achieved_tflops(), 119.4);  // as published, no round trip through a time
    EXPECT_EQ(set.files[0].source_id, "S-DATA-A100-PUBLISHED-MEASUREMENTS");
}

TEST(MeasurementFile, RecordsAreCheckedOneRuleAtATime) {
    const std::string ok = R"({"id": "a", "m": 8, "n": 8, "k": 8, "time_us": 1.5, "source": "S-X: table 1"})";
    EXPECT_EQ(parse_measurement_file(with_gemm(ok), "m.json").gemms.size(), 1U);
    EXPECT_EQ(error_of(with_gemm(R"({"m": 8, "n": 8, "k": 8, "time_us": 1, "tflop": 2, "source": "S-X"})")),
              "m.json: gemm[0].tflop is not a known key (did you mean 'tflops'?)");
    EXPECT_EQ(error_of(with_gemm(R"({"m": 8, "n": 8, "k": 8, "time_us": 1, "tflops": 2, "source": "S-X"})")),
              "m.json: gemm[0] must give only one of time_us, tflops, got time_us and tflops");
    EXPECT_EQ(error_of(with_gemm(R"({"m": 8.5, "n": 8, "k": 8, "time_us": 1, "source": "S-X"})")),
              "m.json: gemm[0].m must be an integer (no decimal point or exponent), got 8.5");
    EXPECT_EQ(error_of(with_gemm(R"({"m": 8, "n": 8, "k": 8, "time_us": 1, "source": "S-Y: elsewhere"})")),
              "m.json: gemm[0].source cites 'S-Y', which is not in the sources table");
    EXPECT_EQ(error_of(with_gemm(R"({"m": 8, "n": 8, "k": 8, "time_us": 1, "source": "a friend"})")),
              "m.json: gemm[0].source must cite an id of the file's sources table (S-...)");
    EXPECT_EQ(error_of(with_gemm(ok + "," + ok)),
              "m.json: gemm[1].id repeats the id 'a' of an earlier record");
    EXPECT_EQ(error_of(with_gemm(R"({"m": 8, "n": 8, "k": 8, "time_us": -1, "source": "S-X"})")),
              "m.json: gemm[0].time_us must be greater than 0, got -1");
    EXPECT_EQ(error_of(R"({"schema": "trainsim-measurements/1", "description": "d", "sources": {"S-X": "x"},
        "collectives": [{"op": "all_reduce", "ranks": 4294967298, "bytes": 8, "time_us": 1, "source": "S-X"}]})"),
              "m.json: collectives[0].ranks must be at most 1000000, got 4294967298");
    EXPECT_EQ(error_of(R"({"schema": "trainsim-measurements/2", "description": "d", "sources": {}})"),
              "m.json: schema must be \"trainsim-measurements/1\", got \"trainsim-measurements/2\"");
    EXPECT_EQ(error_of(R"({"schema": "trainsim-measurements/1", "description": "d", "sources": {}})"),
              "m.json: the document has no records (gemm, kernels or collectives)");
}

TEST(MeasurementFile, WhatImportWritesReadsBack) {
    NcclLogOptions options;
    options.ranks = 8;
    const MeasurementSet log =
        read_nccl_tests_log(testing::source_path("calibrate/data/a100-sendrecv_perf.log"), options);
    const testing::TempDir dir;
    const std::string path = dir.path("sendrecv.json");
    testing::write_file(path, to_profile_style_json(to_measurement_json(log, "test")));
    const MeasurementSet back = read_measurement_file(path);
    ASSERT_EQ(back.collectives.size(), log.collectives.size());
    for (std::size_t i = 0; i < log.collectives.size(); ++i) {
        EXPECT_EQ(back.collectives[i].bytes, log.collectives[i].bytes);
        EXPECT_EQ(back.collectives[i].placement, log.collectives[i].placement);
        EXPECT_DOUBLE_EQ(*back.collectives[i].busbw_GBps, *log.collectives[i].busbw_GBps);
        EXPECT_DOUBLE_EQ(*back.collectives[i].seconds, *log.collectives[i].seconds);
        // The record still cites the log it came from, which the file's sources table keeps.
        EXPECT_EQ(back.collectives[i].origin.source, log.collectives[i].origin.source);
    }
}

}  // namespace
}  // namespace trainsim::calibrate
