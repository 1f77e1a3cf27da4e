// mamf-finder.py logs (stas00/ml-engineering): the real published outputs in
// calibrate/tests/data/gemm-tables (SOURCE.md says where each is from) import with the printed rates, every
// line layout the script has printed since 2024 reads, what cannot be read is a one-line error, and an
// imported GH200 log fits an H100-class profile that reproduces it.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "calibrate/import/load_measurements.h"
#include "calibrate/import/mamf_finder_log.h"
#include "calibrate/measure/measurement_file.h"
#include "calibrate/measure/source_id.h"
#include "calibrate/tests/calibrate_test_support.h"
#include "sim/core/input_error.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::calibrate {
namespace {

const std::string kDir = "calibrate/tests/data/gemm-tables/";
const std::string kStrixHalo = kDir + "mamf-finder-gfx1151-strix-halo.txt";
const std::string kGh200Issue = kDir + "mamf-finder-gh200-issue58.txt";
const std::string kGh200Pr = kDir + "mamf-finder-gh200-pr60.txt";
const std::string kArc = kDir + "mamf-finder-arc-a770-pr107.txt";

std::string read(const std::string& relative) {
    std::ifstream in(testing::source_path(relative));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

MeasurementSet parse(const std::string& relative) {
    const std::string text = read(relative);
    EXPECT_TRUE(looks_like_mamf_finder_log(text)) << relative;
    EXPECT_EQ(detect_input_format(text, relative), InputFormat::MamfFinderLog) << relative;
    return parse_mamf_finder_log(text, relative);
}

bool has_tag(const GemmMeasurement& g, const std::string& tag) {
    return std::find(g.tags.begin(), g.tags.end(), tag) != g.tags.end();
}

// Formula oracle: the record's time is 2mnk at the printed rate, and the rate it reports is the printed one.
void expect_rate(const GemmMeasurement& g, double tflops) {
    EXPECT_DOUBLE_EQ(g.achieved_tflops(), tflops);
    EXPECT_NEAR(g.seconds,
                2.0 * static_cast<double>(g.shape.m) * static_cast<double>(g.shape.n) *
                    static_cast<double>(g.shape.k) / (tflops * 1e12),
                1e-15);
}

const std::string kHeader = "Benchmark started on 2025-06-02 20:57:20\n\n** Dtype: torch.bfloat16\n\n"
                            "** Additional notes:\nbenchmark version: 2\n\n" +
                            std::string(80, '-') + "\n\n";

TEST(MamfFinderLog, ReadsTheStrixHaloConsoleCopy) {
    // mamf-finder v2 on gfx1151: a shape line that the console overwrote down to the last one, the best
    // outcomes, and six lines of the user's wrapper script before it.
    const MeasurementSet set = parse(kStrixHalo);
    ASSERT_EQ(set.gemms.size(), 2U);
    const GemmMeasurement& row = set.gemms[0];
    EXPECT_EQ(row.shape.m, 13312);  // mean printed first: A(m,k)·B(k,n), shape as printed
    EXPECT_EQ(row.shape.n, 15360);
    EXPECT_EQ(row.shape.k, 6144);
    EXPECT_EQ(row.dtype, "bf16");
    expect_rate(row, 25.6);  // "25.6(mean)"
    EXPECT_EQ(row.origin.record, "line 31");
    EXPECT_EQ(row.tags, (std::vector<std::string>{"mamf-finder", "mean"}));
    // The best mean shape is no shape line of this copy: a record of its own.
    const GemmMeasurement& best = set.gemms[1];
    EXPECT_EQ(best.shape.m, 15360);
    EXPECT_EQ(best.shape.n, 3072);
    EXPECT_EQ(best.shape.k, 1024);
    expect_rate(best, 35.1);
    EXPECT_TRUE(has_tag(best, "best-of-run"));
    EXPECT_EQ(
        best.origin.source,
        "S-DATA-MAMF-FINDER-GFX1151-STRIX-HALO: line 34, 15360x3072x1024 (MxNxK) at 35.1 TFLOPS (mean)");
    ASSERT_EQ(set.warnings.size(), 2U);
    EXPECT_EQ(set.warnings[0], kStrixHalo +
                                   ": 6 lines that are not mamf-finder output skipped (the first, line 1: "
                                   "'[root@4b8fdc8ee74c mamf-finder]# ./test-node.sh')");
    EXPECT_EQ(set.warnings[1],
              kStrixHalo + ": 2 best-outcome lines skipped: line 35 (median, not the mean the records "
                           "take); line 36 (max, not the mean the records take)");
}

TEST(MamfFinderLog, ReadsThe2024LayoutWhoseMiddleNumberIsTheReduction) {
    // Before January 2025 mamf-finder multiplied A(M x N)·B(N x K) and printed the fastest iteration's rate.
    const MeasurementSet set = parse(kGh200Issue);
    ASSERT_EQ(set.gemms.size(), 2U);
    for (const GemmMeasurement& g : set.gemms) {
        EXPECT_EQ(g.shape.m, 12288);
        EXPECT_EQ(g.shape.n, 15872);
        EXPECT_EQ(g.shape.k, 14336);
        EXPECT_EQ(g.dtype, "bf16");
        EXPECT_TRUE(has_tag(g, "max"));
        EXPECT_TRUE(has_tag(g, "dtype-assumed"));  // a copy without the header
    }
    expect_rate(set.gemms[0], 807.5);
    expect_rate(set.gemms[1], 831.7);  // "831.7TFLOPS", glued
    EXPECT_TRUE(has_tag(set.gemms[1], "best-of-run"));
    ASSERT_EQ(set.warnings.size(), 1U);
    EXPECT_NE(set.warnings[0].find("no '** Dtype:' header line"), std::string::npos) << set.warnings[0];

    // A header whose rule line the copy left out ends at the result.
    const MeasurementSet pr = parse(kGh200Pr);
    ASSERT_EQ(pr.gemms.size(), 1U);
    EXPECT_EQ(pr.gemms[0].shape.m, 11264);
    EXPECT_EQ(pr.gemms[0].shape.n, 1536);
    EXPECT_EQ(pr.gemms[0].shape.k, 19712);
    EXPECT_FALSE(has_tag(pr.gemms[0], "dtype-assumed"));
    expect_rate(pr.gemms[0], 821.0);
    EXPECT_TRUE(pr.warnings.empty());
}

TEST(MamfFinderLog, ReadsASummaryOnlyRunAtItsMean) {
    const MeasurementSet set = parse(kArc);
    ASSERT_EQ(set.gemms.size(), 1U);
    const GemmMeasurement& g = set.gemms[0];
    EXPECT_EQ(g.shape.m, 4096);
    EXPECT_EQ(g.shape.n, 4096);
    EXPECT_EQ(g.shape.k, 2048);
    // By hand: 2 * 4096 * 4096 * 2048 = 68719476736 FLOPs at 91.0 TFLOP/s = 755.16 us.
    EXPECT_NEAR(g.seconds * 1e6, 755.16, 0.01);
    expect_rate(g, 91.0);
    ASSERT_EQ(set.warnings.size(), 1U);
    EXPECT_NE(set.warnings[0].find("2 best-outcome lines skipped: line 27 (median"), std::string::npos);
}

TEST(MamfFinderLog, ReadsEveryLineLayoutItHasPrinted) {
    const std::string text =
        kHeader +
        // January 2025 (max first, A(m,n)·B(n,k)): the mean is taken, the middle number is k.
        "     1 |  500.0(max)  490.0(median)  480.0(mean) @ 1024x2048x4096        | best: ... TFLOPS\n"
        // December 2024: max and median.
        "     2 |  600.0(max) /  590.0(median) TFLOPS @ 1024x1024x1024       | best: ...\n"
        // 2026 (phase label, power and clock after the rates): from a file whose first line printed max
        // first, still the old convention; on its own, as printed.
        "     3 |   scout  700.1(mean)  701.0(median)  710.2(max) @ 4096x4096x4096       | best:  "
        "700.1(mean) "
        "701.0(median)  710.2(max) TFLOPS |  650W 1980MHz\n"
        "     4 |    0.0(mean)    0.0(median)    0.1(max) @ 16x16x16             | best: ...\n";
    const MeasurementSet set = parse_mamf_finder_log(text, "log.txt");
    ASSERT_EQ(set.gemms.size(), 3U);
    EXPECT_EQ(set.gemms[0].shape.n, 4096);
    EXPECT_EQ(set.gemms[0].shape.k, 2048);
    expect_rate(set.gemms[0], 480.0);
    EXPECT_TRUE(has_tag(set.gemms[0], "mean"));
    expect_rate(set.gemms[1], 590.0);
    EXPECT_TRUE(has_tag(set.gemms[1], "median"));
    expect_rate(set.gemms[2], 700.1);
    ASSERT_EQ(set.warnings.size(), 1U);
    EXPECT_EQ(
        set.warnings[0],
        "log.txt: 1 result lines skipped with a rate of 0.0 TFLOPS (below the printed precision): line 13");

    const MeasurementSet v4 = parse_mamf_finder_log(
        kHeader + "     9 |    wave  700.1(mean)  701.0(median)  710.2(max) @ 1024x2048x4096  | best: x\n",
        "v4.txt");
    ASSERT_EQ(v4.gemms.size(), 1U);
    EXPECT_EQ(v4.gemms[0].shape.n, 2048);
    EXPECT_EQ(v4.gemms[0].shape.k, 4096);
    // A shape as wide as the 20-column field leaves no blank before the bar.
    const MeasurementSet wide = parse_mamf_finder_log(
        kHeader + " 99999 |  700.1(mean)  701.0(median)  710.2(max) @ 20480x20480x20480000| best: x\n",
        "w.txt");
    EXPECT_EQ(wide.gemms.at(0).shape.k, 20480000);
}

TEST(MamfFinderLog, TakesTheDtypeFromTheHeader) {
    std::string fp8 =
        kHeader + "     1 | 1500.0(mean) 1510.0(median) 1520.0(max) @ 8192x8192x8192 | best: x\n";
    fp8.replace(fp8.find("bfloat16"), 8, "float8_e4m3fn");
    EXPECT_EQ(parse_mamf_finder_log(fp8, "fp8.txt").gemms.at(0).dtype, "fp8");
    std::string fp16 = fp8;
    fp16.replace(fp16.find("float8_e4m3fn"), 13, "float16");
    EXPECT_EQ(parse_mamf_finder_log(fp16, "fp16.txt").gemms.at(0).dtype, "fp16");
}

// `import INPUTS --output OUT`; whether it succeeded (its stderr is shown when not).
[[nodiscard]] bool import_ok(const std::string& inputs, const std::string& out) {
    const testing::CommandResult r = testing::calibrate("import " + inputs + " --output " + out);
    EXPECT_EQ(r.status, 0) << r.err;
    return r.status == 0;
}

void expect_error(const std::string& text, const std::string& message) {
    try {
        (void)parse_mamf_finder_log(text, "bad.txt");
        ADD_FAILURE() << "no error; expected " << message;
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()).substr(0, message.size()), message) << e.what();
    }
}

