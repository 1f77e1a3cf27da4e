#include <boost/program_options.hpp>
#include <iostream>

#include "calibrate/bench/bench_plan.h"
#include "calibrate/bench/cpu/cpu_backend.h"
#include "calibrate/bench/harness.h"
#include "calibrate/cli/cli_support.h"
#include "calibrate/cli/commands.h"
#include "sim/core/input_error.h"
#ifdef TRAINSIM_CALIBRATE_CUDA
#include "calibrate/bench/cuda/cuda_backend.h"
#endif

namespace trainsim::calibrate::cli {

namespace po = boost::program_options;

namespace {

struct RunArgs {
    std::string output;
    std::string backend;
    std::vector<std::string> scenarios;
    std::vector<std::string> overrides;
    bool tiny = false;
    int ranks = 0;
    int nodes = 1;
    std::string bootstrap_file;
    std::string filter;
    double max_gemm_flops = -1.0;
    int repetitions = 0;
    double min_time = 0.0;
};

// Powers of two from 2 up to `ranks`, and `ranks` itself: the tensor-parallel sizes in use.
std::vector<int> group_sizes(int ranks) {
    std::vector<int> sizes;
    for (int g = 2; g <= ranks; g *= 2) {
        sizes.push_back(g);
    }
    if (ranks >= 2 && (sizes.empty() || sizes.back() != ranks)) {
        sizes.push_back(ranks);
    }
    return sizes;
}

// Sizes a CPU core gets through in seconds; --tiny is for tests (a few seconds in all).
PlanOptions cpu_plan(const RunArgs& a) {
    PlanOptions p;
    p.group_sizes = group_sizes(a.ranks);
    p.scale_to_fit = true;  // a scenario's GPU-sized cases, scaled to a core's seconds
    if (a.tiny) {
        p.gemm_min_dim = 16;
        p.gemm_max_dim = 128;
        p.max_gemm_flops = 1e8;
        p.kernel_min_elements = 1 << 10;
        p.kernel_max_elements = 1 << 16;
        p.kernel_row = 256;
        p.collective_min_bytes = 1 << 10;
        p.collective_max_bytes = 1 << 16;
        // Medians of three repetitions: a 2-core CI machine shared with builds has outliers.
        p.timing = {3, 0.0, 3, 1};
        p.collective_timing = {5, 0.0, 3, 1};
    } else {
        p.gemm_min_dim = 32;
        p.gemm_max_dim = 1024;
        p.max_gemm_flops = 4e9;
        p.kernel_min_elements = 1 << 10;
        p.kernel_max_elements = 1 << 24;
        p.kernel_row = 1024;
        p.collective_min_bytes = 1 << 10;
        p.collective_max_bytes = 1 << 24;
        p.timing = {0, 0.05, 3, 1};
        p.collective_timing = {20, 0.0, 3, 1};
    }
    return p;
}

// Sizes of a data-centre GPU: cuBLASLt up to 16384^3, kernels up to 2^28 elements, collectives from 1 KiB
// to 1 GiB as nccl-tests sweeps them. Ten launches per timed iteration keep launch gaps out of the time.
PlanOptions cuda_plan(const RunArgs& a, int ranks) {
    PlanOptions p;
    p.group_sizes = a.nodes > 1 ? std::vector<int>{ranks} : group_sizes(ranks);
    p.nodes = a.nodes;
    p.gemm_min_dim = 128;
    p.gemm_max_dim = 16384;
    p.kernel_min_elements = 1 << 12;
    p.kernel_max_elements = 1 << 28;
    p.kernel_row = 4096;
    p.collective_min_bytes = 1 << 10;
    p.collective_max_bytes = std::int64_t{1} << 30;
    p.timing = {0, 0.2, 3, 10};
    // Every rank of a multi-process run must run the same number of iterations: fixed, as nccl-tests.
    p.collective_timing = {20, 0.0, 3, 1};
    return p;
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
    RunArgs a;
    po::options_description options("trainsim-calibrate run --output FILE [options]");
    options.add_options()("help,h", "show this help")("output,o", po::value(&a.output),
                                                      "Google Benchmark JSON to write (required)")(
        "backend", po::value(&a.backend),
        "cpu or cuda (default: cuda when built with CUDA and a GPU is visible)")(
        "scenario", po::value(&a.scenarios)->composing(),
        "add the GEMMs, kernels and TP collectives of this scenario (repeatable: each scenario's, a shared "
        "shape once)")("set", po::value(&a.overrides)->composing(),
                       "override a scenario key: --set parallelism.tensor_model_parallel_size=4")(
        "tiny", po::bool_switch(&a.tiny), "CPU: tiny sizes and few iterations (a few seconds; for tests)")(
        "ranks", po::value(&a.ranks), "CPU: threads of the largest collective group (default 2)")(
        "nodes", po::value(&a.nodes), "CUDA, one process per GPU: nodes the processes span (default 1)")(
        "bootstrap-file", po::value(&a.bootstrap_file),
        "CUDA, one process per GPU: a file on a shared filesystem through which rank 0 hands out NCCL's id")(
        "filter", po::value(&a.filter),
        "run only benchmarks matching this regex (Google Benchmark's filter)")(
        "max-gemm-flops", po::value(&a.max_gemm_flops), "leave out GEMMs with more FLOPs (CPU default 4e9)")(
        "repetitions", po::value(&a.repetitions), "repetitions per benchmark (the median is used)")(
        "min-time", po::value(&a.min_time),
        "seconds of timed calls per repetition of a benchmark (adaptive iteration counts)");
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(options).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
        std::cout << options;
        return 0;
    }
    if (a.output.empty()) {
        throw InputError("--output is required (the Google Benchmark JSON file to write)");
    }
    if (a.backend.empty()) {
#ifdef TRAINSIM_CALIBRATE_CUDA
        a.backend = cuda_device_available() ? "cuda" : "cpu";
#else
        a.backend = "cpu";
#endif
        std::cerr << "trainsim-calibrate run: --backend " << a.backend << "\n";
    }
    if (a.nodes < 1) {
        throw InputError("--nodes=" + std::to_string(a.nodes) + " must be at least 1");
    }

