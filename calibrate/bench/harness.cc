#include "calibrate/bench/harness.h"

#include <array>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <unistd.h>
#include <vector>

#include <benchmark/benchmark.h>

#include "calibrate/bench/progress.h"
#include "calibrate/measure/benchmark_name.h"
#include "calibrate/measure/run_context.h"
#include "sim/core/input_error.h"

namespace trainsim::calibrate {

namespace {

namespace fs = std::filesystem;

std::string number_text(double v) {
    std::array<char, 40> buffer{};
    std::snprintf(buffer.data(), buffer.size(), "%.17g", v);
    return buffer.data();
}

void add_context(const Backend& backend) {
    const DeviceFacts f = backend.facts();
    benchmark::AddCustomContext(std::string(run_context::kBackend), backend.name());
    benchmark::AddCustomContext(std::string(run_context::kDevice), f.name);
    const std::optional<DeviceFact>* facts[] = {&f.peak_tflops, &f.hbm_GBps,      &f.memory_bytes,
                                                &f.num_sms,     &f.gpus_per_node, &f.compute_capability};
    for (std::size_t i = 0; i < run_context::kFacts.size(); ++i) {
        if (*facts[i]) {
            const std::string key = std::string(run_context::kPrefix) + std::string(run_context::kFacts[i]);
            benchmark::AddCustomContext(key, number_text((*facts[i])->value));
            benchmark::AddCustomContext(key + "_kind", (*facts[i])->kind);
            benchmark::AddCustomContext(key + "_how", (*facts[i])->how);
        }
    }
    std::string best;
    if (f.peak_is_best_measured) {
        best = "peak_tflops";
    }
    if (f.hbm_is_best_measured) {
        best += std::string(best.empty() ? "" : ",") + "hbm_GBps";
    }
    if (!best.empty()) {
        benchmark::AddCustomContext(std::string(run_context::kBestMeasured), best);
    }
}

// The op of the benchmark that runs now, prepared once for all of its runs: Google Benchmark calls a
// benchmark's function once per trial of its iteration count and once per repetition, and preparing (GPU
// buffers, operand fills, cuBLASLt's heuristic, NCCL groups) each time made the first H200 run take 1.6 s a
// benchmark for 0.15 s of timing. One op is alive at a time, as before: the next benchmark frees it.
struct PreparedOp {
    std::size_t registered = 0;  // benchmarks registered so far; each one's id is its count
    std::size_t owner = 0;       // the id of the benchmark `op` was prepared for; 0: none
    std::unique_ptr<TimedOp> op;
};

// One Google Benchmark: prepares the op at its first run (and warms it: caches, page faults, a
// collective's threads), times it with the backend's clock, and reports a failure to prepare or run as a
// skipped benchmark.
void register_case(const std::string& name, std::function<std::unique_ptr<TimedOp>()> prepare,
                   const Timing& timing, const std::shared_ptr<PreparedOp>& current) {
    const int calls = timing.calls_per_iteration;
    const std::size_t id = ++current->registered;
    auto* b = benchmark::RegisterBenchmark(
        name.c_str(), [prepare = std::move(prepare), calls, current, id](benchmark::State& state) {
            try {
                if (current->owner != id || !current->op) {
                    current->op.reset();  // the previous benchmark's buffers go first
                    current->owner = 0;
                    current->op = prepare();
                    current->owner = id;
                    (void)current->op->seconds_per_call(1);
                }
                for (auto _ : state) {
                    state.SetIterationTime(current->op->seconds_per_call(calls));
                }
            } catch (const std::exception& e) {
                current->op.reset();
                current->owner = 0;
                state.SkipWithError(e.what());
            }
        });
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
    if (timing.iterations > 0) {
        b->Iterations(timing.iterations);
    } else {
        // An iteration runs `calls` calls but reports one call's time (the records are per call), so
        // Google Benchmark would run `calls` times the minimum: the H200 runs spent ~1 s a benchmark at
        // --min-time 0.02 and 0.03, ten times what was asked and what the estimate assumed.
        b->MinTime(timing.min_time_s / calls);
    }
    if (timing.repetitions > 1) {
        b->Repetitions(timing.repetitions)->ReportAggregatesOnly(true);
    }
}

}  // namespace

std::size_t run_benchmarks(Backend& backend, const BenchPlan& plan, const HarnessOptions& options) {
    const fs::path target(options.output);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    if (target.filename().empty() || !fs::is_directory(dir, ec)) {
        throw InputError("--output=" + options.output + ": must be a file in an existing directory");
    }
    const fs::path temp = dir / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()));

    add_context(backend);
    const auto current = std::make_shared<PreparedOp>();
    const std::string dtype = backend.dtype();
    for (const GemmCase& g : plan.gemms) {
        register_case(
            gemm_benchmark_name(g.shape, g.cls, dtype).text(), [&backend, g] { return backend.gemm(g); },
            plan.timing, current);
    }
    // The dense GEMMs again with FP8 inputs where the GPU has FP8 tensor cores, twice: with fast
    // accumulation (dtype fp8: fit refits compute.gemm_fp8 from them) and with the split accumulator
    // (dtype fp8_split_accumulator: the fit's compute.gemm_fp8.split_accumulator_slowdown).
    if (backend.supports_fp8()) {
        for (GemmCase g : plan.gemms) {
            if (g.cls != cost::GemmClass::Dense) {
                continue;
            }
            g.fp8 = true;
            for (const bool split : {false, true}) {
                g.split_accumulator = split;
                register_case(
                    gemm_benchmark_name(g.shape, g.cls, split ? kFp8SplitAccumulatorDtype : "fp8").text(),
                    [&backend, g] { return backend.gemm(g); }, plan.timing, current);
            }
        }
    }
    for (const KernelCase& k : plan.kernels) {
        register_case(
            kernel_benchmark_name(k.kind, backend.bytes_moved(k), dtype).text(),
            [&backend, k] { return backend.kernel(k); }, plan.timing, current);
    }
    for (const CollectiveCase& c : plan.collectives) {
        register_case(
            collective_benchmark_name(c.op, c.ranks, backend.nodes(), c.bytes, dtype).text(),
            [&backend, c] { return backend.collective(c); }, plan.collective_timing, current);
    }

    std::vector<std::string> args = {"trainsim-calibrate", "--benchmark_out=" + temp.string(),
                                     "--benchmark_out_format=json"};
    if (!options.filter.empty()) {
        args.push_back("--benchmark_filter=" + options.filter);
    }
    std::vector<char*> argv;
    for (std::string& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    int argc = static_cast<int>(args.size());
    benchmark::Initialize(&argc, argv.data());
    const std::size_t total = current->registered;  // the FP8 twins included
    std::ostream null_stream(nullptr);              // ranks other than 0 show nothing
    std::ostream& out = backend.writes_output() ? std::cerr : null_stream;
    double estimate_s = 0.0;
    try {
        const RunEstimate estimate = estimate_run(backend, plan, total);
        estimate_s = estimate.seconds;
        out << "trainsim-calibrate run: " << total << " benchmarks"
            << (options.filter.empty() ? "" : " before --filter") << ", about "
            << static_cast<long>(estimate.seconds + 0.5) << " s (from a probe: " << estimate.how << ")\n";
    } catch (const std::exception& e) {
        out << "trainsim-calibrate run: " << total
            << " benchmarks; no estimate (the probe failed: " << e.what() << ")\n";
    }
    const auto reporter =
        make_progress_reporter(total, estimate_s, out, backend.writes_output() && ::isatty(2));
    // The last benchmark's op and the registered benchmarks (which refer to `backend`) go before the
    // backend does, whichever way this function is left.
    struct Release {
        PreparedOp& current;
        explicit Release(PreparedOp& c) : current(c) {}
        Release(const Release&) = delete;
        Release& operator=(const Release&) = delete;
        ~Release() {
            current.op.reset();
            benchmark::ClearRegisteredBenchmarks();
        }
    } release(*current);
    const std::size_t ran = benchmark::RunSpecifiedBenchmarks(reporter.get());
    benchmark::Shutdown();

    if (!backend.writes_output()) {
        fs::remove(temp, ec);
        return ran;
    }
    if (ran == 0) {
        fs::remove(temp, ec);
        throw InputError("--filter=" + options.filter + ": matches no benchmark; nothing written");
    }
    if (!fs::is_regular_file(temp, ec) || fs::file_size(temp, ec) == 0) {
        throw InputError("--output=" + options.output + ": Google Benchmark wrote no output");
    }
    fs::rename(temp, target, ec);
    if (ec) {
        fs::remove(temp, ec);
        throw InputError("--output=" + options.output + ": cannot be written (" + ec.message() + ")");
    }
    return ran;
}

}  // namespace trainsim::calibrate
