// trainsim sweep: the sweep file's rules, grid order, CSV cells, resume after a kill, and the same CSV
// for any number of worker threads.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "sim/core/input_error.h"
#include "sim/sweep/csv.h"
#include "sim/sweep/grid.h"
#include "sim/sweep/mpi_sweep.h"
#include "sim/sweep/ordered_output.h"
#include "sim/sweep/progress.h"
#include "sim/sweep/sweep_runner.h"
#include "sim/sweep/sweep_spec.h"
#include "sim/sweep/sweep_table.h"
#include "sim/sweep/worker_pool.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using sweep::SweepSpec;

// A file under /tmp unique to this test process (ctest runs tests in parallel).
std::string temp_path(const std::string& name) {
    return "/tmp/trainsim_sweep_test_" + std::to_string(::getpid()) + "_" + name;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

SweepSpec spec_from(const std::string& json) {
    return sweep::parse_sweep(json, testing::source_path("scenarios/sweeps/test.json"));
}

std::string error_of(const std::string& json) {
    try {
        (void)spec_from(json);
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

// The 22B layer model cut to 4 layers: a point simulates in about a millisecond.
constexpr const char* kSmallBase =
    R"("base": {"model": {"preset": "gpt-22b", "num_layers": 4},
                "parallelism": {"tensor_model_parallel_size": 8, "pipeline_model_parallel_size": 2},
                "training": {"micro_batch_size": 1, "global_batch_size": 4},
                "hardware": {"profile": "a100-80gb-selene"}})";

SweepSpec small_sweep() {
    return spec_from(std::string("{") + kSmallBase + R"(,
      "axes": {"training.recompute_granularity": ["none", "selective", "full"],
               "parallelism.tensor_model_parallel_size": [8, 6],
               "training.global_batch_size": {"from": 2, "to": 8, "factor": 2}}})");
}

sweep::SweepOptions options(unsigned jobs, const std::string& output = "") {
    sweep::SweepOptions o;
    o.jobs = jobs;
    o.output_path = output;
    o.profile_directory = testing::source_path("scenarios/hardware");
    return o;
}

std::string run_to_string(const SweepSpec& spec, unsigned jobs) {
    std::ostringstream out;
    (void)sweep::run_sweep(spec, options(jobs), out);
    return out.str();
}

TEST(SweepSpec, AxesExpandListsRangesAndFactors) {
    const SweepSpec s = spec_from(std::string("{") + kSmallBase + R"(,
      "axes": {"training.micro_batch_size": {"from": 1, "to": 7, "step": 3},
               "training.global_batch_size": {"from": 3, "to": 100, "factor": 3},
               "schedule": {"values": ["1f1b", "gpipe"]}}})");
    ASSERT_EQ(s.axes.size(), 3u);
    EXPECT_EQ(s.axes[0].key, "training.micro_batch_size");
    EXPECT_EQ(Json(s.axes[0].values), Json::parse("[1, 4, 7]"));
    EXPECT_EQ(Json(s.axes[1].values), Json::parse("[3, 9, 27, 81]"));
    EXPECT_EQ(Json(s.axes[2].values), Json::parse(R"(["1f1b", "gpipe"])"));
    EXPECT_EQ(s.size(), 24u);
}

TEST(SweepSpec, GridVariesTheLastAxisFastest) {
    const SweepSpec s = small_sweep();
    ASSERT_EQ(s.size(), 3u * 2u * 3u);
    EXPECT_EQ(sweep::point_cells(s, 0), (std::vector<std::string>{"none", "8", "2"}));
    EXPECT_EQ(sweep::point_cells(s, 1), (std::vector<std::string>{"none", "8", "4"}));
    EXPECT_EQ(sweep::point_cells(s, 3), (std::vector<std::string>{"none", "6", "2"}));
    EXPECT_EQ(sweep::point_cells(s, 17), (std::vector<std::string>{"full", "6", "8"}));
    const std::vector<config::Override> o = sweep::point_overrides(s, 6);
    ASSERT_EQ(o.size(), 3u);
    EXPECT_EQ(o[0].key, "training.recompute_granularity");
    EXPECT_EQ(o[0].value, "\"selective\"");
    EXPECT_EQ(o[2].value, "2");
}

