// The critical path: exact times on hand-built engine programs, and on small scenarios where what
// lies on it is known (a single GPU runs everything on it; with one micro-batch a pipeline overlaps
// nothing, so every stage's forward and backward is on it).
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "sim/engine/critical_path.h"
#include "sim/engine/critical_path_graph.h"
#include "sim/engine/simulator.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/report/critical_path.h"
#include "tests/support/json_file.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using engine::CriticalStep;
using engine::TaskId;

std::vector<std::pair<TaskId, SimTime>> as_pairs(const std::vector<CriticalStep>& steps) {
    std::vector<std::pair<TaskId, SimTime>> out;
    for (const CriticalStep& s : steps) {
        out.emplace_back(s.task, s.wait_before);
    }
    return out;
}

// GPU 0: a(10) b(5) then rendezvous member; GPU 1: c(30) then the other member; the rendezvous (20)
// starts at 30 when c's member arrives. Then d(7) on GPU 0, and x(3) on a third stream after d.
// Path: c [0,30] → member on GPU 1 [30,50] → d [50,57] → x [57,60].
TEST(CriticalPath, FollowsTheLastArrivingRendezvousMember) {
    engine::Program p;
    const auto s0 = p.add_stream(engine::GpuId{0}, "gpu0");
    const auto s1 = p.add_stream(engine::GpuId{1}, "gpu1");
    const auto s2 = p.add_stream(engine::GpuId{1}, "side");
    const auto r = p.add_rendezvous(2, 20_ns, "r");
    const TaskId a = p.add_task(s0, 10_ns, "a");
    const TaskId b = p.add_task(s0, 5_ns, "b");
    const TaskId m0 = p.add_rendezvous_task(s0, r, "m0");
    const TaskId c = p.add_task(s1, 30_ns, "c");
    const TaskId m1 = p.add_rendezvous_task(s1, r, "m1");
    const TaskId d = p.add_task(s0, 7_ns, "d");
    const std::vector<TaskId> after_d = {d};
    const TaskId x = p.add_task(s2, 3_ns, "x", after_d);
    const engine::RunResult run = engine::simulate(p);
    ASSERT_EQ(run.makespan, 60_ns);
    EXPECT_EQ(as_pairs(engine::critical_path(p, run)),
              (std::vector<std::pair<TaskId, SimTime>>{{c, 0_ns}, {m1, 0_ns}, {d, 0_ns}, {x, 0_ns}}));
    (void)a;
    (void)b;
    (void)m0;
}

// A dependency that ends later than the stream predecessor binds: f2 waits for g (on another GPU).
TEST(CriticalPath, TakesTheDependencyThatEndedLast) {
    engine::Program p;
    const auto s0 = p.add_stream(engine::GpuId{0}, "gpu0");
    const auto s1 = p.add_stream(engine::GpuId{1}, "gpu1");
    const TaskId f1 = p.add_task(s0, 10_ns, "f1");
    const TaskId g = p.add_task(s1, 25_ns, "g");
    const std::vector<TaskId> deps = {g};
    const TaskId f2 = p.add_task(s0, 4_ns, "f2", deps);
    const engine::RunResult run = engine::simulate(p);
    ASSERT_EQ(run.makespan, 29_ns);
    EXPECT_EQ(as_pairs(engine::critical_path(p, run)),
              (std::vector<std::pair<TaskId, SimTime>>{{g, 0_ns}, {f2, 0_ns}}));
    (void)f1;
}

// A background task waits for its foreground stream to go idle: that wait is on the path.
// Foreground f1 [0,10]; background g (5) ready at 0 runs [10,15]; f2 (4) after g runs [15,19].
TEST(CriticalPath, ChargesABackgroundTasksHoldUpAsWaiting) {
    engine::Program p;
    const auto fg = p.add_stream(engine::GpuId{0}, "compute");
    const auto bg = p.add_background_stream(fg, "recompute");
    const TaskId f1 = p.add_task(fg, 10_ns, "f1");
    const TaskId g = p.add_task(bg, 5_ns, "g");
    const std::vector<TaskId> deps = {g};
    const TaskId f2 = p.add_task(fg, 4_ns, "f2", deps);
    const engine::RunResult run = engine::simulate(p);
    ASSERT_EQ(run.makespan, 19_ns);
    EXPECT_EQ(as_pairs(engine::critical_path(p, run)),
              (std::vector<std::pair<TaskId, SimTime>>{{g, 10_ns}, {f2, 0_ns}}));
    (void)f1;
}

