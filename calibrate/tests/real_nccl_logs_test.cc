// The nccl-tests importer on logs people published from real A100, H100 and RTX 5090 machines
// (calibrate/tests/data/nccl-tests-logs, sources in its README): each imports, or is refused with a reason
// a reader of the log would agree with.
#include <gtest/gtest.h>

#include <algorithm>

#include "calibrate/import/nccl_tests_log.h"
#include "calibrate/tests/calibrate_test_support.h"
#include "sim/core/input_error.h"

namespace trainsim::calibrate {
namespace {

std::string log_path(const std::string& name) {
    return testing::source_path("calibrate/tests/data/nccl-tests-logs/" + name);
}

std::string refusal(const std::string& name, const NcclLogOptions& options = {}) {
    try {
        (void)read_nccl_tests_log(log_path(name), options);
    } catch (const InputError& e) {
        const std::string what = e.what();
        return what.substr(what.find(name) + name.size());
    }
    return "(imported)";
}

const CollectiveMeasurement& at_bytes(const MeasurementSet& set, std::int64_t bytes) {
    const auto it = std::find_if(set.collectives.begin(), set.collectives.end(),
                                 [&](const CollectiveMeasurement& c) { return c.bytes == bytes; });
    EXPECT_NE(it, set.collectives.end()) << bytes;
    return *it;
}

// 2x8 H100 (GCP A3 Mega), 2023-24 layout with Group and root columns; busbw printed 0.00 up to 256 B.
TEST(RealNcclLogs, H100TwoNodesFromTheTimeColumnNotThePrintedZeros) {
    const MeasurementSet set = read_nccl_tests_log(log_path("01-h100-gcp-a3mega-2node16-all_reduce.log"));
    ASSERT_EQ(set.collectives.size(), 62U);  // 31 sizes, 8 B to 8 GiB, out-of-place and in-place
    const CollectiveMeasurement& small = at_bytes(set, 64);
    EXPECT_EQ(small.op, cost::CollectiveKind::AllReduce);
    EXPECT_EQ(small.ranks, 16);
    EXPECT_EQ(small.nodes, 2);
    EXPECT_DOUBLE_EQ(*small.seconds, 123.4e-6);
    EXPECT_FALSE(small.busbw_GBps);  // the printed 0.00 is not kept
    // 64 B · 2·15/16 / 123.4 µs, not 0.
    EXPECT_NEAR(*small.bus_bandwidth_GBps(), 64 * 1.875 / 123.4e-6 / 1e9, 1e-12);
    // The log is cut to its result block: no binary name, but 1.875 is all-reduce's factor at its 16 ranks.
    ASSERT_EQ(set.warnings.size(), 1U);
    EXPECT_NE(set.warnings[0].find("names no collective; busbw / algbw = 1.875 is all_reduce's bus factor "
                                   "2(n-1)/n at its 16 ranks and no other collective's: read as all_reduce"),
              std::string::npos)
        << set.warnings[0];
}

// srun on a Cray EX: a bare "NCCL version" line, one GPU per process, no Rank lines.
TEST(RealNcclLogs, SlingshotPerProcessRunNeedsItsRanksAndNodes) {
    const std::string name = "02-a100-hpe-slingshot-2node8-all_reduce.log";
    EXPECT_EQ(refusal(name),
              ": cannot tell which collective it measures (no 'NAME_perf' in it) from the log; "
              "give op (busbw / algbw = 1.75, which reads as all_reduce over 8 ranks)");
    NcclLogOptions op;
    op.op = cost::CollectiveKind::AllReduce;
    EXPECT_EQ(
        refusal(name, op),
        ": cannot tell the number of ranks from the log (one GPU per process, nThread 1 nGpus 1, and no "
        "Rank lines); give ranks (busbw / algbw = 1.75, which reads as all_reduce over 8 ranks)");
    NcclLogOptions ranks;
    ranks.ranks = 8;  // the collective then reads from the bus factor
    EXPECT_EQ(refusal(name, ranks),
              ": cannot tell the number of nodes from the log (8 ranks in several processes, no Rank lines "
              "naming their hosts); give nodes");
    NcclLogOptions wrong = op;
    wrong.ranks = 4;
    wrong.nodes = 2;
    EXPECT_NE(refusal(name, wrong).find("busbw 17.33 is not algbw x all_reduce's bus factor at 4 ranks"),
              std::string::npos);
    NcclLogOptions both = ranks;
    both.nodes = 2;
    const MeasurementSet set = read_nccl_tests_log(log_path(name), both);
    EXPECT_EQ(set.collectives.size(), 28U);
    EXPECT_EQ(set.collectives[0].scope(), cost::Scope::InterNode);
    ASSERT_EQ(set.warnings.size(), 2U);
    EXPECT_NE(set.warnings[0].find("read as all_reduce"), std::string::npos);
    EXPECT_NE(set.warnings[1].find("skipped 1 lines that are not nccl-tests output (1 from NCCL, 0 others)"),
              std::string::npos);
}

// mpirun over ssh: the first line is ssh's host-key warning.
TEST(RealNcclLogs, OciRoceSkipsTheSshLine) {
    const MeasurementSet set = read_nccl_tests_log(log_path("05-a100-oci-bm.gpu4.8-2node16-all_reduce.log"));
    EXPECT_EQ(set.collectives.size(), 56U);
    EXPECT_EQ(set.collectives[0].ranks, 16);
    EXPECT_EQ(set.collectives[0].nodes, 2);
    ASSERT_EQ(set.warnings.size(), 2U);
    EXPECT_NE(set.warnings[1].find("0 from NCCL, 1 others, the first at line 1 'Warning: Permanently added"),
              std::string::npos);
}

// Old nccl-tests (no Group, no root, 'error' column; all_gather without a redop column, alltoall with an
// empty one), and no binary name anywhere: all-reduce reads from its bus factor; the (n−1)/n collectives
// must be given, and the refusal says what busbw / algbw reads as.
TEST(RealNcclLogs, SuperBenchOldLayoutsNeedOnlyTheCollective) {
    EXPECT_EQ(read_nccl_tests_log(log_path("07-a100-superbench-1node8-old-allreduce.log")).collectives.size(),
              64U);
    EXPECT_EQ(refusal("07-a100-superbench-1node8-old-allgather.log"),
              ": cannot tell which collective it measures (no 'NAME_perf' in it) from the log; give op "
              "(busbw / algbw = 0.875, which reads as all_gather, reduce_scatter or alltoall over 8 ranks)");
    // Rows from 4 B (all-reduce) or 32 B (8 ranks x 4 B) to 8 GiB; the 5 empty rows are skipped.
    const struct {
        const char* name;
        cost::CollectiveKind op;
        std::size_t records;
    } logs[] = {{"07-a100-superbench-1node8-old-allreduce.log", cost::CollectiveKind::AllReduce, 64},
                {"07-a100-superbench-1node8-old-allgather.log", cost::CollectiveKind::AllGather, 58},
                {"07-a100-superbench-1node8-old-reducescatter.log", cost::CollectiveKind::ReduceScatter, 58}};
    for (const auto& log : logs) {
        NcclLogOptions options;
        options.op = log.op;
        const MeasurementSet set = read_nccl_tests_log(log_path(log.name), options);
        EXPECT_EQ(set.collectives.size(), log.records) << log.name;
        EXPECT_EQ(set.collectives[0].ranks, 8) << log.name;
        EXPECT_EQ(set.collectives[0].nodes, 1) << log.name;
    }
    EXPECT_EQ(refusal("07-a100-superbench-1node8-old-alltoall.log"),
              ": cannot tell which collective it measures (no 'NAME_perf' in it) from the log; give op "
              "(busbw / algbw = 0.875, which reads as all_gather, reduce_scatter or alltoall over 8 ranks)");
    // Told the wrong collective, the bus factor disagrees and says what the log reads as.
    NcclLogOptions wrong;
    wrong.op = cost::CollectiveKind::AllReduce;
    EXPECT_NE(refusal("07-a100-superbench-1node8-old-allgather.log", wrong)
                  .find("is not algbw x all_reduce's bus factor at 8 ranks"),
              std::string::npos);
}

// mpirun --tag-output with NCCL_DEBUG=INFO from 16 ranks, old Rank lines, NCCL 2.9.9's version line.
TEST(RealNcclLogs, AwsTaggedOutputWithOldRankLines) {
    const MeasurementSet set =
        read_nccl_tests_log(log_path("08-a100-aws-p4d-efa-2node16-mpirun-tagged-all_reduce.log"));
    EXPECT_EQ(set.collectives.size(), 60U);
    EXPECT_EQ(set.collectives[0].ranks, 16);
    EXPECT_EQ(set.collectives[0].nodes, 2);
    ASSERT_EQ(set.warnings.size(), 2U);
    EXPECT_NE(set.warnings[1].find("from NCCL, 0 others"), std::string::npos) << set.warnings[1];
    // Given the ranks it already says, it agrees.
    NcclLogOptions sixteen;
    sixteen.ranks = 16;
    EXPECT_EQ(
        read_nccl_tests_log(log_path("08-a100-aws-p4d-efa-2node16-mpirun-tagged-all_reduce.log"), sixteen)
            .collectives.size(),
        60U);
}

// nccl-tests 2.18 built with MPI (all_reduce_perf_mpi), two processes on one host, wide #wrong column.
TEST(RealNcclLogs, NcclTests218MpiBinary) {
    const MeasurementSet set =
        read_nccl_tests_log(log_path("12-rtx5090-1host2proc-socket-nccltests2.18.0-all_reduce_perf_mpi.log"));
    EXPECT_EQ(set.collectives.size(), 50U);
    EXPECT_EQ(set.collectives[0].op, cost::CollectiveKind::AllReduce);
    EXPECT_EQ(set.collectives[0].ranks, 2);
    EXPECT_EQ(set.collectives[0].nodes, 1);
}

}  // namespace
}  // namespace trainsim::calibrate
