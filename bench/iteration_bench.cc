// Where the time of one `trainsim run` goes, per shipped scenario: building the program, the event
// simulation, the report; with events per second, heap allocations per event and peak heap bytes
// per simulated GPU and per task as counters.
//
//   build-sweep/trainsim_bench --benchmark_filter='Simulate/mt-nlg'
//   build-sweep/trainsim_bench --benchmark_filter='/fold-none' --benchmark_min_time=0.01
//   build/trainsim_bench --benchmark_filter='Simulate/.*/flow'   (the flow network model's engine)
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench/allocation_counter.h"
#include "sim/config/scenario.h"
#include "sim/cost/cost_model.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/program/iteration_program.h"
#include "sim/report/iteration_report.h"

namespace trainsim::bench {
namespace {

std::string source_path(const std::string& relative) {
    return std::string(TRAINSIM_SOURCE_DIR) + "/" + relative;
}

struct Case {
    std::string scenario;
    program::Fold fold;
    std::string label;
    config::NetworkModel network = config::NetworkModel::Analytical;
};

const std::vector<Case>& cases() {
    static const std::vector<Case> all = {
        {"korthikanti-22b", {}, "korthikanti-22b"},
        {"korthikanti-175b", {}, "korthikanti-175b"},
        {"korthikanti-530b", {}, "korthikanti-530b"},
        {"korthikanti-1t", {}, "korthikanti-1t"},
        {"mt-nlg-530b-2240gpu", {}, "mt-nlg-530b-2240gpu"},
        {"narayanan-gpt3-175b-96gpu", {}, "narayanan-gpt3-175b-96gpu"},
        {"narayanan-gpt3-175b-96gpu-interleaved", {}, "narayanan-gpt3-175b-96gpu-interleaved"},
        {"narayanan-gpt3-175b-96gpu", {false, false}, "narayanan-gpt3-175b-96gpu/fold-none"},
        {"korthikanti-175b", {false, false}, "korthikanti-175b/fold-none"},
        // 280 simulated GPUs (every tensor-parallel rank of one replica): 7 million tasks, the scale at
        // which memory layout, not arithmetic, decides the speed.
        {"mt-nlg-530b-2240gpu", {false, true}, "mt-nlg-530b-2240gpu/fold-dp"},
        // 16,384 GPUs folded to 16 (one per stage); results/scaling.sh times its unfolded runs.
        {"llama3-405b-16384gpu", {}, "llama3-405b-16384gpu"},
        // The flow network model (`--set hardware.network_model=flow`): the engine reshares link
        // bandwidth at every flow start and end, and a folded collective's flow crosses every copy's links.
        {"mt-nlg-530b-2240gpu", {}, "mt-nlg-530b-2240gpu/flow", config::NetworkModel::Flow},
        {"korthikanti-530b", {}, "korthikanti-530b/flow", config::NetworkModel::Flow},
    };
    return all;
}

struct Loaded {
    config::Scenario scenario;
    cost::CostModel cost;
};

Loaded load(const Case& c) {
    config::Scenario sc = config::load_scenario(source_path("scenarios/" + c.scenario + ".json"));
    sc.hardware.network_model = c.network;
    cost::CostModel cost(cost::load_hardware_profile(sc.hardware.profile, source_path("scenarios/hardware")));
    return {std::move(sc), std::move(cost)};
}

// Counters shared by every phase: the program's size, so rates can be compared across scenarios.
void size_counters(benchmark::State& state, const program::IterationProgram& prog, std::uint64_t events) {
    state.counters["tasks"] = static_cast<double>(prog.program.size());
    state.counters["simulated_gpus"] = static_cast<double>(prog.gpus.size());
    state.counters["events"] = static_cast<double>(events);
}

void allocation_counters(benchmark::State& state, const AllocationStats& before, std::uint64_t events,
                         std::size_t gpus, std::int64_t live_before) {
    const AllocationStats after = allocation_stats();
    const double iterations = static_cast<double>(state.iterations());
    state.counters["allocs"] = static_cast<double>(after.allocations - before.allocations) / iterations;
    state.counters["allocs_per_event"] = static_cast<double>(after.allocations - before.allocations) /
                                         iterations / static_cast<double>(events);
    state.counters["peak_bytes_per_gpu"] =
        static_cast<double>(after.peak_bytes - live_before) / static_cast<double>(gpus);
    // Per task, the figure that decides whether an unfolded run fits: tasks ≈ events.
    state.counters["peak_bytes_per_task"] =
        static_cast<double>(after.peak_bytes - live_before) / static_cast<double>(events);
}

void build(benchmark::State& state, const Case& c) {
    const Loaded in = load(c);
    std::uint64_t events = 0;
    std::size_t gpus = 1;
    {
        const program::IterationProgram prog = program::build_iteration(in.scenario, in.cost, c.fold);
        events = program::simulate(prog).events;
        gpus = prog.gpus.size();
        size_counters(state, prog, events);
    }
    const std::int64_t live = allocation_stats().live_bytes;
    reset_allocation_stats();
    const AllocationStats before = allocation_stats();
    for (auto _ : state) {
        program::IterationProgram prog = program::build_iteration(in.scenario, in.cost, c.fold);
        benchmark::DoNotOptimize(prog);
    }
    allocation_counters(state, before, events, gpus, live);
}

void simulate(benchmark::State& state, const Case& c) {
    const Loaded in = load(c);
    const program::IterationProgram prog = program::build_iteration(in.scenario, in.cost, c.fold);
    std::uint64_t events = program::simulate(prog).events;
    size_counters(state, prog, events);
    const std::int64_t live = allocation_stats().live_bytes;
    reset_allocation_stats();
    const AllocationStats before = allocation_stats();
    for (auto _ : state) {
        engine::RunResult run = program::simulate(prog);
        benchmark::DoNotOptimize(run);
    }
    allocation_counters(state, before, events, prog.gpus.size(), live);
    state.counters["events_per_s"] = benchmark::Counter(
        static_cast<double>(events) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void report(benchmark::State& state, const Case& c) {
    const Loaded in = load(c);
    const program::IterationProgram prog = program::build_iteration(in.scenario, in.cost, c.fold);
    const engine::RunResult run = program::simulate(prog);
    size_counters(state, prog, run.events);
    const std::int64_t live = allocation_stats().live_bytes;
    reset_allocation_stats();
    const AllocationStats before = allocation_stats();
    for (auto _ : state) {
        report::IterationReport r = report::make_iteration_report(in.scenario, in.cost, prog, run);
        benchmark::DoNotOptimize(r);
    }
    allocation_counters(state, before, run.events, prog.gpus.size(), live);
}

// What `trainsim run` does after reading its files (simulate_scenario: build, simulate, report).
void whole(benchmark::State& state, const Case& c) {
    const Loaded in = load(c);
    std::uint64_t events = 0;
    std::size_t gpus = 1;
    const std::int64_t live = allocation_stats().live_bytes;
    reset_allocation_stats();
    const AllocationStats before = allocation_stats();
    for (auto _ : state) {
        experiment::SimulationOptions options;
        options.fold = c.fold;
        experiment::Simulation sim = experiment::simulate_scenario(in.scenario, in.cost, options);
        benchmark::DoNotOptimize(sim);
        events = sim.run.events;
        gpus = sim.program.gpus.size();
    }
    allocation_counters(state, before, events, gpus, live);
}

[[maybe_unused]] const bool registered = [] {
    for (const Case& c : cases()) {
        benchmark::RegisterBenchmark(("Build/" + c.label).c_str(), build, c)->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("Simulate/" + c.label).c_str(), simulate, c)
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("Report/" + c.label).c_str(), report, c)->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("Whole/" + c.label).c_str(), whole, c)->Unit(benchmark::kMillisecond);
    }
    return true;
}();

}  // namespace
}  // namespace trainsim::bench

BENCHMARK_MAIN();