    std::unique_ptr<Backend> backend;
    PlanOptions plan_options;
    if (a.backend == "cpu") {
        a.ranks = a.ranks == 0 ? 2 : a.ranks;
        if (a.ranks < 1 || a.ranks > 64) {
            throw InputError("--ranks=" + std::to_string(a.ranks) + " must be between 1 and 64");
        }
        if (a.nodes != 1 || !a.bootstrap_file.empty()) {
            throw InputError("--nodes and --bootstrap-file are for the cuda backend");
        }
        backend = make_cpu_backend(a.ranks);
        plan_options = cpu_plan(a);
    } else if (a.backend == "cuda") {
#ifdef TRAINSIM_CALIBRATE_CUDA
        if (a.tiny || a.ranks != 0) {
            throw InputError("--tiny and --ranks are for the cpu backend");
        }
        CudaOptions cuda;
        cuda.nodes = a.nodes;
        cuda.bootstrap_file = a.bootstrap_file;
        backend = make_cuda_backend(cuda);
        plan_options = cuda_plan(a, static_cast<int>(backend->facts().gpus_per_node->value) * a.nodes);
#else
        throw InputError(
            "--backend=cuda: this trainsim-calibrate was built without CUDA (no nvcc, cuBLASLt or "
            "NCCL found, or TRAINSIM_WITH_CUDA=OFF)");
#endif
    } else {
        throw InputError("--backend=" + a.backend + " must be cpu or cuda");
    }
    for (const std::string& file : a.scenarios) {
        plan_options.scenarios.push_back(load_scenario(file, a.overrides));
    }
    if (a.scenarios.empty() && !a.overrides.empty()) {
        throw InputError("--set needs --scenario");
    }
    if (vm.count("max-gemm-flops")) {
        plan_options.max_gemm_flops = a.max_gemm_flops;
    }
    if (a.repetitions < 0) {
        throw InputError("--repetitions=" + std::to_string(a.repetitions) + " must be positive");
    }
    if (a.repetitions > 0) {
        plan_options.timing.repetitions = a.repetitions;
        plan_options.collective_timing.repetitions = a.repetitions;
    }
    if (vm.count("min-time")) {
        if (!(a.min_time > 0.0)) {
            throw InputError("--min-time must be greater than 0");
        }
        plan_options.timing.iterations = 0;
        plan_options.timing.min_time_s = a.min_time;
    }
    std::vector<std::string> notes;
    const BenchPlan plan = make_plan(plan_options, notes);
    for (const std::string& line : notes) {
        std::cerr << "trainsim-calibrate run: " << line << "\n";
    }
    const std::size_t ran = run_benchmarks(*backend, plan, {a.output, a.filter});
    if (backend->writes_output()) {
        std::cout << "trainsim-calibrate run: " << ran << " benchmarks on " << backend->facts().name << " -> "
                  << a.output << "\n";
    }
    return 0;
}

}  // namespace trainsim::calibrate::cli
