// The shipped H100 profile's FP8 GEMM curve is fittable from measurement files: `fit --base h100-80gb-dgx`
// on the published H100 GEMMs (calibrate/data/h100-published.measurements.json) refits both the FP8 and
// the 16-bit curve, each against its own peak, and the refitted FP8 curve reproduces the measurements.
#include <gtest/gtest.h>

#include "calibrate/tests/calibrate_test_support.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::calibrate {
namespace {

TEST(H100Fp8Fit, FitRefitsTheFp8CurveAgainstTheFp8PeakAndReproducesAzure) {
    const testing::TempDir dir;
    const std::string out = dir.path("h100-refit.json");
    const testing::CommandResult fit = testing::refit_h100_from_published(out);
    ASSERT_EQ(fit.status, 0) << fit.err;
    const cost::HardwareProfile p = cost::load_hardware_profile(out, dir.dir().string());
    EXPECT_EQ(p.fp8_peak_tflops, 1979.0);  // the base's datasheet peak, not fitted
    EXPECT_NE(p.fp8_gemm_efficiency_vs_flops.source.find("S-DATA"), std::string::npos)
        << p.fp8_gemm_efficiency_vs_flops.source;
    const cost::CostModel model(p);
    // Every FP8 cube within 5 % of its measurement (S-AZURE, ND H100 v5).
    const std::pair<std::int64_t, double> cubes[] = {
        {2048, 1011.3}, {4096, 1216.9}, {8192, 1290.1}, {16384, 1377.3}};
    for (const auto& [n, tflops] : cubes) {
        const cost::GemmShape shape{n, n, n, 1};
        const double t = model.gemm(shape, cost::GemmClass::Dense, cost::GemmPrecision::Fp8).value;
        EXPECT_NEAR(shape.flops().value / t / 1e12, tflops, 0.05 * tflops) << n;
    }
    // The 16-bit curve came from the FP16 records only: 8192x8192x8192-class rates, not FP8's.
    const double bf16 = model.gemm({8192, 8192, 8192, 1}).value;
    EXPECT_NEAR(2.0 * 8192.0 * 8192.0 * 8192.0 / bf16 / 1e12, 758.0, 0.1 * 758.0);
    // What the measurements do not cover stays the base's: both head dimensions' attention curves.
    const cost::HardwareProfile base =
        cost::load_hardware_profile("h100-80gb-dgx", testing::source_path("scenarios/hardware"));
    EXPECT_EQ(p.flash_forward_efficiency_vs_seq_length.y, base.flash_forward_efficiency_vs_seq_length.y);
    EXPECT_EQ(p.flash_backward_efficiency_vs_seq_length_head_dim_64.y,
              base.flash_backward_efficiency_vs_seq_length_head_dim_64.y);
    EXPECT_EQ(p.flash_forward_efficiency_vs_seq_length_head_dim_64.x.size(), 6U);
}

}  // namespace
}  // namespace trainsim::calibrate