TEST(CriticalPath, EmptyProgramHasNoPath) {
    const engine::Program p;
    EXPECT_TRUE(engine::critical_path(p, engine::simulate(p)).empty());
}

// The Boost.Graph DAG path gives exactly the back-walk's steps and waits on shipped scenarios
// that have pipeline bubbles, interleaving, recompute (background streams) and data-parallel
// rendezvous. The pipelined ones with 2p micro-batches (p for MT-NLG, 280 of its 2240 samples): the same
// warm-up, steady state, cool-down and rendezvous at a quarter to an eighth of the tasks (8.0 -> 1.5 s of
// CPU sanitized).
TEST(CriticalPath, BoostGraphPathEqualsTheBackWalk) {
    static const cost::CostModel cost = testing::shipped_cost_model();
    const std::vector<std::pair<std::string, std::vector<config::Override>>> cases = {
        {"korthikanti-22b", {}},
        {"korthikanti-175b", {{"training.global_batch_size", "16"}}},
        {"korthikanti-175b",
         {{"training.global_batch_size", "16"},
          {"training.recompute_granularity", "full"},
          {"training.recompute_method", "uniform"},
          {"training.recompute_num_layers", "1"}}},
        {"narayanan-gpt3-175b-96gpu-interleaved", {{"training.global_batch_size", "24"}}},
        {"mt-nlg-530b-2240gpu", {{"training.global_batch_size", "280"}}},
    };
    for (const auto& [name, overrides] : cases) {
        SCOPED_TRACE(name);
        const experiment::Simulation sim =
            experiment::simulate_scenario(testing::shipped_scenario(name, overrides), cost);
        const std::vector<CriticalStep> path = engine::critical_path(sim.program.program, sim.run);
        ASSERT_FALSE(path.empty());
        EXPECT_EQ(as_pairs(path), as_pairs(engine::critical_path_on_graph(sim.program.program, sim.run)));
    }
}

experiment::Simulation simulate(const std::vector<config::Override>& overrides) {
    static const cost::CostModel cost = testing::shipped_cost_model();
    return experiment::simulate_scenario(testing::shipped_scenario("korthikanti-22b", overrides), cost);
}

// The steps tile [0, makespan] and the shares add up to it, to the nanosecond.
void expect_tiles(const experiment::Simulation& sim, const report::CriticalPath& path) {
    SimTime at{};
    for (const engine::CriticalStep& s : engine::critical_path(sim.program.program, sim.run)) {
        const engine::TaskTiming& t = sim.run.timings[s.task.index()];
        EXPECT_EQ(t.start, at + s.wait_before);
        at = t.end;
    }
    EXPECT_EQ(at, sim.run.makespan);
    EXPECT_NEAR(path.shares.total().value, sim.report.iteration_time.value, 1e-12);
}

// One GPU, no communication: the path is its compute stream, so its shares are the breakdown's.
TEST(CriticalPath, OnOneGpuIsTheComputeStream) {
    const experiment::Simulation sim = simulate({{"parallelism.tensor_model_parallel_size", "1"},
                                                 {"parallelism.pipeline_model_parallel_size", "1"},
                                                 {"parallelism.data_parallel_size", "1"},
                                                 {"model.num_layers", "2"},
                                                 {"training.global_batch_size", "2"},
                                                 {"training.micro_batch_size", "1"}});
    const report::CriticalPath path = report::make_critical_path(sim.program, sim.run);
    expect_tiles(sim, path);
    const report::Breakdown& b = sim.report.stages.at(0).time;
    EXPECT_NEAR(path.shares.compute.value, b.compute.value, 1e-12);
    EXPECT_NEAR(path.shares.optimizer.value, b.optimizer.value, 1e-12);
    EXPECT_EQ(path.shares.wait.value, 0.0);
    EXPECT_EQ(path.biggest_share(), "compute");
    ASSERT_EQ(path.gpus.size(), 1U);
}