TEST(SweepSpec, ErrorsNameTheKeyAndTheRule) {
    const std::string base = std::string("{") + kSmallBase + ", ";
    EXPECT_NE(
        error_of(base + R"("axes": {"training.micro_batch_sise": [1]}})").find("training.micro_batch_size"),
        std::string::npos);
    EXPECT_NE(error_of(base + R"("axes": {"training.micro_batch_size": []}})").find("non-empty list"),
              std::string::npos);
    EXPECT_NE(error_of(base + R"("axes": {"training.micro_batch_size": {"from": 4, "to": 1}}})")
                  .find("to=1 must be ≥ axes.training.micro_batch_size.from=4"),
              std::string::npos);
    EXPECT_NE(error_of(base + R"("axes": {"training.micro_batch_size": {"from": 1, "to": 4, "step": 0}}})")
                  .find("step=0 must be ≥ 1"),
              std::string::npos);
    EXPECT_NE(error_of(base + R"("axes": {"training.micro_batch_size": {"from": 1, "to": 4, "stp": 2}}})")
                  .find("did you mean step?"),
              std::string::npos);
    EXPECT_NE(error_of(base + R"("axes": {"training.micro_batch_size": [4, "4"]}})").find("appears twice"),
              std::string::npos);
    EXPECT_NE(error_of(base + R"("axes": {"training.micro_batch_size": {"from": 1, "to": 100000000}}})")
                  .find("more than the"),
              std::string::npos);
    EXPECT_NE(error_of(base + R"("axes": {}})").find("axes: expected a non-empty object"), std::string::npos);
    EXPECT_NE(error_of(R"({"base": "no-such.json", "axes": {"name": ["a"]}})").find("no such scenario file"),
              std::string::npos);
    EXPECT_NE(error_of(base + R"("axis": {}})").find("axis: unknown key (did you mean axes?)"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"axes": {"name": ["a"]}})").find("base: missing"), std::string::npos);
}

TEST(SweepSpec, RepeatedKeysAreRefused) {
    EXPECT_NE(error_of(std::string("{") + kSmallBase + R"(, "axes": {"training.micro_batch_size": [1], "training.micro_batch_size": [2]}})")
                  .find("axes.training.micro_batch_size: duplicate key"),
              std::string::npos);
}

TEST(SweepCsv, CellsQuoteWhatPandasWouldMisread) {
    EXPECT_EQ(sweep::csv_cell("plain"), "plain");
    EXPECT_EQ(sweep::csv_cell("a,b"), "\"a,b\"");
    EXPECT_EQ(sweep::csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
    EXPECT_EQ(sweep::value_text(Json::parse("true")), "true");
    EXPECT_EQ(sweep::value_text(Json::parse("null")), "");
    EXPECT_EQ(sweep::value_text(Json::parse(R"({"preset":"gpt-22b"})")), R"({"preset":"gpt-22b"})");
}

TEST(SweepCsv, RecordsStopBeforeAHalfWrittenLine) {
    const auto records = sweep::parse_csv_records("a,b\n\"x,\"\"y\"\"\",2\r\n\"line\nbreak\",3\nhalf,wri");
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(records[1].cells, (std::vector<std::string>{"x,\"y\"", "2"}));
    EXPECT_EQ(records[2].cells, (std::vector<std::string>{"line\nbreak", "3"}));
    EXPECT_EQ(records[2].end, std::string("a,b\n\"x,\"\"y\"\"\",2\r\n\"line\nbreak\",3\n").size());
}

TEST(SweepRun, InvalidPointsAreRowsWithTheirError) {
    const std::string csv = run_to_string(small_sweep(), 1);
    const auto records = sweep::parse_csv_records(csv);
    ASSERT_EQ(records.size(), 1u + 18u);
    const std::size_t columns = 3 + sweep::metric_columns().size();
    for (const auto& r : records) {
        EXPECT_EQ(r.cells.size(), columns);
    }
    // Row 4 is (none, t = 6, B = 2): 6 does not divide the 64 heads.
    EXPECT_EQ(records[4].cells[1], "6");
    EXPECT_NE(records[4].cells.back().find("parallelism.tensor_model_parallel_size=6 must divide"),
              std::string::npos);
    EXPECT_EQ(records[4].cells[3], "");  // no iteration time
    // Row 1 simulated: a time, no error.
    EXPECT_EQ(records[1].cells.back(), "");
    EXPECT_GT(std::stod(records[1].cells[3]), 0.0);
}

// Every point goes through simulate_scenario, as `trainsim run` does: an overlapped-recomputation
// point runs its scheduler first instead of becoming an error row.
TEST(SweepRun, RowsEqualWhatRunPrintsForEachRecomputePolicy) {
    const std::string scenario = temp_path("recompute_base.json");
    std::ofstream(scenario) << R"({"name": "small", "model": {"preset": "gpt-22b", "num_layers": 4},
        "parallelism": {"tensor_model_parallel_size": 8, "pipeline_model_parallel_size": 2},
        "training": {"micro_batch_size": 1, "global_batch_size": 4},
        "hardware": {"profile": "a100-80gb-selene"}})";
    const SweepSpec spec = spec_from(R"({"base": ")" + scenario + R"(",
        "axes": {"training.recompute_granularity": ["selective", "overlapped"]}})");
    const auto records = sweep::parse_csv_records(run_to_string(spec, 1));
    ASSERT_EQ(records.size(), 3u);
    for (std::size_t row = 1; row < records.size(); ++row) {
        const std::string& policy = records[row].cells[0];
        EXPECT_EQ(records[row].cells.back(), "") << policy << " is an error row";
        const auto run = testing::run_trainsim("run " + scenario + " --format json --set training.recompute_granularity=" +
                                               policy);
        ASSERT_EQ(run.status, 0) << run.err;
        const double expected = nlohmann::json::parse(run.out)["iteration_time_s"].get<double>();
        EXPECT_NEAR(std::stod(records[row].cells[1]), expected, 1e-9 * expected) << policy;
    }
    std::filesystem::remove(scenario);
}

