// The Google Benchmark JSON importer: benchmark names are the records, the context carries device facts.
#include <gtest/gtest.h>

#include "calibrate/import/benchmark_json.h"
#include "calibrate/measure/benchmark_name.h"
#include "sim/core/input_error.h"

namespace trainsim::calibrate {
namespace {

const std::string kContext = R"("context": {"date": "2025-01-01T00:00:00", "host_name": "box",
    "trainsim_backend": "cpu", "trainsim_device": "Test CPU",
    "trainsim_memory_bytes": "1.6e10", "trainsim_memory_bytes_kind": "measured",
    "trainsim_memory_bytes_how": "sysconf", "trainsim_best_measured": "peak_tflops,hbm_GBps"})";

std::string error_of(const std::string& text) {
    try {
        (void)parse_benchmark_json(text, "run.json");
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(BenchmarkName, RoundTripsThroughGoogleBenchmarksSuffixes) {
    const BenchmarkName name =
        gemm_benchmark_name({64, 128, 256, 4}, cost::GemmClass::AttentionScore, "bf16");
    EXPECT_EQ(name.text(), "gemm/m:64/n:128/k:256/batch:4/class:attention_score/dtype:bf16");
    const BenchmarkName back = parse_benchmark_name(name.text() + "/iterations:5/repeats:3/manual_time");
    EXPECT_EQ(back.family, "gemm");
    EXPECT_EQ(back.fields, name.fields);
    EXPECT_TRUE(parse_benchmark_name("gemm/m:1/oops").family.empty());
}

TEST(BenchmarkJson, MediansOfRepetitionsBecomeRecords) {
    const std::string text = "{" + kContext + R"(, "benchmarks": [
      {"name": "gemm/m:64/n:64/k:64/batch:1/class:dense/dtype:fp32/manual_time_mean",
       "run_name": "gemm/m:64/n:64/k:64/batch:1/class:dense/dtype:fp32/manual_time", "run_type": "aggregate",
       "aggregate_name": "mean", "real_time": 9.0, "time_unit": "us"},
      {"name": "gemm/m:64/n:64/k:64/batch:1/class:dense/dtype:fp32/manual_time_median",
       "run_name": "gemm/m:64/n:64/k:64/batch:1/class:dense/dtype:fp32/manual_time", "run_type": "aggregate",
       "aggregate_name": "median", "real_time": 8.0, "time_unit": "us"},
      {"name": "gemm/m:64/n:64/k:64/batch:1/class:dense/dtype:fp32/manual_time_stddev",
       "run_name": "gemm/m:64/n:64/k:64/batch:1/class:dense/dtype:fp32/manual_time", "run_type": "aggregate",
       "aggregate_name": "stddev", "real_time": 0.0, "time_unit": "us"},
      {"name": "kernel/kind:copy/bytes:8192/dtype:fp32/iterations:3/manual_time", "run_type": "iteration",
       "real_time": 1000.0, "time_unit": "ns"},
      {"name": "kernel/kind:copy/bytes:8192/dtype:fp32/iterations:3/manual_time", "run_type": "iteration",
       "real_time": 3000.0, "time_unit": "ns"},
      {"name": "kernel/kind:copy/bytes:8192/dtype:fp32/iterations:3/manual_time", "run_type": "iteration",
       "real_time": 2000.0, "time_unit": "ns"},
      {"name": "collective/op:all_reduce/ranks:2/nodes:1/bytes:4096/dtype:fp32", "run_type": "iteration",
       "real_time": 0.01, "time_unit": "ms"},
      {"name": "kernel/kind:layernorm/bytes:8192/dtype:fp32", "run_type": "iteration", "error_occurred": true,
       "error_message": "out of memory", "real_time": 0, "time_unit": "ns"}
    ]})";
    const MeasurementSet set = parse_benchmark_json(text, "dir/run.json");
    ASSERT_EQ(set.gemms.size(), 1U);
    // The median aggregate, not the mean; a stddev of 0 (identical repetitions, which flaked the CPU
    // pipeline test as "real_time must be greater than 0") is not read.
    EXPECT_DOUBLE_EQ(set.gemms[0].seconds, 8.0e-6);
    EXPECT_EQ(set.gemms[0].shape.m, 64);
    ASSERT_EQ(set.kernels.size(), 1U);
    EXPECT_DOUBLE_EQ(set.kernels[0].seconds, 2.0e-6);  // the median of three repetitions
    EXPECT_EQ(set.kernels[0].bytes_moved, 8192);
    ASSERT_EQ(set.collectives.size(), 1U);
    EXPECT_DOUBLE_EQ(*set.collectives[0].seconds, 1e-5);
    EXPECT_DOUBLE_EQ(*set.collectives[0].bus_bandwidth_GBps(), 4096 * 1.0 / 1e-5 / 1e9);
    ASSERT_EQ(set.warnings.size(), 1U);
    EXPECT_NE(set.warnings[0].find("kernel/kind:layernorm"), std::string::npos);
    ASSERT_TRUE(set.device.has_value());
    EXPECT_EQ(set.device->name, "Test CPU");
    EXPECT_TRUE(set.device->peak_is_best_measured);
    EXPECT_DOUBLE_EQ(set.device->memory_bytes->value, 1.6e10);
    EXPECT_EQ(set.files[0].source_id, "S-DATA-RUN");
    EXPECT_NE(set.files[0].citation.find("Test CPU"), std::string::npos);
}

TEST(BenchmarkJson, ErrorsNameTheFileAndTheBenchmark) {
    EXPECT_EQ(
        error_of(R"({"context": {}, "benchmarks": []})"),
        "run.json: context.trainsim_backend is missing: this file was not written by trainsim-calibrate run "
        "(its benchmark names are the records)");
    EXPECT_EQ(error_of("{" + kContext +
                       R"(, "benchmarks": [{"name": "BM_Foo", "real_time": 1, "time_unit": "ns"}]})"),
              "run.json: benchmarks[0].name 'BM_Foo': family must be gemm, kernel or collective");
    EXPECT_EQ(
        error_of("{" + kContext + R"(, "benchmarks": [{"name": "gemm/m:x/n:1/k:1/batch:1/class:dense/dtype:f",
        "real_time": 1, "time_unit": "ns"}]})"),
        "run.json: benchmarks[0].name 'gemm/m:x/n:1/k:1/batch:1/class:dense/dtype:f': m must be an integer "
        ">= "
        "1, got 'x'");
    EXPECT_EQ(
        error_of(
            "{" + kContext +
            R"(, "benchmarks": [{"name": "collective/op:all_reduce/ranks:99999999999/nodes:1/bytes:8/dtype:f",
        "real_time": 1, "time_unit": "ns"}]})"),
        "run.json: benchmarks[0].name 'collective/op:all_reduce/ranks:99999999999/nodes:1/bytes:8/dtype:f': "
        "ranks "
        "must be an integer from 2 to 1000000, got '99999999999'");
    EXPECT_EQ(error_of("{" + kContext + R"(, "benchmarks": [{"name": "kernel/kind:copy/bytes:8/dtype:f",
        "real_time": 1, "time_unit": "fortnights"}]})"),
              "run.json: benchmarks[0].time_unit must be ns, us, ms or s, got 'fortnights'");
    EXPECT_EQ(error_of("{" + kContext + R"(, "extra": 1, "benchmarks": []})"),
              "run.json: extra is not a known key (valid keys: context, benchmarks)");
}

}  // namespace
}  // namespace trainsim::calibrate
