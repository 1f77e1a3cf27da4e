// The CLI contract (DESIGN.md §5): outputs, exit statuses, one-line errors that name the key and the
// rule, and output files that appear whole or not at all.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/json_file.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using testing::run_trainsim;

const std::string k22b = testing::source_path("scenarios/korthikanti-22b.json");

std::size_t lines(const std::string& s) {
    return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

TEST(Cli, RunJsonHasTheContractKeys) {
    const auto r = run_trainsim("run " + k22b + " --format json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    for (const char* key : {"iteration_time_s", "mfu", "hfu", "tflops_per_gpu", "tokens_per_s",
                            "peak_memory_bytes", "stages", "breakdown", "fits_in_memory", "warnings"}) {
        EXPECT_TRUE(j.contains(key)) << key;
    }
    for (const char* key :
         {"peak_memory_bytes", "activation_bytes", "busy_s", "bubble_s", "exposed_comm_s", "recompute_s"}) {
        EXPECT_TRUE(j["stages"][0].contains(key)) << key;
    }
    for (const char* key :
         {"compute_s", "recompute_s", "exposed_tp_comm_s", "exposed_pp_comm_s", "exposed_dp_comm_s",
          "exposed_cp_comm_s", "exposed_ep_comm_s", "bubble_s", "optimizer_s"}) {
        EXPECT_TRUE(j["breakdown"].contains(key)) << key;
    }
    EXPECT_GT(j["iteration_time_s"].get<double>(), 0.5);
    EXPECT_LT(j["mfu"].get<double>(), 1.0);
    EXPECT_FALSE(j["fits_in_memory"].get<bool>());  // Korthikanti Fig. 1: the 22B baseline exceeds 80 GB
}

TEST(Cli, RunTextAndCsv) {
    const auto text = run_trainsim("run " + k22b);
    ASSERT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("iteration time"), std::string::npos);
    EXPECT_NE(text.out.find("MFU"), std::string::npos);
    EXPECT_NE(text.out.find("pipeline bubble"), std::string::npos);
    const auto csv = run_trainsim("run " + k22b + " --format csv");
    ASSERT_EQ(csv.status, 0) << csv.err;
    EXPECT_EQ(lines(csv.out), 2u);
    EXPECT_EQ(csv.out.rfind("name,profile,schedule,num_gpus,", 0), 0u);
}

TEST(Cli, LayerJsonHasTheContractKeys) {
    const auto r =
        run_trainsim("layer " + k22b + " --format json --set training.recompute_granularity=selective");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    for (const char* key : {"forward_s", "backward_s", "recompute_s", "activation_bytes", "ops"}) {
        EXPECT_TRUE(j.contains(key)) << key;
    }
    EXPECT_GT(j["recompute_s"].get<double>(), 0.0);
    const auto& op = j["ops"][0];
    for (const char* key : {"name", "stream", "start_s", "duration_s"}) {
        EXPECT_TRUE(op.contains(key)) << key;
    }
}

struct BadInput {
    std::string args;
    std::string message;  // a substring the one-line error must contain
};