TEST(SweepRun, OneAndTwoWorkersWriteTheSameCsv) {
    const SweepSpec spec = small_sweep();
    EXPECT_EQ(run_to_string(spec, 1), run_to_string(spec, 2));
}

TEST(SweepRun, ResumeSkipsDoneRowsAndCutsAHalfWrittenOne) {
    const SweepSpec spec = small_sweep();
    const std::string path = temp_path("resume.csv");
    std::filesystem::remove(path);
    const sweep::SweepSummary first = sweep::run_sweep(spec, options(2, path), std::cout);
    EXPECT_EQ(first.simulated, 18u);
    EXPECT_EQ(first.failed, 9u);  // every t = 6 point
    const std::string complete = slurp(path);

    // What a kill leaves: the header, five whole rows, and the start of the sixth.
    const auto records = sweep::parse_csv_records(complete);
    const std::string killed = complete.substr(0, records[5].end) + complete.substr(records[5].end, 17);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << killed;
    const sweep::SweepSummary resumed = sweep::run_sweep(spec, options(2, path), std::cout);
    EXPECT_EQ(resumed.skipped, 5u);
    EXPECT_EQ(resumed.simulated, 13u);
    EXPECT_EQ(slurp(path), complete);

    // Nothing left to do: the file stays as it is.
    const sweep::SweepSummary again = sweep::run_sweep(spec, options(1, path), std::cout);
    EXPECT_EQ(again.simulated, 0u);
    EXPECT_EQ(slurp(path), complete);
    std::filesystem::remove(path);
}

TEST(SweepRun, AnotherSweepsOutputIsRefusedAndLeftAlone) {
    const std::string path = temp_path("other.csv");
    std::ofstream(path, std::ios::binary | std::ios::trunc) << "a,b,c\n1,2,3\n";
    EXPECT_THROW((void)sweep::run_sweep(small_sweep(), options(1, path), std::cout), InputError);
    EXPECT_EQ(slurp(path), "a,b,c\n1,2,3\n");
    std::filesystem::remove(path);
}

TEST(SweepRun, OrderedOutputRestoresItemOrder) {
    std::string seen;
    sweep::OrderedOutput ordered([&](const std::string& line) { seen += line; });
    ordered.put(2, "c");
    ordered.put(1, "b");
    EXPECT_EQ(seen, "");
    ordered.put(0, "a");
    EXPECT_EQ(seen, "abc");
    EXPECT_EQ(ordered.emitted(), 3u);
}

