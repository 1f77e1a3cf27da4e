// The Kineto importer on real traces (tests/data/kineto, see its README for their source) and on small
// traces written by KinetoTraceBuilder for what the real ones lack (nanosecond clocks, ROCm devices,
// metadata on the op, truncation). Expected values were read by hand from the traces with python3:
//   d = json.load(gzip.open(PATH)); ev = d["traceEvents"]
//   [e for e in ev if e.get("cat") == "kernel" and e["name"].startswith("nccl")]      # NCCL kernels
//   rt = {e["args"]["correlation"]: e for e in ev if e.get("cat") == "cuda_runtime"}  # launches
// and, for the 16-rank trace (kernel "External id" = its correlation), the innermost aten::mm/addmm
// around each GEMM kernel's launch on the launching thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "calibrate/import/kineto_import.h"
#include "calibrate/import/kineto_trace_reader.h"
#include "calibrate/tests/calibrate_test_support.h"
#include "calibrate/tests/kineto_trace_builder.h"
#include "sim/core/input_error.h"

namespace trainsim::calibrate {
namespace {

using testing::KinetoTraceBuilder;
using testing::TempDir;

const std::string kTwoRank = "tests/data/kineto/a100-2rank-nccl.pt.trace.json.gz";
const std::string kSixteenRank = "tests/data/kineto/a100-16rank-rank0.pt.trace.json.gz";
const std::string kH200 = "tests/data/kineto/h200-torch2.11-gemms.pt.trace.json.gz";

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

const CollectiveMeasurement* collective_at(const MeasurementSet& set, const std::string& ts) {
    for (const CollectiveMeasurement& c : set.collectives) {
        if (c.origin.source.find("ts=" + ts + " us") != std::string::npos) {
            return &c;
        }
    }
    return nullptr;
}

const GemmMeasurement* gemm_at(const MeasurementSet& set, const std::string& ts) {
    for (const GemmMeasurement& g : set.gemms) {
        if (g.origin.source.find("ts=" + ts + " us") != std::string::npos) {
            return &g;
        }
    }
    return nullptr;
}

std::string import_error(const std::string& path) {
    try {
        (void)import_kineto_trace(path);
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

TEST(KinetoImport, TwoRankTraceGivesItsAllReducesWithSizeGroupAndRanks) {
    const MeasurementSet set = import_kineto_trace(testing::source_path(kTwoRank));
    // 21 NCCL kernels: 15 allreduce (Float) and 6 broadcast, which the simulator does not price.
    ASSERT_EQ(set.collectives.size(), 15U);
    EXPECT_TRUE(mentions(set.warnings, "broadcast 6"));
    // ts 4458677009853.422, dur 2636.669, In msg nelems 6637568 x Float, Group size 2, ranks [0, 1].
    const CollectiveMeasurement* c = collective_at(set, "4458677009853.422");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->op, cost::CollectiveKind::AllReduce);
    EXPECT_EQ(c->ranks, 2);
    EXPECT_EQ(c->nodes, 1);
    EXPECT_EQ(c->bytes, 6637568 * 4);
    EXPECT_NEAR(*c->seconds, 2636.669e-6, 1e-12);
    EXPECT_NE(c->origin.source.find("ncclKernel_AllReduce_RING_LL_Sum_float"), std::string::npos);
    EXPECT_NE(c->origin.source.find("[0, 1]"), std::string::npos);
    // ts 4458677052057.143, dur 2129.38, 2431040 elements.
    const CollectiveMeasurement* d = collective_at(set, "4458677052057.143");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->bytes, 2431040 * 4);
    EXPECT_NEAR(*d->seconds, 2129.38e-6, 1e-12);
    // Its GEMMs were recorded without shapes (record_shapes off): none imported, and the user told why.
    EXPECT_TRUE(set.gemms.empty());
    EXPECT_TRUE(mentions(set.warnings, "no Input Dims"));
    // 960 device-to-device copies; the first in the file: ts 4458677052061.431, 5.088 us, 4000 bytes.
    ASSERT_EQ(set.kernels.size(), 960U);
    EXPECT_EQ(set.kernels[0].bytes_moved, 8000);
    EXPECT_NEAR(set.kernels[0].seconds, 5.088e-6, 1e-12);
}

TEST(KinetoImport, SixteenRankTraceJoinsGemmsThroughTheLaunchingThread) {
    const MeasurementSet set = import_kineto_trace(testing::source_path(kSixteenRank));
    // 25 aten::mm/addmm calls launched GEMM kernels (5 iterations x 5 calls).
    ASSERT_EQ(set.gemms.size(), 25U);
    // Kernel ts 1683564901743599, dur 14, launched inside aten::addmm with Input Dims
    // [[64], [4096, 100], [100, 64], [], []] and types float: C[4096x64] = A[4096x100]·B[100x64].
    const GemmMeasurement* addmm = gemm_at(set, "1683564901743599.000");
    ASSERT_NE(addmm, nullptr);
    EXPECT_EQ(addmm->shape.m, 4096);
    EXPECT_EQ(addmm->shape.n, 64);
    EXPECT_EQ(addmm->shape.k, 100);
    EXPECT_EQ(addmm->dtype, "fp32");
    EXPECT_NEAR(addmm->seconds, 14e-6, 1e-12);
    // A split-K call: aten::mm [[64, 4096], [4096, 100]] launched a cutlass kernel (ts 1683564901775088,
    // 14 us) and cuBLAS's splitKreduce_kernel (9 us): one call of 23 us.
    const GemmMeasurement* split = gemm_at(set, "1683564901775088.000");
    ASSERT_NE(split, nullptr);
    EXPECT_EQ(split->shape.m, 64);
    EXPECT_EQ(split->shape.n, 100);
    EXPECT_EQ(split->shape.k, 4096);
    EXPECT_NEAR(split->seconds, 23e-6, 1e-12);
    EXPECT_NE(split->origin.source.find("2 kernels summed"), std::string::npos);
    // Its 80 ncclKernel_SendRecv kernels carry no metadata; 73 GEMM kernels come from torch.compile
    // graphs (CompiledFunction) or have no launch in the trace.
    EXPECT_TRUE(set.collectives.empty());
    EXPECT_TRUE(mentions(set.warnings, "80 NCCL kernels carry no collective metadata"));
    EXPECT_TRUE(mentions(set.warnings, "73 GEMM-library kernels"));
    // 1280 device-to-device memcpys and 940 elementwise ops of two same-shaped tensors or a Scalar. The copy
    // kernel at ts 1683564901556608 (14 us) was launched in aten::copy_ [[6, 65536], [6, 65536]] of types
    // long <- int: 393216 x (8 + 4) bytes; the one at ts 1683564901752642 (3 us) in aten::mul_
    // [[4096], [4096]] float x float: two reads and a write of 4096 x 4 bytes, BabelStream's add pattern.
    // And 825 aten::mul of a float tensor by a 0-dim "double" (dims []), one read and one write each: a
    // scalar the way PyTorch 2.11 records it too (h200-torch2.11-gemms), no longer left out.
    EXPECT_EQ(set.kernels.size(), 1280U + 940U + 825U);
    const KernelMeasurement* copy = nullptr;
    const KernelMeasurement* mul = nullptr;
    for (const KernelMeasurement& k : set.kernels) {
        copy = k.origin.source.find("ts=1683564901556608.000 us") != std::string::npos ? &k : copy;
        mul = k.origin.source.find("ts=1683564901752642.000 us") != std::string::npos ? &k : mul;
    }
    ASSERT_NE(copy, nullptr);
    EXPECT_EQ(copy->kind, KernelKind::Copy);
    EXPECT_EQ(copy->bytes_moved, 393216 * 12);
    EXPECT_NEAR(copy->seconds, 14e-6, 1e-12);
    ASSERT_NE(mul, nullptr);
    EXPECT_EQ(mul->kind, KernelKind::Add);
    EXPECT_EQ(mul->bytes_moved, 3 * 4096 * 4);
    EXPECT_NEAR(mul->seconds, 3e-6, 1e-12);
}

// PyTorch 2.11 on CUDA 13 (an H200 of this project, tests/data/kineto/README.md): cuBLAS's GEMM kernels are
// nvjet_sm90_* (no "gemm" in the name) and add_(1.0)'s scalar is typed "double" with no dims. Before both
// were recognised the trace imported nothing.
TEST(KinetoImport, Torch211TraceOfAnH200GivesItsNvjetGemmsAndScalarAdds) {
    const MeasurementSet set = import_kineto_trace(testing::source_path(kH200));
    ASSERT_EQ(set.gemms.size(), 6U);  // 3 x (linear's mm, matmul's mm)
    // Kernel nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_TNN, ts 5039213352182.619, dur 1015.112, External id
    // 6 = aten::mm [[8192, 4096], [4096, 12288]] c10::BFloat16 (inside aten::linear).
    const GemmMeasurement* linear = gemm_at(set, "5039213352182.619");
    ASSERT_NE(linear, nullptr);
    EXPECT_EQ(linear->shape.m, 8192);
    EXPECT_EQ(linear->shape.n, 12288);
    EXPECT_EQ(linear->shape.k, 4096);
    EXPECT_EQ(linear->dtype, "bf16");
    EXPECT_NEAR(linear->seconds, 1015.112e-6, 1e-12);
    // nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT, ts 5039213353200.931, 1011.623 us: aten::mm
    // [[8192, 12288], [12288, 4096]].
    const GemmMeasurement* matmul = gemm_at(set, "5039213353200.931");
    ASSERT_NE(matmul, nullptr);
    EXPECT_EQ(matmul->shape.n, 4096);
    EXPECT_EQ(matmul->shape.k, 12288);
    // The three add_(1.0) kernels (vectorized_elementwise_kernel, ~30 us): one read and one write of
    // 8192 x 4096 bf16, BabelStream's scale pattern.
    ASSERT_EQ(set.kernels.size(), 3U);
    for (const KernelMeasurement& k : set.kernels) {
        EXPECT_EQ(k.kind, KernelKind::Mul);
        EXPECT_EQ(k.bytes_moved, 2 * 8192 * 4096 * 2);
    }
    EXPECT_NEAR(set.kernels.front().seconds, 29.696e-6, 1e-12);
}

TEST(KinetoImport, NanosecondClockAndMetadataOnTheOp) {
    TempDir tmp;
    KinetoTraceBuilder b;
    // Epoch nanoseconds (1.7e18; a thousandth of them would not fit in 64 bits), at offsets that a double
    // holds exactly.
    constexpr double kEpochUs = 1711964646000000.0;
    b.use_nanosecond_clock(kEpochUs);
    b.gemm(8192, 3072, 1024, "c10::BFloat16", kEpochUs + 4096.0, 412.345);
    b.nccl("allgather", 1048576, 8388608, "BFloat16", 8, "[8, 9, 10, 11, 12, 13, 14, 15]", kEpochUs + 8192.0,
           97.5, true);
    testing::write_file(tmp.path("ns.json"), b.text());
    const MeasurementSet set = import_kineto_trace(tmp.path("ns.json"));
    ASSERT_EQ(set.gemms.size(), 1U);
    EXPECT_EQ(set.gemms[0].dtype, "bf16");
    EXPECT_NEAR(set.gemms[0].seconds, 412.345e-6, 1e-12);
    ASSERT_EQ(set.collectives.size(), 1U);
    EXPECT_EQ(set.collectives[0].op, cost::CollectiveKind::AllGather);
    EXPECT_EQ(set.collectives[0].bytes, 8388608 * 2);  // nccl-tests' S: the gathered output
    EXPECT_EQ(set.collectives[0].nodes, 1);            // ranks 8..15 are node 1 at 8 GPUs per node
    EXPECT_NEAR(*set.collectives[0].seconds, 97.5e-6, 1e-12);
    EXPECT_NE(set.gemms[0].origin.source.find("ts=1711964646004096.000 us"), std::string::npos)
        << set.gemms[0].origin.source;
}

TEST(KinetoImport, GroupsAcrossNodesAndUnrecordedRanks) {
    TempDir tmp;
    KinetoTraceBuilder b;
    b.nccl("allreduce", 1000, 1000, "Float", 4, "[0, 8, 16, 24]", 100.0, 50.0);
    b.nccl("_reduce_scatter_base", 4096, 1024, "BFloat16", 4, "", 200.0, 20.0);
    testing::write_file(tmp.path("groups.json"), b.text());
    KinetoImportOptions options;
    options.gpus_per_node = 4;
    const MeasurementSet set = import_kineto_trace(tmp.path("groups.json"), options);
    ASSERT_EQ(set.collectives.size(), 2U);
    EXPECT_EQ(set.collectives[0].nodes, 4);
    EXPECT_EQ(set.collectives[1].op, cost::CollectiveKind::ReduceScatter);
    EXPECT_EQ(set.collectives[1].bytes, 4096 * 2);
    EXPECT_EQ(set.collectives[1].nodes, 1);
    EXPECT_NE(std::find(set.collectives[1].tags.begin(), set.collectives[1].tags.end(), "nodes-assumed"),
              set.collectives[1].tags.end());
}

TEST(KinetoImport, RefusesWhatItCannotUseWithTheFileAndTheReason) {
    TempDir tmp;
    KinetoTraceBuilder rocm("AMD Instinct MI250X");
    rocm.gemm(1024, 1024, 1024, "c10::BFloat16", 100.0, 10.0);
    testing::write_file(tmp.path("rocm.json"), rocm.text());
    const std::string r = import_error(tmp.path("rocm.json"));
    EXPECT_NE(r.find("rocm.json: no NVIDIA GPU activity"), std::string::npos) << r;
    EXPECT_NE(r.find("AMD Instinct MI250X, ROCm"), std::string::npos) << r;

    KinetoTraceBuilder cpu;
    cpu.cpu_only("aten::add", 100.0, 5.0);
    testing::write_file(tmp.path("cpu.json"), cpu.text());
    EXPECT_NE(import_error(tmp.path("cpu.json")).find("cpu.json: no GPU kernels"), std::string::npos);

    KinetoTraceBuilder one;
    one.gemm(64, 64, 64, "float", 1.0, 1.0);
    const std::string full = one.text();
    testing::write_file(tmp.path("cut.json"), full.substr(0, full.size() - 40));
    const std::string cut = import_error(tmp.path("cut.json"));
    EXPECT_NE(cut.find("cut.json: the JSON ends early"), std::string::npos) << cut;

    // Nanosecond timestamps without "displayTimeUnit": "ns" read as microseconds would overflow.
    testing::write_file(tmp.path("ns-unmarked.json"),
                        R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
                            "ts": 1711964646000000000, "dur": 5000, "args": {}}]})");
    const std::string unmarked = import_error(tmp.path("ns-unmarked.json"));
    EXPECT_NE(unmarked.find("too large for microseconds"), std::string::npos) << unmarked;

    testing::write_file(tmp.path("simulated.json"),
                        R"({"traceEvents": [{"ph": "X", "name": "qkv", "cat": "compute", "pid": 0, "tid": 0,
                            "ts": 0.0, "dur": 1.0, "args": {"phase": "forward", "category": "compute"}}]})");
    EXPECT_NE(import_error(tmp.path("simulated.json")).find("holds simulated times"), std::string::npos);

    testing::write_file(tmp.path("other.json"), R"({"schemaVersion": 1, "events": []})");
    EXPECT_NE(import_error(tmp.path("other.json")).find("no \"traceEvents\" array"), std::string::npos);

    // A gzip stream cut short: the first 100 000 bytes of a real trace.
    std::ifstream in(testing::source_path(kTwoRank), std::ios::binary);
    std::string head(100000, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    testing::write_file(tmp.path("cut.json.gz"), head);
    const std::string g = import_error(tmp.path("cut.json.gz"));
    EXPECT_TRUE(g.find("truncated") != std::string::npos || g.find("ends early") != std::string::npos) << g;
}