class CliErrors : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliErrors, OneLineNamingTheKeyAndRuleWithStatus2) {
    const auto r = run_trainsim(GetParam().args);
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Catalogue, CliErrors,
    ::testing::Values(
        BadInput{"run /nonexistent/scenario.json", "/nonexistent/scenario.json"},
        BadInput{"run " + k22b + " --set parallelism.tensor_model_parallel_size=6",
                 "parallelism.tensor_model_parallel_size=6 must divide model.num_attention_heads=64"},
        BadInput{"run " + k22b + " --set paralelism.data_parallel_size=2", "did you mean parallelism"},
        BadInput{"run " + k22b + " --set training.micro_batch_size=0", "training.micro_batch_size"},
        BadInput{"run " + k22b + " --set training.micro_batch_size", "training.micro_batch_size"},
        BadInput{"run " + k22b + " --format yaml", "--format=yaml must be one of text, json, csv"},
        BadInput{"run " + k22b + " --fold pp", "--fold=pp must be 'none' or a comma list of tp, dp"},
        BadInput{"run " + k22b + " --set hardware.profile=nonexistent", "hardware.profile"},
        BadInput{"run " + k22b + " --set hardware.gpus_per_node=16", "hardware.gpus_per_node=16 exceeds"},
        BadInput{"layer " + k22b + " --set training.recompute_granularity=overlapped",
                 "a single layer has no pipeline to overlap with"},
        BadInput{"run " + k22b + " --trace /nonexistent-dir/trace.json",
                 "--trace=/nonexistent-dir/trace.json"},
        BadInput{"run " + k22b + " --no-such-option", "no-such-option"},
        // Mixture of experts: what moe_layer.h does not model is refused, not priced as something else.
        BadInput{"run " + k22b +
                     " --set model.num_experts=8 --set model.add_bias_linear=false"
                     " --set parallelism.expert_tensor_parallel_size=16",
                 "parallelism.expert_tensor_parallel_size=16 × parallelism.expert_model_parallel_size=1 = 16 "
                 "must divide tensor × context × data parallel = 8"},
        BadInput{"layer " + k22b +
                     " --set model.num_experts=8 --set model.moe_token_dispatcher_type=alltoall",
                 "model.add_bias_linear: experts with biases is not simulated yet"},
        BadInput{"run " + k22b + " --set parallelism.expert_model_parallel_size=2",
                 "parallelism.expert_model_parallel_size=2 requires a mixture-of-experts model"},
        // Multi-token prediction is not simulated under context parallelism; MLA neither.
        BadInput{"run " + k22b +
                     " --set model.mtp_num_layers=1 --set parallelism.context_parallel_size=2"
                     " --set training.attention_backend=flash",
                 "parallelism.context_parallel_size: context parallelism (roll_tensor's exchange) is not "
                 "simulated yet with model.mtp_num_layers > 0"},
        BadInput{"layer " + testing::source_path("scenarios/moe/deepseek-v3-2048gpu.json") +
                     " --set parallelism.context_parallel_size=2 --set parallelism.data_parallel_size=64",
                 "parallelism.context_parallel_size: context parallelism with multi-latent attention is not "
                 "simulated yet"},
        BadInput{"plan --gpus 64 --scenario " +
                     testing::source_path("scenarios/moe/mixtral-8x7b-64gpu.json") +
                     " --max-expert-parallel 0",
                 "--max-expert-parallel=0 must be ≥ 1"},
        BadInput{"plan --model gpt-22b --gpus 8 --global-batch 8 --max-expert-parallel 2",
                 "--max-expert-parallel applies only to a mixture-of-experts model (model.num_experts)"},
        BadInput{
            "plan --model gpt-22b --gpus 8 --global-batch 8 --max-expert-tensor-parallel 2",
            "--max-expert-tensor-parallel applies only to a mixture-of-experts model (model.num_experts)"},
        BadInput{"run", "missing SCENARIO"}, BadInput{"frobnicate", "unknown command 'frobnicate'"}));

TEST(Cli, TraceIsPerfettoJsonWithOneProcessPerGpu) {
    const std::string path = "/tmp/trainsim_cli_trace_" + std::to_string(::getpid()) + ".json";
    // One layer per virtual stage and 8 micro-batches: still 8 stages and thousands of slices, a sixth of
    // the events (the JSON trace dominates this test's time under the sanitizers).
    const auto r =
        run_trainsim("run " + testing::source_path("scenarios/korthikanti-175b.json") +
                     " --set model.num_layers=24 --set training.global_batch_size=8 --trace " + path);
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = testing::read_json_file(path);
    // The trace-event format: complete events need name, ts, dur, pid, tid; metadata events name a
    // process or thread; counter events carry numeric args.
    std::set<int> pids;
    std::set<int> counter_pids;
    std::size_t slices = 0;
    ASSERT_TRUE(j["traceEvents"].is_array());
    for (const auto& e : j["traceEvents"]) {
        const std::string ph = e.at("ph").get<std::string>();
        ASSERT_TRUE(ph == "X" || ph == "M" || ph == "C") << e.dump();
        EXPECT_TRUE(e.at("name").is_string());
        EXPECT_TRUE(e.at("pid").is_number_integer());
        if (ph == "X") {
            ++slices;
            pids.insert(e["pid"].get<int>());
            EXPECT_TRUE(e.at("tid").is_number_integer());
            EXPECT_GE(e.at("ts").get<double>(), 0.0);
            EXPECT_GE(e.at("dur").get<double>(), 0.0);
            EXPECT_TRUE(e.at("args").contains("phase"));
        } else if (ph == "M") {
            EXPECT_TRUE(e.at("args").is_object());
        } else {
            counter_pids.insert(e["pid"].get<int>());
            EXPECT_TRUE(e.at("args").at("bytes").is_number_integer());
        }
    }
    EXPECT_EQ(pids.size(), 8u);  // PP 8, TP and DP folded
    EXPECT_EQ(counter_pids.size(), 8u);
    EXPECT_GT(slices, 1000u);
    std::filesystem::remove(path);
}

TEST(Cli, FailedRunLeavesNoTraceFile) {
    const std::string path = "/tmp/trainsim_cli_trace_fail_" + std::to_string(::getpid()) + ".json";
    const auto r =
        run_trainsim("run " + k22b + " --set parallelism.tensor_model_parallel_size=6 --trace " + path);
    EXPECT_EQ(r.status, 2);
    EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace trainsim