TEST(SweepRun, WorkerPoolRunsEveryItemOnceAndRethrows) {
    std::vector<int> hits(100, 0);
    sweep::parallel_for(hits.size(), 3, [&](std::size_t i, unsigned) { ++hits[i]; });
    EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), 100);
    EXPECT_THROW(sweep::parallel_for(10, 2,
                                     [](std::size_t i, unsigned) {
                                         if (i == 3) {
                                             throw std::runtime_error("boom");
                                         }
                                     }),
                 std::runtime_error);
}

TEST(SweepProgress, TextHasCountRateAndEta) {
    EXPECT_EQ(sweep::progress_text(25, 100, 5.0, false), "25/100 (25%), 5/s, ETA 0:15");
    EXPECT_EQ(sweep::progress_text(100, 100, 5.0, false), "100/100 (100%), 5/s");
    EXPECT_EQ(sweep::progress_text(50, 100, 0.0, true), "[============>           ] 50/100  50%");
    EXPECT_EQ(sweep::format_duration(3725), "1:02:05");
}

TEST(SweepCli, BadSweepFileExitsTwoAndWritesNothing) {
    const std::string sweep_file = temp_path("bad.json");
    const std::string out = temp_path("bad.csv");
    std::ofstream(sweep_file) << R"({"base": ")" << testing::source_path("scenarios/korthikanti-22b.json")
                              << R"(", "axes": {"parallelism.data_paralel_size": [1, 2]}})";
    const auto r = testing::run_trainsim("sweep " + sweep_file + " -o " + out);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("parallelism.data_parallel_size"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
    std::filesystem::remove(sweep_file);
}

TEST(SweepCli, ShippedExampleRunsToCsv) {
    const auto r = testing::run_trainsim(
        "sweep " + testing::source_path("scenarios/sweeps/korthikanti-22b-layouts.json") +
        " --jobs 2 --quiet");
    EXPECT_EQ(r.status, 0) << r.err;
    const auto records = sweep::parse_csv_records(r.out);
    ASSERT_GE(records.size(), 2u);
    EXPECT_EQ(records[0].cells.back(), "error");
}

// mpirun -n 2 on loopback: the ranks share the grid and rank 0 writes the same CSV as one process.
TEST(SweepMpi, TwoRanksWriteTheSameCsvAsOneProcess) {
    if (!sweep::built_with_mpi() || std::system("command -v mpirun > /dev/null 2>&1") != 0) {
        GTEST_SKIP() << "built without MPI, or no mpirun";
    }
    const std::string sweep_file = temp_path("mpi.json");
    std::ofstream(sweep_file) << std::string("{") + kSmallBase + R"(,
      "axes": {"training.recompute_granularity": ["none", "selective", "full"],
               "parallelism.tensor_model_parallel_size": [8, 6],
               "training.global_batch_size": {"from": 2, "to": 8, "factor": 2}}})";
    const std::string single = temp_path("single.csv");
    const std::string shared = temp_path("mpi.csv");
    std::filesystem::remove(single);
    std::filesystem::remove(shared);
    const auto one = testing::run_trainsim("sweep " + sweep_file + " -o " + single + " --jobs 1 --quiet");
    ASSERT_EQ(one.status, 0) << one.err;
    const std::string mpirun = "mpirun --allow-run-as-root --oversubscribe -n 2 ";
    const std::string command = "cd /tmp && " + mpirun + TRAINSIM_BINARY + " sweep " + sweep_file + " -o " +
                                shared + " --jobs 1 --quiet > " + shared + ".log 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << slurp(shared + ".log");
    EXPECT_EQ(slurp(shared), slurp(single));

    // Resumed over MPI after a kill that left five rows and half of the sixth.
    const std::string complete = slurp(shared);
    const auto records = sweep::parse_csv_records(complete);
    std::ofstream(shared, std::ios::binary | std::ios::trunc) << complete.substr(0, records[5].end + 9);
    ASSERT_EQ(std::system(command.c_str()), 0) << slurp(shared + ".log");
    EXPECT_EQ(slurp(shared), complete);
    for (const std::string& f : {sweep_file, single, shared, shared + ".log"}) {
        std::filesystem::remove(f);
    }
}

}  // namespace
}  // namespace trainsim
