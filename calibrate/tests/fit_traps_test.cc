// The traps a new user fell into, end to end through the command line: a fit that cannot represent its data
// fails instead of capping; every fit states a verdict and --strict enforces it; nccl-tests logs go through
// import and fit without losing small sizes or colliding on source ids; the inter-node fit counts the
// latency once and flags a NIC faster than its line rate.
#include <gtest/gtest.h>

#include "calibrate/import/nccl_tests_log.h"
#include "calibrate/measure/json_writer.h"
#include "calibrate/measure/source_id.h"
#include "calibrate/tests/calibrate_test_support.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::calibrate {
namespace {

const std::string kLogs = "calibrate/tests/data/nccl-tests-logs/";

// Dense bf16 GEMMs as an H100 runs them (300 to 750 TFLOP/s, hardware.md's H100 rows), above the A100's
// 312 TFLOP/s peak; `spread` puts a second record at each size that far off (for the residual verdict).
std::string h100_gemms(double spread = 0.0) {
    std::string records;
    const struct {
        int dim;
        double tflops;
    } rows[] = {{2048, 300}, {4096, 560}, {8192, 700}, {16384, 750}};
    for (const auto& r : rows) {
        for (int copy = 0; copy < (spread > 0.0 ? 2 : 1); ++copy) {
            const double t = copy == 0 ? r.tflops : r.tflops * (1.0 - spread);
            records += std::string(records.empty() ? "" : ",\n") + "{\"m\": " + std::to_string(r.dim) +
                       ", \"n\": " + std::to_string(r.dim) + ", \"k\": " + std::to_string(r.dim) +
                       ", \"tflops\": " + std::to_string(t) + ", \"source\": \"S-H100: cuBLASLt\"}";
        }
    }
    return R"({"schema": "trainsim-measurements/1", "description": "H100-like GEMMs",
               "sources": {"S-H100": "a test's H100-like GEMM rates"}, "gemm": [)" +
           records + "]}";
}

TEST(FitTraps, AGemmFasterThanThePeakStopsTheFitAndSaysWhatToGive) {
    testing::TempDir dir;
    testing::write_file(dir.path("h100-meas.json"), h100_gemms());
    const auto capped = testing::calibrate("fit --base a100-80gb-selene '" + dir.path("h100-meas.json") +
                                           "' --output '" + dir.path("h100.json") + "'");
    EXPECT_EQ(capped.status, 2);
    EXPECT_NE(
        capped.err.find("compute.gemm.efficiency_vs_flops cannot hold gemm[3]: its efficiency (achieved "
                        "TFLOP/s / gpu.peak_tflops 312 / wave factor) is 2.404, above 1; the peak is not "
                        "this device's: give --peak-tflops"),
        std::string::npos)
        << capped.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path("h100.json")));
    const auto fitted =
        testing::calibrate("fit --base a100-80gb-selene --peak-tflops 989 '" + dir.path("h100-meas.json") +
                           "' --output '" + dir.path("h100.json") + "'");
    ASSERT_EQ(fitted.status, 0) << fitted.err;
    EXPECT_NE(fitted.out.find("compute.gemm.efficiency_vs_flops: residuals"), std::string::npos)
        << fitted.out;
    EXPECT_NE(fitted.out.find("-- ok (rms within 10%)"), std::string::npos) << fitted.out;
}

TEST(FitTraps, ACudaRunsPeakComesFromTheDatasheetTableByDeviceName) {
    testing::TempDir dir;
    std::string meas = h100_gemms();
    meas.insert(meas.find("\"gemm\""), R"("device": {"backend": "cuda", "name": "NVIDIA H100 80GB HBM3"}, )");
    testing::write_file(dir.path("h100-cuda.json"), meas);
    const auto fitted = testing::calibrate("fit --base a100-80gb-selene '" + dir.path("h100-cuda.json") +
                                           "' --output '" + dir.path("h100.json") + "'");
    ASSERT_EQ(fitted.status, 0) << fitted.err;
    const OrderedJson doc = OrderedJson::parse(read_text_file(dir.path("h100.json")));
    EXPECT_EQ(doc.at("gpu").at("peak_tflops").at("value"), 989.5);
    EXPECT_EQ(doc.at("gpu").at("peak_tflops").at("kind"), "datasheet");
    EXPECT_TRUE(doc.at("sources").contains("S-NVIDIA-DATASHEETS"));
}

TEST(FitTraps, EveryFitStatesAVerdictAndStrictEnforcesIt) {
    testing::TempDir dir;
    // Two records per size, 60 % apart: no curve through one value per size gets within 10 % rms.
    testing::write_file(dir.path("scattered.json"), h100_gemms(0.6));
    const std::string args = "fit --base a100-80gb-selene --peak-tflops 989 '" + dir.path("scattered.json") +
                             "' --output '" + dir.path("scattered-fit.json") + "'";
    const auto strict = testing::calibrate(args + " --strict");
    EXPECT_EQ(strict.status, 2);
    EXPECT_NE(
        strict.err.find("--strict: compute.gemm.efficiency_vs_flops OVER the 10% rms tolerance; nothing "
                        "written"),
        std::string::npos)
        << strict.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path("scattered-fit.json")));
    const auto loose = testing::calibrate(args);
    ASSERT_EQ(loose.status, 0) << loose.err;
    EXPECT_NE(loose.out.find("-- OVER the 10% rms tolerance"), std::string::npos) << loose.out;
    EXPECT_EQ(testing::calibrate(args + " --strict --tolerance 90").status, 0);
}