TEST(KinetoImport, CommandLineWritesAMeasurementFileAndRefusesWithStatusTwo) {
    TempDir tmp;
    // The two-rank trace and a written one of two GEMMs: the command sums what the files hold. (The 16-rank
    // trace's 25 GEMMs, which its own test above reads, cost this test 4.0 of its 8.6 s of CPU sanitized.)
    KinetoTraceBuilder gemms;
    gemms.gemm(8192, 3072, 1024, "c10::BFloat16", 100.0, 400.0);
    gemms.gemm(1024, 1024, 1024, "float", 600.0, 50.0);
    testing::write_file(tmp.path("gemms.json"), gemms.text());
    const auto ok = testing::calibrate("import " + kTwoRank + " " + tmp.path("gemms.json") + " --output " +
                                       tmp.path("m.json"));
    ASSERT_EQ(ok.status, 0) << ok.err;
    EXPECT_NE(ok.out.find("2 GEMM, 960 kernel, 15 collective records"), std::string::npos) << ok.out;
    // The file reads back as any measurement file.
    const auto again = testing::calibrate("import " + tmp.path("m.json") + " --output " + tmp.path("n.json"));
    EXPECT_EQ(again.status, 0) << again.err;

    testing::write_file(tmp.path("cpu.json"), R"({"schemaVersion": 1, "traceEvents": []})");
    const auto bad = testing::calibrate("import " + tmp.path("cpu.json") + " --output " + tmp.path("x.json"));
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("cpu.json: no GPU kernels"), std::string::npos) << bad.err;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1);
    EXPECT_FALSE(std::filesystem::exists(tmp.path("x.json")));
}

}  // namespace
}  // namespace trainsim::calibrate