TEST(MamfFinderLog, RefusesWhatItCannotRead) {
    std::string fp32 = kHeader + "     1 |   50.0(mean)   50.0(median)   51.0(max) @ 64x64x64 | best: x\n";
    fp32.replace(fp32.find("bfloat16"), 8, "float32");
    expect_error(fp32, "bad.txt: line 3: dtype 'float32' has no peak in a hardware profile");
    expect_error(kHeader + "     1 |   50.0(mean)   50.0(median)   51.0(max) @ 64x0x64 | best: x\n",
                 "bad.txt: line 10: '64x0x64' is not a shape MxNxK of positive integers");
    expect_error(kHeader + "     1 |   50.0(p90) @ 64x64x64 | best: x\n",
                 "bad.txt: line 10: '50.0(p90)': the statistic must be mean, median or max");
    expect_error(kHeader + "     1 |   5e1(mean) @ 64x64x64 | best: x\n",
                 "bad.txt: line 10: '5e1(mean)' is not a rate");
    expect_error(kHeader + "Elapsed time: 0:00:01\nsomething else\n", "bad.txt: no mamf-finder result line");
    expect_error(kHeader + "     4 |    0.0(mean)    0.0(median)    0.1(max) @ 16x16x16 | best: x\n",
                 "bad.txt: every result line printed a rate of 0.0 TFLOPS");
}