// import → fit: a log whose small rows print busbw 0.00, imported to a file named like the log.
TEST(FitTraps, ImportThenFitKeepsSmallSizesAndTheirSourceIds) {
    testing::TempDir dir;
    const std::string log = dir.path("a100-node.log");
    std::filesystem::copy_file(testing::source_path(kLogs + "07-a100-superbench-1node8-old-allreduce.log"),
                               log);
    const auto imp = testing::calibrate("import --op all_reduce '" + log + "' --output '" +
                                        dir.path("a100-node.json") + "'");
    ASSERT_EQ(imp.status, 0) << imp.err;
    const OrderedJson meas = OrderedJson::parse(read_text_file(dir.path("a100-node.json")));
    for (const auto& c : meas.at("collectives")) {
        EXPECT_GT(c.at("time_us").get<double>(), 0.0);  // the time always
        if (c.contains("busbw_GBps")) {                 // the printed busbw only with 3 digits or more
            EXPECT_GE(c.at("busbw_GBps").get<double>(), 1.0) << c;
        }
    }
    const auto fit = testing::calibrate("fit --base a100-80gb-selene '" + dir.path("a100-node.json") +
                                        "' --output '" + dir.path("a100-node-fit.json") + "'");
    ASSERT_EQ(fit.status, 0) << fit.err;
    const cost::HardwareProfile p = cost::load_hardware_profile(dir.path("a100-node-fit.json"), dir.path(""));
    // 4 B all-reduce over 8 ranks in 34.73 µs, printed busbw 0.00: 4 · 1.75 / 34.73 µs = 2.016e-4 GB/s from
    // the time (4 significant digits), not 2e-308.
    EXPECT_NEAR(p.intra_node.busbw_GBps_vs_bytes.y.front(), 4 * 1.75 / 34.73e-6 / 1e9, 1e-7);
    const cost::CostModel model(p);
    EXPECT_LT(
        model.collective(cost::CollectiveKind::AllReduce, Bytes{64}, 8, cost::Scope::IntraNode, 1).value,
        1e-3);
    const OrderedJson doc = OrderedJson::parse(read_text_file(dir.path("a100-node-fit.json")));
    EXPECT_TRUE(doc.at("sources").contains("S-DATA-A100-NODE"));       // the log
    EXPECT_TRUE(doc.at("sources").contains("S-DATA-A100-NODE-FILE"));  // the measurement file
}

// A refit onto a profile that already cites another file by the input's id.
TEST(FitTraps, ABaseThatCitesAnotherFileByTheInputsIdIsNotBlamed) {
    testing::TempDir dir;
    // The shipped profile cites calibrate/data/a100-all_reduce_perf.log as S-DATA-A100-ALL-REDUCE-PERF.
    const std::string log = dir.path("a100-all_reduce_perf.log");
    std::filesystem::copy_file(testing::source_path(kLogs + "07-a100-superbench-1node8-old-allreduce.log"),
                               log);
    const auto fit = testing::calibrate("fit --base a100-80gb-selene --op all_reduce '" + log +
                                        "' --output '" + dir.path("refit.json") + "'");
    ASSERT_EQ(fit.status, 0) << fit.err;
    EXPECT_NE(fit.err.find("renamed S-DATA-A100-ALL-REDUCE-PERF -> S-DATA-A100-ALL-REDUCE-PERF-2"),
              std::string::npos)
        << fit.err;
}

// 2x8 A100 over RoCE: the fitted curve, read back through the cost model with the profile's latency,
// reproduces the measured times; small sizes too (2 KiB over 16 ranks: 41.14 µs measured).
TEST(FitTraps, InterNodeLatencyIsCountedOnce) {
    testing::TempDir dir;
    const std::string log = testing::source_path(kLogs + "05-a100-oci-bm.gpu4.8-2node16-all_reduce.log");
    const auto fit = testing::calibrate("fit --base a100-80gb-selene '" + log + "' --output '" +
                                        dir.path("oci.json") + "'");
    ASSERT_EQ(fit.status, 0) << fit.err;
    const cost::CostModel model(cost::load_hardware_profile(dir.path("oci.json"), dir.path("")));
    const auto t = [&](std::int64_t bytes) {
        return model.collective(cost::CollectiveKind::AllReduce, Bytes{bytes}, 16, cost::Scope::InterNode, 2)
            .value;
    };
    // The table keeps three significant digits: within 1 % of the out-of-place times.
    EXPECT_NEAR(t(2048), 41.14e-6, 0.01 * 41.14e-6);
    EXPECT_NEAR(t(1048576), 136.1e-6, 0.01 * 136.1e-6);
    EXPECT_NEAR(t(8589934592), 225083e-6, 0.01 * 225083e-6);
}

TEST(FitTraps, ANicFasterThanItsLineRateIsFlagged) {
    testing::TempDir dir;
    // GCP A3 Mega: 8 NICs of 200 Gb/s (25 GB/s) per node; 2x8 H100 all-reduce busbw 338.8 GB/s is 42 GB/s
    // per rail, more than a rail carries: a two-node all-reduce moves part of its bytes over NVLink.
    const std::string log = testing::source_path(kLogs + "01-h100-gcp-a3mega-2node16-all_reduce.log");
    const std::string args =
        "fit --base a100-80gb-selene --nic-gbits 200 '" + log + "' --output '" + dir.path("a3.json") + "'";
    const auto flagged = testing::calibrate(args);
    ASSERT_EQ(flagged.status, 0) << flagged.err;
    // 8 GiB in 47535 us less the model's 25 us latency: 339.0 GB/s latency-free busbw, 42.38 per rail.
    EXPECT_NE(
        flagged.out.find("network.inter_node.nic_GBps -- FLAGGED: the fitted NIC rate 42.38 GB/s is above "
                         "the line rate 25 GB/s"),
        std::string::npos)
        << flagged.out;
    EXPECT_EQ(testing::calibrate(args + " --strict").status, 2);
}

}  // namespace
}  // namespace trainsim::calibrate
