// The whole pipeline on the CPU backend, through the command-line tools a user runs: measure (tiny sizes),
// import, fit onto the shipped profile, compare, and simulate with the fitted profile.
#include <gtest/gtest.h>

#include <algorithm>

#include "calibrate/import/benchmark_json.h"
#include "calibrate/measure/json_writer.h"
#include "calibrate/measure/source_id.h"
#include "calibrate/tests/calibrate_test_support.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::calibrate {
namespace {

const std::string kScenario = "calibrate/tests/data/tiny-scenario.json";

// One run for every test of this suite: the benchmarks take a few seconds.
class CpuPipeline : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new testing::TempDir();
        run_ = testing::calibrate("run --backend cpu --tiny --ranks 2 --scenario " + kScenario +
                                  " --output '" + dir_->path("cpu-run.json") + "'");
    }
    static void TearDownTestSuite() {
        delete dir_;
        dir_ = nullptr;
    }
    static std::string path(const std::string& name) { return dir_->path(name); }

    static testing::TempDir* dir_;
    static testing::CommandResult run_;
};

testing::TempDir* CpuPipeline::dir_ = nullptr;
testing::CommandResult CpuPipeline::run_;

TEST_F(CpuPipeline, RunWritesGoogleBenchmarkJsonWithTheScenariosShapes) {
    ASSERT_EQ(run_.status, 0) << run_.err;
    const OrderedJson j = OrderedJson::parse(read_text_file(path("cpu-run.json")));
    EXPECT_EQ(j.at("context").at("trainsim_backend"), "cpu");
    const MeasurementSet set = read_benchmark_json(path("cpu-run.json"));
    const auto has_gemm = [&](cost::GemmShape s, cost::GemmClass cls) {
        return std::any_of(set.gemms.begin(), set.gemms.end(), [&](const GemmMeasurement& g) {
            return g.shape.m == s.m && g.shape.n == s.n && g.shape.k == s.k && g.shape.batch == s.batch &&
                   g.cls == cls && g.seconds > 0.0;
        });
    };
    // The QKV GEMM of the tiny scenario (s·b = 128 tokens, h = 128, 3h/t = 192) and its input gradient.
    EXPECT_TRUE(has_gemm({128, 192, 128, 1}, cost::GemmClass::Dense));
    EXPECT_TRUE(has_gemm({128, 128, 192, 1}, cost::GemmClass::Dense));
    // Core attention: b·a/t = 4 products of 64x64x32.
    EXPECT_TRUE(has_gemm({64, 64, 32, 4}, cost::GemmClass::AttentionScore));
    // The scenario's TP all-reduce of s·b·h·2 bytes over 2 ranks.
    EXPECT_TRUE(
        std::any_of(set.collectives.begin(), set.collectives.end(), [](const CollectiveMeasurement& c) {
            return c.op == cost::CollectiveKind::AllReduce && c.ranks == 2 && c.bytes == 32768;
        }));
    EXPECT_TRUE(std::any_of(set.kernels.begin(), set.kernels.end(),
                            [](const KernelMeasurement& k) { return k.kind == KernelKind::Empty; }));
    EXPECT_GT(set.gemms.size(), 8U);
    EXPECT_GT(set.kernels.size(), 20U);
    EXPECT_GT(set.collectives.size(), 10U);
    EXPECT_TRUE(set.device->peak_is_best_measured);
    EXPECT_EQ(set.device->gpus_per_node->value, 2.0);
}

