// `trainsim check`: a measured iteration against the simulated one. The measured iterations are made
// with known perturbations, so the errors the check must report are known exactly:
// - the trace of `trainsim run --trace` with a profile whose GEMM efficiencies are 0.8 times the
//   shipped one: every dense GEMM takes 1.25 times longer, so simulated / measured − 1 = −0.2 for each
//   GEMM op and 0 for every other op;
// - a PyTorch profiler trace (Kineto 2.x shape) whose qkv GEMM and proj all-reduce took 1.25 times the
//   simulated time.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/test_support.h"

namespace trainsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_trainsim;

const std::string k22b = testing::source_path("scenarios/korthikanti-22b.json");

class TempDir {
public:
    TempDir() : dir_(fs::temp_directory_path() / ("trainsim_check_" + std::to_string(::getpid()))) {
        fs::create_directories(dir_);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    [[nodiscard]] std::string path(const std::string& name) const { return (dir_ / name).string(); }

private:
    fs::path dir_;
};

void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

// The dense GEMMs of a 22B layer and the output layer (attention's batched GEMMs read other efficiencies).
bool is_dense_gemm(const std::string& op) {
    static const std::set<std::string> kGemms = {"qkv", "proj", "fc1", "fc2", "output.logits"};
    const std::string base = op.substr(0, op.rfind('.') == std::string::npos ? op.size() : op.rfind('.'));
    return kGemms.count(op) > 0 ||
           (kGemms.count(base) > 0 && (op.ends_with(".dgrad") || op.ends_with(".wgrad")));
}

TEST(Check, RecoversAGemmPerturbationOpByOpFromTheSimulatorsOwnTrace) {
    TempDir tmp;
    json profile =
        json::parse(std::ifstream(testing::source_path("scenarios/hardware/a100-80gb-selene.json")));
    for (json& p : profile["compute"]["gemm"]["efficiency_vs_flops"]["points"]) {
        p["y"] = p["y"].get<double>() * 0.8;
    }
    profile["name"] = "slow-gemm";
    write(tmp.path("slow-gemm.json"), profile.dump());
    const auto measured =
        run_trainsim("run " + k22b + " --set hardware.profile=" + tmp.path("slow-gemm.json") + " --trace " +
                     tmp.path("measured.json"));
    ASSERT_EQ(measured.status, 0) << measured.err;

    const auto r =
        run_trainsim("check " + k22b + " --measured " + tmp.path("measured.json") + " --format json");
    ASSERT_EQ(r.status, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["unmatched"]["measured_ops"], 0);
    EXPECT_EQ(j["unmatched"]["simulated_ops"], 0);
    int gemm_rows = 0;
    for (const json& row : j["ops"]) {
        const std::string op = row["op"];
        const double error = row["error"];
        if (!is_dense_gemm(op)) {
            EXPECT_NEAR(error, 0.0, 1e-6) << op;
        } else if (op.ends_with(".wgrad")) {
            // A wgrad overlaps its layer's dgrad all-reduce and is slowed by a fixed share while they
            // overlap (Calculon's processor_usage), which does not scale with the GEMM: between −20 % and
            // a few points less.
            EXPECT_LE(error, -0.15) << op;
            EXPECT_GE(error, -0.2 - 1e-6) << op;
            ++gemm_rows;
        } else {
            EXPECT_NEAR(error, 1.0 / 1.25 - 1.0, 1e-5) << op;
            ++gemm_rows;
        }
    }
    EXPECT_EQ(gemm_rows, 15);  // 4 layer GEMMs and the logits, forward, dgrad and wgrad
    // 48 layers: every layer op is matched 48 times.
    EXPECT_EQ(j["ops"][4]["op"], "ln1");
    EXPECT_EQ(j["ops"][4]["count"], 48);
    ASSERT_EQ(j["phases"].size(), 3U);  // forward, backward, iteration (the optimizer)
    EXPECT_LT(j["iteration"]["error"].get<double>(), 0.0);
    EXPECT_NEAR(
        j["iteration"]["simulated_s"].get<double>(),
        json::parse(run_trainsim("run " + k22b + " --format json").out)["iteration_time_s"].get<double>(),
        1e-9);

    const auto csv =
        run_trainsim("check " + k22b + " --measured " + tmp.path("measured.json") + " --format csv");
    ASSERT_EQ(csv.status, 0) << csv.err;
    EXPECT_EQ(
        csv.out.rfind("level,op,phase,count,measured_s,simulated_s,error\nop,embedding.lookup,forward,1,", 0),
        0U)
        << csv.out.substr(0, 200);
}

// A profiler trace in PyTorch 2.x's shape: CPU op with External id and Input Dims, its launch, its kernel.
json kineto_call(const std::string& op, const json& op_args, const std::string& kernel,
                 const json& kernel_args, std::int64_t id, double gpu_us, double dur_us, int tid = 1) {
    json op_event = {{"ph", "X"},  {"cat", "cpu_op"}, {"name", op}, {"pid", 1},
                     {"tid", tid}, {"ts", 10.0 * id}, {"dur", 5.0}, {"args", op_args}};
    op_event["args"]["External id"] = id;
    json k = {{"ph", "X"}, {"cat", "kernel"}, {"name", kernel}, {"pid", 0},
              {"tid", 7},  {"ts", gpu_us},    {"dur", dur_us},  {"args", kernel_args}};
    k["args"]["External id"] = id;
    k["args"]["correlation"] = 1000 + id;
    k["args"]["device"] = 0;
    k["args"]["stream"] = 7;
    json launch = {{"ph", "X"},
                   {"cat", "cuda_runtime"},
                   {"name", "cudaLaunchKernel"},
                   {"pid", 1},
                   {"tid", tid},
                   {"ts", 10.0 * id + 1.0},
                   {"dur", 2.0},
                   {"args", {{"External id", id}, {"correlation", 1000 + id}}}};
    return json::array({op_event, launch, k});
}

TEST(Check, PairsAProfilerTracesGemmsAndCollectivesWithSimulatedOpsByShape) {
    TempDir tmp;
    // The simulated qkv (m 8192 = s·b, n 2304 = 3h/t, k 6144 = h) and proj all-reduce (8192·6144·2 bytes).
    const auto sim = run_trainsim("run " + k22b + " --trace " + tmp.path("sim.json"));
    ASSERT_EQ(sim.status, 0) << sim.err;
    const json labelled = json::parse(
        run_trainsim("check " + k22b + " --measured " + tmp.path("sim.json") + " --format json").out);
    double qkv_s = 0.0;
    double allreduce_s = 0.0;
    for (const json& row : labelled["ops"]) {
        const double mean = row["simulated_s"].get<double>() / row["count"].get<double>();
        if (row["op"] == "qkv") {
            qkv_s = mean;
        } else if (row["op"] == "proj.allreduce") {
            allreduce_s = mean;
        }
    }
    ASSERT_GT(qkv_s, 0.0);
    ASSERT_GT(allreduce_s, 0.0);
    json events = json::array();
    // Three profiled steps on the training loop's thread (tid 1); the backward's ops on the autograd
    // thread (tid 2). In each step: the forward's qkv GEMM and an all-reduce of s·b·h, and in the backward
    // an all-reduce of the same size and a GEMM of qkv's forward shape taking twice as long, which no
    // backward op of the simulation has: it must neither pair nor change the forward's qkv.
    const json meta = {{"Collective name", "allreduce"},
                       {"In msg nelems", 8192 * 6144},
                       {"Out msg nelems", 8192 * 6144},
                       {"Group size", 8},
                       {"dtype", "BFloat16"},
                       {"Process Group Ranks", "[0, 1, 2, 3, 4, 5, 6, 7]"}};
    const json qkv_args = {{"Input Dims", {{8192, 6144}, {6144, 2304}}},
                           {"Input type", {"c10::BFloat16", "c10::BFloat16"}}};
    const std::string gemm_kernel = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x32";
    const std::string nccl_kernel =
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
    for (int i = 0; i < 3; ++i) {
        const double step_us = 1e6 + 1e5 * i;
        events.push_back({{"ph", "X"},
                          {"cat", "user_annotation"},
                          {"name", "ProfilerStep#" + std::to_string(i)},
                          {"pid", 1},
                          {"tid", 1},
                          {"ts", 100.0 * i},
                          {"dur", 100.0},
                          {"args", json::object()}});
        const json calls[] = {kineto_call("aten::mm", qkv_args, gemm_kernel, json::object(), 10 * i + 1,
                                          step_us, qkv_s * 1.25e6),
                              kineto_call("record_param_comms", json::object(), nccl_kernel, meta, 10 * i + 2,
                                          step_us + 1e4, allreduce_s * 1.25e6),
                              kineto_call("record_param_comms", json::object(), nccl_kernel, meta, 10 * i + 3,
                                          step_us + 2e4, allreduce_s * 1.25e6, 2),
                              kineto_call("aten::mm", qkv_args, gemm_kernel, json::object(), 10 * i + 4,
                                          step_us + 3e4, qkv_s * 2e6, 2)};
        for (const json& call : calls) {
            for (const json& e : call) {
                events.push_back(e);
            }
        }
    }
    const json trace = {{"schemaVersion", 1},
                        {"deviceProperties", json::array({{{"id", 0}, {"name", "NVIDIA A100-SXM4-80GB"}}})},
                        {"traceEvents", events}};
    write(tmp.path("job.pt.trace.json"), trace.dump());
    const auto r =
        run_trainsim("check " + k22b + " --measured " + tmp.path("job.pt.trace.json") + " --format json");
    ASSERT_EQ(r.status, 0) << r.err;
    const json j = json::parse(r.out);
    std::set<std::string> seen;
    for (const json& row : j["ops"]) {
        seen.insert(row["op"]);
        // Timestamps are written to the nanosecond: 1e-6 relative.
        EXPECT_NEAR(row["error"].get<double>(), 1.0 / 1.25 - 1.0, 1e-5) << row["op"];
        // 48 layers; the embedding's and the logits' all-reduces are once per iteration.
        EXPECT_EQ(row["count"], row["op"].get<std::string>().rfind("embedding", 0) == 0 ||
                                        row["op"].get<std::string>().rfind("output", 0) == 0
                                    ? 1
                                    : 48)
            << row["op"];
    }
    // Only qkv has its shape (its dgrad and wgrad are other shapes); every all-reduce of s·b·h bf16
    // pairs with the measured one of its pass.
    EXPECT_TRUE(seen.count("qkv") > 0);
    EXPECT_TRUE(seen.count("proj.allreduce") > 0);
    EXPECT_TRUE(seen.count("fc2.allreduce") > 0);
    EXPECT_TRUE(seen.count("qkv.dgrad_allreduce") > 0);
    EXPECT_TRUE(seen.count("fc1.dgrad_allreduce") > 0);
    EXPECT_EQ(j["unmatched"]["measured_ops"], 3);  // the backward-thread GEMMs of qkv's forward shape
    EXPECT_NEAR(j["iteration"]["measured_s"].get<double>(), 100e-6, 1e-12);  // the ProfilerStep spans
    EXPECT_GT(j["unmatched"]["simulated_ops"].get<int>(), 0);  // memory-bound kernels are never paired
}

TEST(Check, ReadsTheRealTestTracesAndTakesTheirIterationFromTheProfilerSteps) {
    // Neither is a transformer job (tests/data/kineto/README.md), so almost nothing pairs; what the check
    // must get right is the measured iteration: the mean ProfilerStep span, read by hand with python3
    // (gzip, json): 2-rank steps #4-#6 last 222442.191, 219726.905 and 224936.243 us; 16-rank steps
    // #550-#554 209748, 216483, 216119, 215467 and 216216 us.
    const std::pair<const char*, double> traces[] = {
        {"tests/data/kineto/a100-2rank-nccl.pt.trace.json.gz", 0.222368446},
        {"tests/data/kineto/a100-16rank-rank0.pt.trace.json.gz", 0.2148066}};
    for (const auto& [trace, step_s] : traces) {
        const auto r =
            run_trainsim("check " + k22b + " --measured " + testing::source_path(trace) + " --format json");
        ASSERT_EQ(r.status, 0) << r.err;
        const json j = json::parse(r.out);
        EXPECT_NEAR(j["iteration"]["measured_s"].get<double>(), step_s, 1e-9) << trace;
        EXPECT_GT(j["unmatched"]["simulated_ops"].get<int>(), 0) << trace;
    }
}

TEST(Check, RefusesUnusableMeasurementsWithOneLine) {
    TempDir tmp;
    write(tmp.path("cpu.json"), R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add",
                                     "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {}}]})");
    const auto r = run_trainsim("check " + k22b + " --measured " + tmp.path("cpu.json"));
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("cpu.json: no GPU kernels"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);

    write(tmp.path("cut.json"), R"({"traceEvents": [{"ph": "X", "cat": "kernel", "na)");
    const auto cut = run_trainsim("check " + k22b + " --measured " + tmp.path("cut.json"));
    EXPECT_EQ(cut.status, 2);
    EXPECT_NE(cut.err.find("cut.json: the JSON ends early"), std::string::npos) << cut.err;

    const auto missing = run_trainsim("check " + k22b);
    EXPECT_EQ(missing.status, 2);
    EXPECT_NE(missing.err.find("--measured is required"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace trainsim