TEST(MamfFinderLog, ImportCommandWritesTheRecordsAndRefusesInOneLine) {
    const testing::TempDir dir;
    const std::string out = dir.path("gemms.json");
    const testing::CommandResult r =
        testing::calibrate("import " + kStrixHalo + " " + kArc + " --output " + out);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("3 GEMM, 0 kernel, 0 collective records"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("6 lines that are not mamf-finder output skipped"), std::string::npos) << r.err;
    const MeasurementSet back = read_measurement_file(out);
    ASSERT_EQ(back.gemms.size(), 3U);
    EXPECT_DOUBLE_EQ(back.gemms[1].achieved_tflops(), 35.1);
    EXPECT_TRUE(has_tag(back.gemms[1], "best-of-run"));

    const std::string bad = dir.path("fp32.txt");
    std::string fp32 = read(kArc);
    fp32.replace(fp32.find("bfloat16"), 8, "float32");
    testing::write_file(bad, fp32);
    const testing::CommandResult e = testing::calibrate("import " + bad + " --output " + dir.path("x.json"));
    EXPECT_EQ(e.status, 2);
    EXPECT_NE(e.err.find("fp32.txt: line 6: dtype 'float32' has no peak"), std::string::npos) << e.err;
    EXPECT_EQ(std::count(e.err.begin(), e.err.end(), '\n'), 1) << e.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path("x.json")));
}