TEST_F(CpuPipeline, FitCompareAndSimulateWithTheFittedProfile) {
    ASSERT_EQ(run_.status, 0) << run_.err;
    const std::string profile = path("cpu-tiny.json");
    const testing::CommandResult fit =
        testing::calibrate("fit --base a100-80gb-selene '" + path("cpu-run.json") + "' --output '" + profile +
                           "' --report '" + path("report.json") + "'");
    ASSERT_EQ(fit.status, 0) << fit.err;
    // It loads, and what was measured replaced the A100's numbers; what was not (NICs) stayed.
    const cost::HardwareProfile p = cost::load_hardware_profile(profile, dir_->dir().string());
    EXPECT_EQ(p.name, "cpu-tiny");
    EXPECT_LT(p.peak_tflops, 10.0);  // one CPU core, not 312 TFLOP/s
    EXPECT_EQ(p.num_sms, 1);
    EXPECT_EQ(p.gpus_per_node, 2);
    EXPECT_EQ(p.intra_node.measured_group_size, 2);
    EXPECT_EQ(p.inter_node.nic_GBps, 23.5);
    EXPECT_EQ(p.gemm_efficiency_vs_flops.y.size() >= 2, true);
    const OrderedJson doc = OrderedJson::parse(read_text_file(profile));
    EXPECT_NE(doc.at("description").get<std::string>().find("fitted by trainsim-calibrate"),
              std::string::npos);
    EXPECT_TRUE(doc.at("sources").contains("S-DATA-CPU-RUN"));
    const OrderedJson report = OrderedJson::parse(read_text_file(path("report.json")));
    EXPECT_GE(report.at("targets").size(), 15U);

    // Op by op against the shipped profile: every op of the layer, the CPU far slower.
    const testing::CommandResult cmp =
        testing::calibrate("compare '" + profile + "' " + kScenario + " --format json");
    ASSERT_EQ(cmp.status, 0) << cmp.err;
    const OrderedJson c = OrderedJson::parse(cmp.out);
    EXPECT_EQ(c.at("profile_a"), "a100-80gb-selene");
    EXPECT_EQ(c.at("profile_b"), "cpu-tiny");
    ASSERT_GT(c.at("ops").size(), 20U);
    for (const auto& op : c.at("ops")) {
        if (op.at("what").get<std::string>().rfind("gemm", 0) == 0) {
            EXPECT_GT(op.at("b_s").get<double>(), op.at("a_s").get<double>()) << op.at("op");
        }
    }
    const testing::CommandResult text = testing::calibrate("compare '" + profile + "' " + kScenario);
    ASSERT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("qkv"), std::string::npos);

    // The simulator runs an iteration with it.
    const testing::CommandResult sim =
        testing::trainsim("run " + kScenario + " --set hardware.profile='" + profile + "' --format json");
    ASSERT_EQ(sim.status, 0) << sim.err;
    const OrderedJson result = OrderedJson::parse(sim.out);
    const testing::CommandResult shipped = testing::trainsim("run " + kScenario + " --format json");
    ASSERT_EQ(shipped.status, 0) << shipped.err;
    EXPECT_GT(result.at("iteration_time_s").get<double>(),
              OrderedJson::parse(shipped.out).at("iteration_time_s").get<double>());
}

TEST_F(CpuPipeline, ImportWritesAMeasurementFileThatFitsTheSame) {
    ASSERT_EQ(run_.status, 0) << run_.err;
    const testing::CommandResult imp = testing::calibrate("import '" + path("cpu-run.json") + "' --output '" +
                                                          path("cpu-run.measurements.json") + "'");
    ASSERT_EQ(imp.status, 0) << imp.err;
    const testing::CommandResult a = testing::calibrate(
        "fit --base a100-80gb-selene '" + path("cpu-run.json") + "' --output '" + path("direct.json") + "'");
    const testing::CommandResult b =
        testing::calibrate("fit --base a100-80gb-selene '" + path("cpu-run.measurements.json") +
                           "' --output '" + path("imported.json") + "'");
    ASSERT_EQ(a.status, 0) << a.err;
    ASSERT_EQ(b.status, 0) << b.err;
    const cost::HardwareProfile direct =
        cost::load_hardware_profile(path("direct.json"), dir_->dir().string());
    const cost::HardwareProfile imported =
        cost::load_hardware_profile(path("imported.json"), dir_->dir().string());
    EXPECT_EQ(direct.gemm_efficiency_vs_flops.y, imported.gemm_efficiency_vs_flops.y);
    EXPECT_EQ(direct.memory_bound_efficiency_vs_bytes.y, imported.memory_bound_efficiency_vs_bytes.y);
    EXPECT_EQ(direct.intra_node.busbw_GBps_vs_bytes.y, imported.intra_node.busbw_GBps_vs_bytes.y);
}

}  // namespace
}  // namespace trainsim::calibrate
