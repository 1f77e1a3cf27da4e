// A fit from a PyTorch profiler trace's GEMM points moves the profile's GEMM curve where the trace says:
// a trace whose GEMMs each took 1.25 times what the shipped A100 profile prices them at, fitted with
// that profile as the base, gives a profile that prices those GEMMs 1.25 times slower.
#include <gtest/gtest.h>

#include "calibrate/tests/calibrate_test_support.h"
#include "calibrate/tests/kineto_trace_builder.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::calibrate {
namespace {

TEST(KinetoFit, TraceGemmsSlowerThanTheProfileSlowTheFittedCurveByTheSameFactor) {
    testing::TempDir tmp;
    const cost::CostModel base(
        cost::load_hardware_profile(testing::source_path("scenarios/hardware/a100-80gb-selene.json"), ""));
    constexpr double kSlower = 1.25;
    // Square bf16 GEMMs 0.9 decades of FLOPs apart, so that the fit puts a knot at each.
    const std::int64_t sizes[] = {1024, 2048, 4096, 8192};
    testing::KinetoTraceBuilder trace;
    double clock_us = 10000.0;
    for (const std::int64_t n : sizes) {
        const double us = base.gemm({n, n, n, 1}, cost::GemmClass::Dense).value * 1e6 * kSlower;
        trace.gemm(n, n, n, "c10::BFloat16", clock_us, us);
        clock_us += us + 10.0;
    }
    testing::write_file(tmp.path("job.pt.trace.json"), trace.text());
    const std::string out = tmp.path("from-trace.json");
    const auto r = testing::calibrate("fit --base a100-80gb-selene '" + tmp.path("job.pt.trace.json") +
                                      "' --output '" + out + "'");
    ASSERT_EQ(r.status, 0) << r.err;

    const cost::CostModel fitted(cost::load_hardware_profile(out, ""));
    for (const std::int64_t n : sizes) {
        const double before = base.gemm({n, n, n, 1}, cost::GemmClass::Dense).value;
        const double after = fitted.gemm({n, n, n, 1}, cost::GemmClass::Dense).value;
        // The fit rounds efficiencies to 4 significant digits and the trace times to 1 ns.
        EXPECT_NEAR(after / before, kSlower, 1e-3) << n;
    }
}

}  // namespace
}  // namespace trainsim::calibrate
