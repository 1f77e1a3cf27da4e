// The first real-GPU calibration (one H200, calibrate/data/h200): the shipped h200-141gb-dgx profile's GEMM
// curves are what `fit` makes of the measurement files beside the data, the FP8 split accumulator's slowdown
// is the median of shapes timed both ways, and a run on one GPU of a node leaves the node to the base.
#include <gtest/gtest.h>

#include "calibrate/tests/calibrate_test_support.h"
#include "sim/cost/curve.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::calibrate {
namespace {

const std::string kGemmFiles =
    "'" + testing::source_path("calibrate/data/h200/h200-cuda-gemms.measurements.json") + "' '" +
    testing::source_path("calibrate/data/h200/h200-torch-gemms.measurements.json") + "'";

cost::HardwareProfile shipped(const std::string& name) {
    return cost::load_hardware_profile(name, testing::source_path("scenarios/hardware"));
}

TEST(H200MeasuredFit, ShippedGemmCurvesAreTheFitOfTheDeviceRun) {
    const testing::TempDir dir;
    const std::string out = dir.path("h200-141gb-dgx.json");
    const testing::CommandResult fit =
        testing::calibrate("fit --base h200-141gb-dgx " + kGemmFiles + " --output '" + out + "'");
    ASSERT_EQ(fit.status, 0) << fit.err;
    const cost::HardwareProfile refit = cost::load_hardware_profile(out, dir.dir().string());
    const cost::HardwareProfile h200 = shipped("h200-141gb-dgx");
    EXPECT_EQ(refit.gemm_efficiency_vs_flops.x, h200.gemm_efficiency_vs_flops.x);
    EXPECT_EQ(refit.gemm_efficiency_vs_flops.y, h200.gemm_efficiency_vs_flops.y);
    EXPECT_EQ(refit.fp8_gemm_efficiency_vs_flops.y, h200.fp8_gemm_efficiency_vs_flops.y);
    EXPECT_EQ(refit.gemm_min_kernel_us, h200.gemm_min_kernel_us);
    // 136 shapes timed with both accumulators: summed split time / summed fast time (README.md).
    EXPECT_EQ(h200.fp8_split_accumulator_slowdown, 1.05);
    EXPECT_EQ(refit.fp8_split_accumulator_slowdown, 1.05);
    // The measurements' band of 1e11-1e12 FLOPs: the median shape ran at 0.655 of the BF16 peak.
    const double at_3e11 = cost::read_curve(h200.gemm_efficiency_vs_flops, 3e11).y;
    EXPECT_GT(at_3e11, 0.62);
    EXPECT_LT(at_3e11, 0.70);
}

// Hand-made pairs: the slowdown is their summed split time over their summed fast time; a split record
// whose fast twin is in another file is not paired; the FP8 curve is fast accumulation's alone; a ratio
// below 1 is held at 1.
std::string gemm_record(const std::string& id, int n, const std::string& dtype, double us) {
    return R"({"id": ")" + id + R"(", "m": )" + std::to_string(n) + R"(, "n": )" + std::to_string(n) +
           R"(, "k": )" + std::to_string(n) + R"(, "dtype": ")" + dtype + R"(", "time_us": )" +
           std::to_string(us) + R"(, "source": "S-A"})";
}

std::string measurement_file(const std::string& records) {
    return R"({"schema": "trainsim-measurements/1", "description": "hand-made", "sources": {"S-A": "hand-made"},
        "gemm": [)" +
           records + "]}";
}

double fast_us(int n) {  // 2 n^3 FLOPs at 1000 TFLOP/s
    return 2.0 * n * double(n) * n / 1e15 * 1e6;
}

cost::HardwareProfile fit_pairs(const testing::TempDir& dir, const std::vector<std::pair<int, double>>& pairs,
                                const std::string& extra_args = "") {
    std::string records;
    for (const auto& [n, ratio] : pairs) {
        records += std::string(records.empty() ? "" : ",") +
                   gemm_record("f" + std::to_string(n), n, "fp8", fast_us(n)) + "," +
                   gemm_record("s" + std::to_string(n), n, "fp8_split_accumulator", fast_us(n) * ratio);
    }
    const std::string data = dir.path("pairs.measurements.json");
    testing::write_file(data, measurement_file(records + extra_args));
    const std::string out = dir.path("pairs.json");
    const testing::CommandResult fit =
        testing::calibrate("fit --base h100-80gb-dgx '" + data + "' '" + dir.path("other.measurements.json") +
                           "' --output '" + out + "'");
    EXPECT_EQ(fit.status, 0) << fit.err;
    return cost::load_hardware_profile(out, dir.dir().string());
}

TEST(H200MeasuredFit, SplitAccumulatorSlowdownIsTheTimeWeightedRatioOfMatchedPairs) {
    const testing::TempDir dir;
    // A fast 16384 record in a second file: the first file's lonely split 16384 must not pair with it.
    testing::write_file(dir.path("other.measurements.json"),
                        measurement_file(gemm_record("f16384", 16384, "fp8", fast_us(16384))));
    // Ratios 1.1, 1.2, 1.5 at fast times 1 : 8 : 64: (1.1 + 8 x 1.2 + 64 x 1.5) / 73 = 1.4616.
    const cost::HardwareProfile p =
        fit_pairs(dir, {{2048, 1.1}, {4096, 1.2}, {8192, 1.5}},
                  "," + gemm_record("lonely", 16384, "fp8_split_accumulator", 10.0 * fast_us(16384)));
    EXPECT_EQ(p.fp8_split_accumulator_slowdown, 1.46);
    // The curve holds the fast records: 1000 / 1979 at every size measured.
    EXPECT_NEAR(cost::read_curve(p.fp8_gemm_efficiency_vs_flops, 2.0 * 4096 * 4096.0 * 4096).y,
                1000.0 / 1979.0, 0.01);
}

TEST(H200MeasuredFit, SplitAccumulatorFasterThanFastAccumulationIsHeldAtOne) {
    const testing::TempDir dir;
    testing::write_file(dir.path("other.measurements.json"),
                        measurement_file(gemm_record("f1024", 1024, "fp8", fast_us(1024))));
    const cost::HardwareProfile p = fit_pairs(dir, {{4096, 0.98}, {8192, 0.99}});
    EXPECT_EQ(p.fp8_split_accumulator_slowdown, 1.0);
}

TEST(H200MeasuredFit, SplitRecordsWithoutFastTwinsAreRefused) {
    const testing::TempDir dir;
    const std::string data = dir.path("split.measurements.json");
    testing::write_file(data, measurement_file(gemm_record("s", 4096, "fp8_split_accumulator", 150.0)));
    const std::string out = dir.path("split.json");
    const testing::CommandResult fit =
        testing::calibrate("fit --base h100-80gb-dgx '" + data + "' --output '" + out + "'");
    EXPECT_EQ(fit.status, 2);
    EXPECT_NE(fit.err.find("compute.gemm_fp8.split_accumulator_slowdown"), std::string::npos) << fit.err;
    EXPECT_NE(fit.err.find("fast accumulation"), std::string::npos) << fit.err;
    EXPECT_FALSE(std::filesystem::exists(out));
}

// The kernel run's JSON as the H200 wrote it (one GPU in the machine): the device's facts are fitted, but
// with no intra-node collective measured the node stays the base's 8-GPU NVLink domain.
TEST(H200MeasuredFit, ARunOnOneGpuKeepsTheBasesNode) {
    const testing::TempDir dir;
    const std::string out = dir.path("h200-node.json");
    const testing::CommandResult fit = testing::calibrate(
        "fit --base h200-141gb-dgx '" + testing::source_path("calibrate/data/h200/h200-cuda-kernels.json") +
        "' --output '" + out + "'");
    ASSERT_EQ(fit.status, 0) << fit.err;
    const cost::HardwareProfile p = cost::load_hardware_profile(out, dir.dir().string());
    EXPECT_EQ(p.gpus_per_node, 8);
    EXPECT_EQ(p.num_sms, 132);                        // cudaDeviceProp, measured
    EXPECT_EQ(p.memory_visible.value, 150109880320);  // cudaMemGetInfo total on the H200
}

}  // namespace
}  // namespace trainsim::calibrate
