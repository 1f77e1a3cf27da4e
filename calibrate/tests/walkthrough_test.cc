// The CPU walk-through of scenarios/hardware/README.md, run as written (run --tiny → fit → compare →
// trainsim run) in a scratch directory that sees the repository's scenarios: it must pass, and in well under
// a minute. Then what the session's profile must get right: its node size, and MFU and TFLOP/s agreeing.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <filesystem>
#include <sstream>

#include "calibrate/measure/json_writer.h"
#include "calibrate/measure/source_id.h"
#include "calibrate/tests/calibrate_test_support.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::calibrate {
namespace {

// The lines of the ```sh block after the walkthrough marker.
std::vector<std::string> walkthrough_commands() {
    std::istringstream readme(read_text_file(testing::source_path("scenarios/hardware/README.md")));
    std::vector<std::string> commands;
    bool marked = false;
    bool inside = false;
    for (std::string line; std::getline(readme, line);) {
        if (line.rfind("<!-- walkthrough-cpu", 0) == 0) {
            marked = true;
        } else if (marked && !inside && line == "```sh") {
            inside = true;
        } else if (inside && line == "```") {
            break;
        } else if (inside && !line.empty()) {
            commands.push_back(line);
        }
    }
    return commands;
}

// CPU seconds (user + system) of the finished child processes so far: what the commands cost, whatever
// else the machine runs (a wall-clock bound failed at 66 s of a 10 s session on a machine at load 13).
double children_cpu_seconds() {
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * t.tv_usec; };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

std::string binary_dir(const char* binary) {
    return std::filesystem::path(binary).parent_path().string();
}

TEST(Walkthrough, TheCpuSessionRunsAsWrittenInUnderAMinute) {
    const std::vector<std::string> commands = walkthrough_commands();
    ASSERT_EQ(commands.size(), 4U);
    testing::TempDir dir;
    std::filesystem::create_directory_symlink(testing::source_path("scenarios"), dir.path("scenarios"));
    const std::string path =
        "PATH='" + binary_dir(TRAINSIM_BINARY) + ":" + binary_dir(TRAINSIM_CALIBRATE_BINARY) + "':\"$PATH\" ";
    const double cpu_before = children_cpu_seconds();
    std::vector<testing::CommandResult> results;
    for (const std::string& command : commands) {
        results.push_back(testing::run_command(path + command, dir.dir().string()));
        ASSERT_EQ(results.back().status, 0) << command << "\n" << results.back().err;
    }
    const double seconds = children_cpu_seconds() - cpu_before;
    EXPECT_LT(seconds, 60.0);
    std::cout << "walk-through: " << seconds << " s of CPU\n";

    // run: an estimate first, the scenario's cases scaled rather than left out, no DEBUG warning.
    const std::string& run = results[0].err;
    EXPECT_NE(run.find(" benchmarks, about "), std::string::npos) << run;
    EXPECT_NE(run.find("scaled gemm 8192x2304x6144"), std::string::npos) << run;
    EXPECT_NE(run.find("scaled the scenario's tensor-parallel collectives"), std::string::npos) << run;
    EXPECT_EQ(run.find("left out"), std::string::npos) << run;
    EXPECT_EQ((results[0].out + run).find("DEBUG"), std::string::npos);
    // fit: a verdict per target.
    EXPECT_NE(results[1].out.find("compute.gemm.efficiency_vs_flops: residuals"), std::string::npos);
    EXPECT_NE(results[1].out.find(" -- ok"), std::string::npos) << results[1].out;
    // compare adapts the node and says so.
    EXPECT_NE(results[2].err.find("pricing with --set hardware.gpus_per_node=2, the node of profile my-cpu"),
              std::string::npos)
        << results[2].err;
    // trainsim run: a per-GPU rate and a throughput that are not 0 beside the MFU.
    EXPECT_EQ(results[3].out.find("per-GPU          0.0 TFLOP/s"), std::string::npos) << results[3].out;
    EXPECT_EQ(results[3].out.find("throughput       0 tokens/s"), std::string::npos) << results[3].out;
}

TEST(Walkthrough, TheSessionsProfileKnowsItsNodeAndPeak) {
    testing::TempDir dir;
    const std::string run = dir.path("cpu-run.json");
    const std::string profile = dir.path("my-cpu.json");
    ASSERT_EQ(testing::calibrate("run --backend cpu --tiny --ranks 2 --output '" + run + "'").status, 0);
    ASSERT_EQ(
        testing::calibrate("fit --base a100-80gb-selene '" + run + "' --output '" + profile + "'").status, 0);
    const cost::HardwareProfile p = cost::load_hardware_profile(profile, dir.path(""));
    EXPECT_EQ(p.gpus_per_node, 2);
    // Without the node size, trainsim says in one line what to pass.
    const std::string scenario = "scenarios/korthikanti-22b.json --set hardware.profile='" + profile + "'";
    const auto refused = testing::trainsim("run " + scenario);
    EXPECT_EQ(refused.status, 2);
    EXPECT_NE(
        refused.err.find("hardware.gpus_per_node=8 exceeds the 2 GPUs per node of profile my-cpu; pass --set "
                         "hardware.gpus_per_node=2"),
        std::string::npos)
        << refused.err;
    // MFU and TFLOP/s per GPU are the same number, whatever the peak (here a CPU core's).
    const auto json = testing::trainsim("run " + scenario + " --set hardware.gpus_per_node=2 --format json");
    ASSERT_EQ(json.status, 0) << json.err;
    const OrderedJson r = OrderedJson::parse(json.out);
    EXPECT_NEAR(r.at("tflops_per_gpu").get<double>(), r.at("mfu").get<double>() * p.peak_tflops,
                1e-9 * p.peak_tflops);
    const auto text = testing::trainsim("run " + scenario + " --set hardware.gpus_per_node=2");
    ASSERT_EQ(text.status, 0) << text.err;
    char expected[64];
    std::snprintf(expected, sizeof expected, "per-GPU          %.3g TFLOP/s",
                  r.at("tflops_per_gpu").get<double>());
    EXPECT_NE(text.out.find(expected), std::string::npos) << text.out;
}

}  // namespace
}  // namespace trainsim::calibrate
