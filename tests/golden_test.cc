// Golden values for every shipped scenario: iteration time to the nanosecond, peak memory to the byte
// and the run's fingerprint. A change in behaviour fails here until tests/data/golden_runs.json is
// regenerated on purpose:  TRAINSIM_UPDATE_GOLDEN=1 build/trainsim_tests --gtest_filter='Golden*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/experiment/simulate_scenario.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

TEST(Golden, ShippedScenariosReproduceTheirRecordedRuns) {
    const std::string golden_path = testing::source_path("tests/data/golden_runs.json");
    const bool update = std::getenv("TRAINSIM_UPDATE_GOLDEN") != nullptr;
    nlohmann::ordered_json golden = nlohmann::ordered_json::object();
    if (!update) {
        std::ifstream in(golden_path);
        ASSERT_TRUE(in) << "missing " << golden_path;
        golden = nlohmann::ordered_json::parse(in);
    }
    const cost::CostModel cost = testing::shipped_cost_model();
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(testing::source_path("scenarios"))) {
        if (entry.path().extension() == ".json") {
            names.push_back(entry.path().stem().string());
        }
    }
    std::sort(names.begin(), names.end());
    ASSERT_GE(names.size(), 5u);
    nlohmann::ordered_json fresh = nlohmann::ordered_json::object();
    for (const std::string& name : names) {
        const config::Scenario sc = testing::shipped_scenario(name);
        const experiment::Simulation sim = experiment::simulate_scenario(sc, cost);
        const engine::RunResult& run = sim.run;
        const report::IterationReport& r = sim.report;
        fresh[name] = {{"iteration_time_ns", run.makespan.ns()},
                       {"peak_memory_bytes", r.peak_memory_bytes.value},
                       {"fingerprint", r.fingerprint}};
        if (!update) {
            ASSERT_TRUE(golden.contains(name)) << name << " has no golden entry";
            EXPECT_EQ(golden[name]["iteration_time_ns"].get<std::int64_t>(), run.makespan.ns()) << name;
            EXPECT_EQ(golden[name]["peak_memory_bytes"].get<std::int64_t>(), r.peak_memory_bytes.value) << name;
            EXPECT_EQ(golden[name]["fingerprint"].get<std::string>(), r.fingerprint) << name;
        }
    }
    if (update) {
        std::ofstream(golden_path) << fresh.dump(2) << "\n";
    }
}

TEST(Golden, RunsAreIdenticalEveryTime) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const config::Scenario sc = testing::shipped_scenario("korthikanti-175b");
    std::string first;
    for (int i = 0; i < 3; ++i) {
        const report::IterationReport r = experiment::simulate_scenario(sc, cost).report;
        if (i == 0) {
            first = r.fingerprint;
        }
        EXPECT_EQ(r.fingerprint, first);
    }
}

}  // namespace
}  // namespace trainsim
