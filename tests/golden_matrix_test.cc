// Golden runs over the simulator's mechanisms, not only the shipped scenarios (which all use
// schedule auto and no overlapped recomputation): schedule × recompute policy × overlap_grad_reduce ×
// fold on one small model (tests/data/golden_matrix_base.json). Each point records its iteration time,
// peak memory, run fingerprint and one fingerprint per simulated GPU, so a failure names the first GPU
// whose behaviour changed. A change fails here until the file is regenerated on purpose:
//   TRAINSIM_UPDATE_GOLDEN=1 build/trainsim_tests --gtest_filter='GoldenMatrix*'
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/core/input_error.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/program/gpu_fingerprints.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

struct Schedule {
    const char* name;
    const char* virtual_stages;
};
struct Recompute {
    const char* name;
    std::vector<config::Override> overrides;
};

std::string hex(std::uint64_t h) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
    return text;
}

nlohmann::ordered_json simulate_point(const std::vector<config::Override>& overrides,
                                      const program::Fold& fold) {
    try {
        const config::Scenario sc =
            config::load_scenario(testing::source_path("tests/data/golden_matrix_base.json"), overrides);
        const cost::CostModel cost = testing::shipped_cost_model();
        experiment::SimulationOptions options;
        options.fold = fold;
        const experiment::Simulation sim = experiment::simulate_scenario(sc, cost, options);
        nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
        for (const std::uint64_t h : program::gpu_fingerprints(sim.program, sim.run)) {
            gpus.push_back(hex(h));
        }
        return {{"iteration_time_ns", sim.run.makespan.ns()},
                {"peak_memory_bytes", sim.report.peak_memory_bytes.value},
                {"fingerprint", sim.report.fingerprint},
                {"gpus", gpus}};
    } catch (const InputError& e) {
        return {{"error", e.what()}};
    }
}

TEST(GoldenMatrix, EveryMechanismReproducesItsRecordedRun) {
    const std::string golden_path = testing::source_path("tests/data/golden_matrix.json");
    const bool update = std::getenv("TRAINSIM_UPDATE_GOLDEN") != nullptr;
    nlohmann::ordered_json golden = nlohmann::ordered_json::object();
    if (!update) {
        std::ifstream in(golden_path);
        ASSERT_TRUE(in) << "missing " << golden_path;
        golden = nlohmann::ordered_json::parse(in);
    }
    const std::vector<Schedule> schedules = {
        {"gpipe", "1"}, {"1f1b", "1"}, {"interleaved", "2"}, {"breadth_first", "2"}};
    const std::vector<Recompute> recomputes = {
        {"none", {}},
        {"selective", {{"training.recompute_granularity", "selective"}}},
        {"full-uniform",
         {{"training.recompute_granularity", "full"},
          {"training.recompute_method", "uniform"},
          {"training.recompute_num_layers", "1"}}},
        {"full-block",
         {{"training.recompute_granularity", "full"},
          {"training.recompute_method", "block"},
          {"training.recompute_num_layers", "1"}}},
        {"overlapped", {{"training.recompute_granularity", "overlapped"}}},
    };
    nlohmann::ordered_json fresh = nlohmann::ordered_json::object();
    int errors = 0;
    for (const Schedule& s : schedules) {
        for (const Recompute& r : recomputes) {
            for (const bool overlap_grad_reduce : {false, true}) {
                for (const bool folded : {true, false}) {
                    std::vector<config::Override> overrides = r.overrides;
                    overrides.push_back({"schedule", s.name});
                    overrides.push_back(
                        {"parallelism.virtual_pipeline_model_parallel_size", s.virtual_stages});
                    overrides.push_back(
                        {"training.overlap_grad_reduce", overlap_grad_reduce ? "true" : "false"});
                    const std::string name =
                        std::string(s.name) + "/" + r.name + "/" +
                        (overlap_grad_reduce ? "overlap_grad_reduce" : "sync_grad_reduce") + "/" +
                        (folded ? "fold" : "unfolded");
                    const program::Fold fold = folded ? program::Fold{} : program::Fold{false, false};
                    const nlohmann::ordered_json point = simulate_point(overrides, fold);
                    errors += point.contains("error") ? 1 : 0;
                    fresh[name] = point;
                    if (update) {
                        continue;
                    }
                    ASSERT_TRUE(golden.contains(name)) << name << " has no golden entry";
                    const nlohmann::ordered_json& want = golden[name];
                    if (want.contains("error") || point.contains("error")) {
                        EXPECT_EQ(want.dump(), point.dump()) << name;
                        continue;
                    }
                    EXPECT_EQ(want["iteration_time_ns"], point["iteration_time_ns"]) << name;
                    EXPECT_EQ(want["peak_memory_bytes"], point["peak_memory_bytes"]) << name;
                    if (want["fingerprint"] != point["fingerprint"]) {
                        const auto& a = want["gpus"];
                        const auto& b = point["gpus"];
                        std::string first = a.size() != b.size() ? "the number of simulated GPUs" : "none";
                        for (std::size_t g = 0; first == "none" && g < a.size(); ++g) {
                            if (a[g] != b[g]) {
                                first = "simulated GPU " + std::to_string(g);
                            }
                        }
                        ADD_FAILURE() << name << ": fingerprint changed; first difference: " << first;
                    }
                }
            }
        }
    }
    // Folding simulates identical GPUs once: on this symmetric layout it must not change the answer.
    for (const auto& [name, point] : fresh.items()) {
        const std::string base = name.substr(0, name.rfind('/'));
        if (name.ends_with("/fold") && !point.contains("error")) {
            EXPECT_EQ(point["iteration_time_ns"], fresh[base + "/unfolded"]["iteration_time_ns"]) << base;
            EXPECT_EQ(point["peak_memory_bytes"], fresh[base + "/unfolded"]["peak_memory_bytes"]) << base;
        }
    }
    // The matrix is there to run mechanisms: most of its points must simulate.
    EXPECT_LE(errors, 8) << "too many points of the matrix are refused";
    if (update) {
        std::ofstream(golden_path) << fresh.dump(2) << "\n";
    }
}

}  // namespace
}  // namespace trainsim
