// The nccl-tests importer: the published A100 logs kept in calibrate/data, the layouts nccl-tests prints
// (with and without a root column, under mpirun, with NCCL_DEBUG lines), and one line per broken rule.
#include <gtest/gtest.h>

#include "calibrate/import/nccl_tests_log.h"
#include "calibrate/tests/calibrate_test_support.h"
#include "sim/core/input_error.h"

namespace trainsim::calibrate {
namespace {

std::string error_of(const std::string& text, const NcclLogOptions& options = {}) {
    try {
        (void)parse_nccl_tests_log(text, "x.log", options);
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

const char* const kHeader = "#       size         count      type   redop    root     time   algbw   busbw "
                            "#wrong     time   algbw   busbw "
                            "#wrong\n";

TEST(NcclTestsLog, ReadsThePublishedA100AllReduceTable) {
    const MeasurementSet set =
        read_nccl_tests_log(testing::source_path("calibrate/data/a100-all_reduce_perf.log"));
    ASSERT_EQ(set.collectives.size(), 20U);  // the in-place columns are N/A
    const CollectiveMeasurement& first = set.collectives.front();
    EXPECT_EQ(first.op, cost::CollectiveKind::AllReduce);
    EXPECT_EQ(first.ranks, 8);  // "nThread 1 nGpus 8"
    EXPECT_EQ(first.nodes, 1);
    EXPECT_EQ(first.bytes, 32768);
    EXPECT_EQ(first.placement, Placement::OutOfPlace);
    EXPECT_DOUBLE_EQ(*first.seconds, 43.83e-6);
    EXPECT_DOUBLE_EQ(*first.busbw_GBps, 1.31);  // kept beside the time: 3 printed digits
    const CollectiveMeasurement& last = set.collectives.back();
    EXPECT_EQ(last.bytes, 17179869184);
    EXPECT_NEAR(*last.bus_bandwidth_GBps(), 234.89, 0.005);
    EXPECT_EQ(set.files.at(0).source_id, "S-DATA-A100-ALL-REDUCE-PERF");
    EXPECT_NE(last.origin.source.find("S-DATA-A100-ALL-REDUCE-PERF: line "), std::string::npos);
}

TEST(NcclTestsLog, ReadsThePublishedSendRecvExcerptWithBothColumns) {
    NcclLogOptions options;
    options.ranks = 8;  // the excerpt has no Rank lines; the command was -g 8
    const MeasurementSet set =
        read_nccl_tests_log(testing::source_path("calibrate/data/a100-sendrecv_perf.log"), options);
    ASSERT_EQ(set.collectives.size(), 8U);
    EXPECT_EQ(set.collectives[0].op, cost::CollectiveKind::SendRecv);  // "sendrecv_perf" in the header
    EXPECT_EQ(set.collectives[0].placement, Placement::OutOfPlace);
    EXPECT_EQ(set.collectives[1].placement, Placement::InPlace);
    // busbw = algbw = S / t for send/recv: no bus factor.
    EXPECT_NEAR(*set.collectives[6].bus_bandwidth_GBps(), 195.10, 0.01);
    EXPECT_NEAR(*set.collectives[7].bus_bandwidth_GBps(), 195.56, 0.01);
}

// What launchers interleave with the block: srun --label prefixes, Slurm, MPI's SET VAR lines, X11 and
// SHARP messages. Skipped and counted (a line naming NCCL, such as SET VAR=NCCL_..., counts as NCCL's);
// the rows and the Rank lines behind "0: " are read.
TEST(NcclTestsLog, LauncherLinesAreSkippedAndCounted) {
    const std::string log =
        "srun: job 4242 queued and waiting for resources\n"
        "SET VAR=NCCL_IB_HCA=mlx5\n"
        "/usr/bin/xauth:  file /home/u/.Xauthority does not exist\n"
        "0: # nThread 1 nGpus 1 minBytes 1024 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20\n"
        "0: #  Rank  0 Group  0 Pid  11 on    node-a device  0 [0x07] NVIDIA H100 80GB HBM3\n"
        "0: #  Rank  1 Group  0 Pid  12 on    node-a device  1 [0x0b] NVIDIA H100 80GB HBM3\n"
        "0: #  Rank  2 Group  0 Pid  13 on    node-b device  0 [0x07] NVIDIA H100 80GB HBM3\n"
        "0: #  Rank  3 Group  0 Pid  14 on    node-b device  1 [0x0b] NVIDIA H100 80GB HBM3\n"
        "[node-a:0] INFO: SHARP: sharp_coll_init\n"
        "0: " +
        std::string(kHeader) +
        // all-reduce over 4 ranks, no binary name: busbw / algbw = 1.5 = 2(4-1)/4
        "0:         1024           256     float     sum      -1    10.00    0.10    0.15      0    10.00    "
        "0.10"
        "    0.15      0\n"
        "0:      1048576        262144     float     sum      -1    100.0   10.49   15.73      0    100.0   "
        "10.49"
        "   15.73      0\n";
    const MeasurementSet set = parse_nccl_tests_log(log, "slurm.log");
    ASSERT_EQ(set.collectives.size(), 4U);
    EXPECT_EQ(set.collectives[0].op, cost::CollectiveKind::AllReduce);
    EXPECT_EQ(set.collectives[0].ranks, 4);
    EXPECT_EQ(set.collectives[0].nodes, 2);
    ASSERT_EQ(set.warnings.size(), 2U);
    EXPECT_EQ(set.warnings[1],
              "slurm.log: skipped 4 lines that are not nccl-tests output (1 from NCCL, 3 others, "
              "the first at line 1 'srun: job 4242 queued and waiting for resources')");
}

TEST(NcclTestsLog, RanksAndNodesFromTheRankLinesUnderMpirun) {
    const std::string log =
        "[1,0]<stdout>:# nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21903\n"
        "[1,0]<stdout>:# Collective test starting: all_gather_perf\n"
        "[1,0]<stdout>:#  Rank  0 Group  0 Pid  11 on    node-a device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
        "[1,0]<stdout>:#  Rank  1 Group  0 Pid  12 on    node-a device  1 [0x0b] NVIDIA A100-SXM4-80GB\n"
        "[1,0]<stdout>:#  Rank  2 Group  0 Pid  13 on    node-b device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
        "[1,0]<stdout>:#  Rank  3 Group  0 Pid  14 on    node-b device  1 [0x0b] NVIDIA A100-SXM4-80GB\n"
        "node-a:11:11 [0] NCCL INFO Bootstrap : Using ib0\n"
        "[1,0]<stdout>:" +
        std::string(kHeader) +
        // all-gather over 4 ranks: busbw = algbw * 3/4
        "[1,0]<stdout>:     1048576         65536     float    none      -1    100.0   10.49    7.86      0  "
        "  99.00   "
        "10.59    7.94      0\n"
        "[1,0]<stdout>:# Avg bus bandwidth    : 7.9\n";
    const MeasurementSet set = parse_nccl_tests_log(log, "ag.log");
    ASSERT_EQ(set.collectives.size(), 2U);
    EXPECT_EQ(set.collectives[0].op, cost::CollectiveKind::AllGather);
    EXPECT_EQ(set.collectives[0].ranks, 4);
    EXPECT_EQ(set.collectives[0].nodes, 2);
    EXPECT_EQ(set.collectives[0].scope(), cost::Scope::InterNode);
}

TEST(NcclTestsLog, OldLayoutWithoutRootAndErrorMagnitudes) {
    const std::string log =
        "# all_reduce_perf\n"
        "#       size    count   type   redop     time  algbw  busbw  error     time  algbw  busbw  "
        "error\n"
        "    33554432  8388608  float     sum   1535.5  21.85  40.97  5e-07   1535.3  21.86  40.98  "
        "5e-07\n";
    NcclLogOptions options;
    options.ranks = 16;
    options.nodes = 2;
    const MeasurementSet set = parse_nccl_tests_log(log, "old.log", options);
    ASSERT_EQ(set.collectives.size(), 2U);
    EXPECT_EQ(set.collectives[0].nodes, 2);
    EXPECT_NEAR(*set.collectives[1].bus_bandwidth_GBps(), 40.98, 0.005);
}

TEST(NcclTestsLog, LongLinesAndLookalikesAreReadLinearly) {
    // A megabyte-long header line and a megabyte-long row: an error or nothing, never a crash.
    const std::string long_header = "# " + std::string(1 << 20, 'a') + "\n";
    EXPECT_EQ(error_of(long_header),
              "x.log: no result rows (lines of size, count, type, redop, root, time, algbw, "
              "busbw, #wrong): is this nccl-tests output?");
    EXPECT_EQ(error_of(std::string(1 << 20, '7') + "\n").substr(0, 22), "x.log: no result rows ");
    // "perfect" is not a binary; "[x,y]<stdout>:" with non-numbers is not mpirun's prefix.
    NcclLogOptions eight;
    eight.ranks = 8;
    const std::string rows =
        std::string(kHeader) + "  1024  256  float  sum  -1  10.0  0.10  0.18  0  10.0  0.10  0.18  0\n";
    EXPECT_EQ(error_of("# a_perfect run\n" + rows, eight).substr(0, 40),
              "x.log: cannot tell which collective it m");
    const MeasurementSet tagged =
        parse_nccl_tests_log("# all_reduce_perf\n[a,b]<stdout>:" + rows, "x.log", eight);
    ASSERT_EQ(tagged.warnings.size(), 1U);  // the header line is not read as one: a foreign line
    EXPECT_NE(tagged.warnings[0].find("the first at line 2 '[a,b]<stdout>:#"), std::string::npos);
}

TEST(NcclTestsLog, MalformedRowsNameFileLineAndRule) {
    const std::string head = "# all_reduce_perf\n" + std::string(kHeader);
    NcclLogOptions eight;
    eight.ranks = 8;
    EXPECT_EQ(error_of(head + "  1024  256  float  sum  -1  10.0  0.10\n", eight),
              "x.log:3: a result row is size count type [redop] [root], then time algbw busbw #wrong "
              "out-of-place and "
              "in-place (11 to 13 columns), got 7: '1024  256  float  sum  -1  10.0  0.10'");
    // Not a row (size is not a number): a foreign line, skipped; with no row left, no result rows.
    EXPECT_EQ(error_of(head + "  1k  256  float  sum  -1  10.0  0.10  0.18  0  10.0  0.10  0.18  0\n", eight)
                  .substr(0, 22),
              "x.log: no result rows ");
    EXPECT_EQ(
        error_of(head + "  1024  256  float  sum  -1  fast  0.10  0.18  0  10.0  0.10  0.18  0\n", eight),
        "x.log:3: the out-of-place time 'fast' must be a non-negative number (or all three of time, algbw, "
        "busbw N/A)");
    EXPECT_EQ(
        error_of(head + "  1024  256  float  sum  -1  10.0  0.10  0.18  3  10.0  0.10  0.18  0\n", eight),
        "x.log:3: the out-of-place run reports 3 wrong values; a broken run's timing cannot be used");
    // algbw must be size / time: 1024 B in 10 us is 0.10 GB/s, not 1.0.
    EXPECT_EQ(
        error_of(head + "  1024  256  float  sum  -1  10.0  1.00  1.75  0  10.0  0.10  0.18  0\n", eight),
        "x.log:3: algbw 1 is not size / time = 0.1024 (within the printed rounding, 0.005512)");
}

TEST(NcclTestsLog, BusbwMustMatchTheCollectiveAndRanks) {
    // busbw 0.18 = 0.1024 * 1.75 fits all-reduce over 8 ranks; told 2 ranks (factor 1), the log disagrees.
    const std::string log = "# all_reduce_perf\n" + std::string(kHeader) +
                            "  1024  256  float  sum  -1  10.0  0.10  0.18  0  10.0  0.10  0.18  0\n";
    NcclLogOptions two;
    two.ranks = 2;
    EXPECT_EQ(
        error_of(log, two),
        "x.log:3: busbw 0.18 is not algbw x all_reduce's bus factor at 2 ranks = 0.1024 (within the printed "
        "rounding, 0.005512)");
    NcclLogOptions eight;
    eight.ranks = 8;
    EXPECT_EQ(parse_nccl_tests_log(log, "x.log", eight).collectives.size(), 2U);
}

TEST(NcclTestsLog, WhatTheLogDoesNotSayMustBeGivenAndAgree) {
    const std::string rows =
        std::string(kHeader) + "  1024  256  float  sum  -1  10.0  0.10  0.18  0  10.0  0.10  0.18  0\n";
    EXPECT_EQ(error_of(rows),
              "x.log: cannot tell which collective it measures (no 'NAME_perf' in it) from the log; "
              "give op");
    NcclLogOptions op;
    op.op = cost::CollectiveKind::AllReduce;
    EXPECT_EQ(error_of(rows, op),
              "x.log: cannot tell the number of ranks from the log (no '#  Rank' or 'nThread .. nGpus' "
              "lines); give ranks");
    NcclLogOptions wrong_op;
    wrong_op.op = cost::CollectiveKind::AllGather;
    wrong_op.ranks = 8;
    EXPECT_EQ(error_of("# all_reduce_perf\n" + rows, wrong_op),
              "x.log: op all_gather disagrees with the log (all_reduce)");
    // The printed 0.03 of a 512 B row is within the rounding of algbw 0.01 x 1.75 from the unrounded time
    // (512 B / 20.0 us = 0.0256 GB/s, busbw 0.0448), not "0.03 is not 0.0175".
    const std::string small = "# all_reduce_perf\n" + std::string(kHeader) +
                              "  512  128  float  sum  -1  20.00  0.03  0.04  0  20.00  0.03  0.04  0\n";
    NcclLogOptions eight_ranks;
    eight_ranks.ranks = 8;
    EXPECT_EQ(parse_nccl_tests_log(small, "x.log", eight_ranks).collectives.size(), 2U);
    EXPECT_EQ(
        error_of("# alltoall_perf\n" + rows),
        "x.log:1: alltoall_perf measures a collective the cost model does not price (it reads all_reduce, "
        "all_gather, reduce_scatter and sendrecv)");
    EXPECT_EQ(error_of("# just a comment\n"),
              "x.log: no result rows (lines of size, count, type, redop, root, time, "
              "algbw, busbw, #wrong): is this nccl-tests output?");
}

}  // namespace
}  // namespace trainsim::calibrate