TEST(MamfFinderLog, Gh200LogsFitAnH100ClassProfileThatReproducesThem) {
    // GH200's GPU is an H100 (132 SMs, 989 dense BF16 TFLOP/s): import both published GH200 runs, fit the
    // H100 profile's 16-bit curve from them, and price the measured shapes with the fitted profile.
    const testing::TempDir dir;
    const std::string measurements = dir.path("gh200.json");
    ASSERT_TRUE(import_ok(kGh200Issue + " " + kGh200Pr, measurements));
    const std::string out = dir.path("gh200-fit.json");
    const testing::CommandResult fit =
        testing::calibrate("fit --base h100-80gb-dgx " + measurements + " --output " + out);
    ASSERT_EQ(fit.status, 0) << fit.err;
    const cost::HardwareProfile p = cost::load_hardware_profile(out, dir.dir().string());
    // The curve cites the measurement file, whose sources table the profile's carries: both logs.
    EXPECT_NE(p.gemm_efficiency_vs_flops.source.find("S-DATA-GH200"), std::string::npos)
        << p.gemm_efficiency_vs_flops.source;
    const std::string profile_text = read_text_file(out);
    EXPECT_NE(profile_text.find("\"S-DATA-MAMF-FINDER-GH200-ISSUE58\": \"mamf-finder.py log"),
              std::string::npos);
    EXPECT_NE(profile_text.find("\"S-DATA-MAMF-FINDER-GH200-PR60\": \"mamf-finder.py log"),
              std::string::npos);
    const cost::CostModel model(p);
    const std::pair<cost::GemmShape, double> measured[] = {{{12288, 15872, 14336, 1}, 807.5},
                                                           {{12288, 15872, 14336, 1}, 831.7},
                                                           {{11264, 1536, 19712, 1}, 821.0}};
    for (const auto& [shape, tflops] : measured) {
        const double t = model.gemm(shape).value;
        EXPECT_NEAR(shape.flops().value / t / 1e12, tflops, 0.03 * tflops) << shape.m << "x" << shape.n;
    }
}

TEST(MamfFinderLog, TwoLogsImportIntoOneFileThatFitReads) {
    // Both logs have a record "line 31": the measurement file qualifies repeated ids with their source. The
    // peak is the log's author's: 57.344 BF16 TFLOP/s for gfx1151 at 2.8 GHz (SOURCE.md).
    const testing::TempDir dir;
    for (const char* name : {"a.txt", "b.txt"}) {
        testing::write_file(dir.path(name), read(kStrixHalo));
    }
    const std::string measurements = dir.path("ab.json");
    ASSERT_TRUE(import_ok(dir.path("a.txt") + " " + dir.path("b.txt"), measurements));
    const MeasurementSet back = read_measurement_file(measurements);
    ASSERT_EQ(back.gemms.size(), 4U);
    EXPECT_EQ(back.gemms[0].origin.record, "S-DATA-A line 31");
    EXPECT_EQ(back.gemms[2].origin.record, "S-DATA-B line 31");
    const testing::CommandResult fit =
        testing::calibrate("fit --base a100-80gb-selene --peak-tflops 57.344 " + measurements + " --output " +
                           dir.path("fit.json"));
    EXPECT_EQ(fit.status, 0) << fit.err;
}

TEST(MamfFinderLog, Fp8RecordsNeedABaseWithAnFp8Peak) {
    const testing::TempDir dir;
    std::string fp8 =
        kHeader + "     1 | 1200.0(mean) 1210.0(median) 1220.0(max) @ 8192x8192x8192 | best: x\n";
    fp8.replace(fp8.find("bfloat16"), 8, "float8_e4m3fn");
    const std::string log = dir.path("fp8.txt");
    testing::write_file(log, fp8);
    const testing::CommandResult a100 =
        testing::calibrate("fit --base a100-80gb-selene " + log + " --output " + dir.path("a.json"));
    EXPECT_EQ(a100.status, 2);
    EXPECT_NE(a100.err.find("FP8 GEMM records (S-DATA-FP8: line 10, 8192x8192x8192 (MxNxK) at 1200.0 TFLOPS "
                            "(mean)) but the base profile has no gpu.fp8_peak_tflops"),
              std::string::npos)
        << a100.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path("a.json")));
    const testing::CommandResult h100 =
        testing::calibrate("fit --base h100-80gb-dgx " + log + " --output " + dir.path("h.json"));
    EXPECT_EQ(h100.status, 0) << h100.err;
}

}  // namespace
}  // namespace trainsim::calibrate