// Two stages, one micro-batch: nothing overlaps, so every forward and backward compute task of both
// stages is on the path, with the two pipeline transfers between them.
TEST(CriticalPath, OneMicrobatchPipelineRunsThroughEveryStage) {
    const experiment::Simulation sim = simulate({{"parallelism.tensor_model_parallel_size", "1"},
                                                 {"parallelism.pipeline_model_parallel_size", "2"},
                                                 {"parallelism.data_parallel_size", "1"},
                                                 {"model.num_layers", "4"},
                                                 {"training.global_batch_size", "1"},
                                                 {"training.micro_batch_size", "1"}});
    const report::CriticalPath path = report::make_critical_path(sim.program, sim.run);
    expect_tiles(sim, path);
    const std::set<TaskId> on_path(path.task_ids.begin(), path.task_ids.end());
    SimTime compute{};
    int transfers = 0;
    for (std::size_t t = 0; t < sim.program.program.size(); ++t) {
        const auto id = TaskId::from_index(t);
        const program::TaskInfo info = sim.program.info[t];
        if (info.category == program::TaskCategory::Compute) {
            EXPECT_TRUE(on_path.contains(id)) << sim.program.describe(id);
            compute += sim.run.timings[t].end - sim.run.timings[t].start;
        }
        if (info.category == program::TaskCategory::PipelineComm && on_path.contains(id)) {
            ++transfers;
        }
    }
    EXPECT_NEAR(path.shares.compute.value, to_seconds(compute).value, 1e-12);
    EXPECT_EQ(transfers, 2);  // activation forward, gradient back
    EXPECT_EQ(path.gpus.size(), 2U);
}

TEST(CriticalPath, CliPrintsItAsTextAndJson) {
    const auto text = testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-22b.json") +
                                            " --set model.num_layers=8 --critical-path");
    ASSERT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("critical path: "), std::string::npos);
    const auto json = testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-22b.json") +
                                            " --set model.num_layers=8 --critical-path --format json");
    ASSERT_EQ(json.status, 0) << json.err;
    const auto j = nlohmann::json::parse(json.out);
    EXPECT_NEAR(j["critical_path"]["length_s"].get<double>(), j["iteration_time_s"].get<double>(), 1e-12);
    const auto csv = testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-22b.json") +
                                           " --critical-path --format csv");
    EXPECT_EQ(csv.status, 2);
    EXPECT_NE(csv.err.find("--critical-path"), std::string::npos);
}

// --trace marks the critical tasks; with --critical-path it adds one track that repeats them.
TEST(CriticalPath, TraceMarksItsTasks) {
    const std::string path = ::testing::TempDir() + "critical_trace.json";
    const auto r =
        testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-22b.json") +
                              " --set model.num_layers=8 --critical-path --format json --trace " + path);
    ASSERT_EQ(r.status, 0) << r.err;
    const auto report = nlohmann::json::parse(r.out);
    const auto trace = testing::read_json_file(path);
    int track_pid = -1;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "critical path") {
            track_pid = e["pid"].get<int>();
        }
    }
    ASSERT_GE(track_pid, 0);
    std::size_t track_slices = 0;
    std::size_t marked = 0;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] != "X") {
            continue;
        }
        if (e["pid"].get<int>() == track_pid) {
            ++track_slices;
        } else if (e["args"].value("critical", false)) {
            ++marked;
        }
    }
    EXPECT_EQ(track_slices, report["critical_path"]["tasks"].get<std::size_t>());
    EXPECT_GE(marked, track_slices);  // a compute task's ops are marked one by one
}

}  // namespace
}  // namespace trainsim
