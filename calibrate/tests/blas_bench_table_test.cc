// GEMM tables from AMD's BLAS benchmark clients (hipblaslt-bench): the real MI350X sample in
// calibrate/tests/data/gemm-tables (SOURCE.md says where it is from), bad rows counted, and the
// import command end to end.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "calibrate/import/blas_bench_table.h"
#include "calibrate/import/load_measurements.h"
#include "calibrate/measure/measurement_file.h"
#include "calibrate/tests/calibrate_test_support.h"
#include "sim/core/input_error.h"

namespace trainsim::calibrate {
namespace {

const std::string kSample = "calibrate/tests/data/gemm-tables/hipblaslt-bench-mi350x.txt";

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

const std::string kHeader =
    "[0]:transA,transB,grouped_gemm,batch_count,m,n,k,alpha,a_type,compute_type,hipblaslt-Gflops,"
    "hipblaslt-GB/s,us\n";

TEST(BlasBenchTable, ReadsTheRealMi350xSample) {
    const std::string text = read(testing::source_path(kSample));
    ASSERT_TRUE(looks_like_blas_bench_table(text));
    EXPECT_EQ(detect_input_format(text, kSample), InputFormat::BlasBenchTable);
    const MeasurementSet set = parse_blas_bench_table(text, kSample);
    EXPECT_TRUE(set.warnings.empty());
    ASSERT_EQ(set.gemms.size(), 2U);
    const GemmMeasurement& a = set.gemms[0];
    EXPECT_EQ(a.shape.m, 4096);
    EXPECT_EQ(a.shape.n, 6144);
    EXPECT_EQ(a.shape.k, 8192);
    EXPECT_EQ(a.shape.batch, 1);
    EXPECT_EQ(a.dtype, "bf16");
    EXPECT_DOUBLE_EQ(a.seconds, 448.965e-6);
    EXPECT_EQ(a.origin.record, "line 11");  // line 10 is the header
    const GemmMeasurement& b = set.gemms[1];
    EXPECT_EQ(b.shape.m, 106496);
    EXPECT_EQ(b.shape.n, 8192);
    EXPECT_EQ(b.shape.k, 16384);
    EXPECT_DOUBLE_EQ(b.seconds, 21871.2e-6);
    // Formula oracle: 2mnk / t is the client's own hipblaslt-Gflops column (918371, 1.30708e+06) to the
    // 6 digits it prints.
    EXPECT_NEAR(a.achieved_tflops(), 918.371, 918.371 * 1e-5);
    EXPECT_NEAR(b.achieved_tflops(), 1307.08, 1307.08 * 1e-5);
    ASSERT_EQ(set.files.size(), 1U);
}

TEST(BlasBenchTable, CountsAndNamesBadRows) {
    const std::string text = kHeader + "    N,T,0,1,64,64,64,1,bf16_r,f32_r,10,1,5.5\n"
                                       "    N,T,0,1,64,64,1,bf16_r,f32_r,10,1,5.5\n"     // a field missing
                                       "    N,T,0,1,64,0,64,1,bf16_r,f32_r,10,1,5.5\n"   // n = 0
                                       "    N,T,0,2,32,64,64,1,f16_r,f32_r,10,1,nan?\n"  // us not a number
                                       "    --Solution index: 7\n";
    const MeasurementSet set = parse_blas_bench_table(text, "t.txt");
    ASSERT_EQ(set.gemms.size(), 1U);
    EXPECT_DOUBLE_EQ(set.gemms[0].seconds, 5.5e-6);
    ASSERT_EQ(set.warnings.size(), 1U);
    EXPECT_EQ(set.warnings[0],
              "t.txt: 3 bad rows skipped: line 3 (12 fields, header has 13); line 4 (m, n, k and us must be "
              "positive numbers); line 5 (m, n, k and us must be positive numbers)");
}

TEST(BlasBenchTable, ReadsBatchCountAndFp16) {
    const MeasurementSet set =
        parse_blas_bench_table(kHeader + "T,N,0,8,128,256,512,1,f16_r,f32_r,1,1,20\n", "t.txt");
    ASSERT_EQ(set.gemms.size(), 1U);
    EXPECT_EQ(set.gemms[0].shape.batch, 8);
    EXPECT_EQ(set.gemms[0].dtype, "fp16");
}

TEST(BlasBenchTable, RefusesATableWithNoGoodRow) {
    EXPECT_THROW((void)parse_blas_bench_table(kHeader + "N,T,0,1,64,64,1,bf16_r,f32_r,10,1,5.5\n", "t.txt"),
                 InputError);
    EXPECT_FALSE(looks_like_blas_bench_table("transA,transB,m,n,k\n1,2,3\n"));
}

TEST(BlasBenchTable, ImportCommandWritesTheMeasurementFileFitReads) {
    const testing::TempDir dir;
    const std::string out = dir.path("gemms.json");
    const testing::CommandResult r = testing::calibrate("import " + kSample + " --output " + out);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("2 GEMM, 0 kernel, 0 collective records"), std::string::npos) << r.out;
    const MeasurementSet back = read_measurement_file(out);
    ASSERT_EQ(back.gemms.size(), 2U);
    EXPECT_EQ(back.gemms[1].shape.m, 106496);
    EXPECT_DOUBLE_EQ(back.gemms[1].seconds, 21871.2e-6);

    const std::string bad = dir.path("bad.txt");
    testing::write_file(bad, kHeader + "N,T,0,1,64,64,1,bf16_r,f32_r,10,1,5.5\n");
    const testing::CommandResult e = testing::calibrate("import " + bad + " --output " + dir.path("x.json"));
    EXPECT_EQ(e.status, 2);
    EXPECT_NE(e.err.find("no GEMM row parses"), std::string::npos) << e.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path("x.json")));
}

}  // namespace
}  // namespace trainsim::calibrate
