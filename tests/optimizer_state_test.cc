// The optimizer's state formats (training.main_grads_dtype, exp_avg_dtype, exp_avg_sq_dtype, store_params,
// store_param_remainders; workload/optimizer_state.h): static bytes by hand on a small model, the
// gradient format in the data-parallel reduction's bytes, the Adam step's bytes, the refusals, and the
// NeMo 24.07 H100 rows that ran on 80 GB GPUs fitting as NeMo's launcher configs set them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "sim/config/scenario.h"
#include "sim/memory/static_memory.h"
#include "sim/workload/optimizer_state.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_ops.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

// One GPT layer, h 64, a 4, s 32, V 128, d 4 with the distributed optimizer, BF16 (no FP8 copies).
config::Scenario tiny(const std::string& training_extra = "", bool distributed = true) {
    return config::parse_scenario(
        R"({"model": {"num_layers": 1, "hidden_size": 64, "num_attention_heads": 4, "seq_length": 32,
                      "padded_vocab_size": 128},
            "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1,
                            "data_parallel_size": 4},
            "training": {"micro_batch_size": 1, "global_batch_size": 4, "use_distributed_optimizer": )" +
            std::string(distributed ? "true" : "false") + training_extra + R"(},
            "hardware": {"profile": "a100-80gb-selene"}})",
        "tiny");
}

// Megatron's GPT parameter count by hand: a layer 12h² + 13h (QKV, projection, two MLP GEMMs at 4h with
// biases, two LayerNorms), word embedding V·h, learned positions s·h, final LayerNorm 2h.
constexpr std::int64_t kHidden = 64;
constexpr std::int64_t kParameters =
    (12 * kHidden * kHidden + 13 * kHidden) + 128 * kHidden + 32 * kHidden + 2 * kHidden;  // 60352

TEST(OptimizerState, TheSmallModelHasTheParametersCountedByHand) {
    EXPECT_EQ(kParameters, 60352);
    EXPECT_EQ(workload::stage_parameters(tiny(), 0).total(), kParameters);
}

TEST(OptimizerState, StaticBytesFollowEachFormatByHand) {
    // Default, Megatron's: 2 (bf16 weight) + 4 (fp32 main_grad) + (4 + 4 + 4)/4 = 9 bytes a parameter.
    EXPECT_EQ(memory::static_bytes(tiny(), 0).value, kParameters * 9);
    // NeMo 24.07's gpt3/llama rows: bf16 gradients, fp32 moments, 16-bit remainders for the master:
    // 2 + 2 + (2 + 4 + 4)/4 = 6.5.
    const std::string nemo =
        R"(, "main_grads_dtype": "bf16", "store_params": false, "store_param_remainders": true)";
    EXPECT_EQ(memory::static_bytes(tiny(nemo), 0).value, kParameters * 13 / 2);
    // Nemotron-340B's (optim.dtype bf16): bf16 moments, the bf16 weights are the master: 2 + 2 + 4/4 = 5.
    const std::string bf16_state =
        R"(, "main_grads_dtype": "bf16", "exp_avg_dtype": "bf16", "exp_avg_sq_dtype": "bf16",
             "store_params": false)";
    EXPECT_EQ(memory::static_bytes(tiny(bf16_state), 0).value, kParameters * 5);
    // FP8 moments with the fp32 master kept: 2 + 4 + (4 + 1 + 1)/4 = 7.5.
    const std::string fp8_moments = R"(, "exp_avg_dtype": "fp8", "exp_avg_sq_dtype": "fp8")";
    EXPECT_EQ(memory::static_bytes(tiny(fp8_moments), 0).value, kParameters * 15 / 2);
    // Without the distributed optimizer nothing is sharded: 2 + 2 + 2 + 4 + 4 = 14.
    EXPECT_EQ(memory::static_bytes(tiny(nemo, /*distributed=*/false), 0).value, kParameters * 14);
}

TEST(OptimizerState, OptimGradsShardsTheBf16GradientsToo) {
    // optim_grads: 2 + (2 + 2 + 4 + 4)/4 = 5 bytes a parameter.
    config::Scenario sc = tiny(R"(, "main_grads_dtype": "bf16", "store_params": false,
                                  "store_param_remainders": true)");
    sc.parallelism.data_parallel_sharding_strategy = config::DataParallelSharding::OptimGrads;
    EXPECT_DOUBLE_EQ(memory::bytes_per_parameter(sc), 5.0);
}

const workload::Op& find(const workload::OpList& ops, const std::string& name) {
    for (const workload::Op& op : ops) {
        if (op.name == name) {
            return op;
        }
    }
    ADD_FAILURE() << "no op " << name;
    static const workload::Op none;
    return none;
}

TEST(OptimizerState, TheDataParallelReductionMovesTheGradientFormat) {
    const config::Scenario fp32 = tiny();
    const config::Scenario bf16 = tiny(R"(, "main_grads_dtype": "bf16")");
    EXPECT_EQ(workload::gradient_bytes(fp32), 4);
    EXPECT_EQ(workload::gradient_bytes(bf16), 2);
    // The blocking reduce-scatter at the end of the step, and one overlapped bucket's.
    EXPECT_EQ(find(workload::end_of_iteration(fp32, kParameters, 0), "dp.grad_reducescatter")
                  .collective_bytes.value,
              kParameters * 4);
    EXPECT_EQ(find(workload::end_of_iteration(bf16, kParameters, 0), "dp.grad_reducescatter")
                  .collective_bytes.value,
              kParameters * 2);
    EXPECT_EQ(
        find(workload::gradient_bucket_reduction(bf16, 1000), "dp.grad_reducescatter").collective_bytes.value,
        2000);
    // Without the distributed optimizer, the all-reduce; the tied embedding's all-reduce too.
    const config::Scenario replicated = tiny(R"(, "main_grads_dtype": "bf16")", /*distributed=*/false);
    const workload::OpList end = workload::end_of_iteration(replicated, kParameters, 128 * kHidden);
    EXPECT_EQ(find(end, "dp.grad_allreduce").collective_bytes.value, kParameters * 2);
    EXPECT_EQ(find(end, "embedding.grad_allreduce").collective_bytes.value, 128 * kHidden * 2);
    // The gradient buffer's memset writes the buffer's format.
    EXPECT_EQ(
        find(workload::gradient_buffer_zeroing(bf16, 1000), "optimizer.zero_grad_buffer").bytes_moved.value,
        2000);
}

TEST(OptimizerState, TheAdamStepMovesEachFormatsBytes) {
    // Default: gradient 4 + norm 4, master and moments read and written 2 × 12, bf16 weight written 2.
    EXPECT_EQ(workload::adam_step_bytes_per_parameter(tiny()), 34);
    // Remainders: 2 + 2, 2 × (2 + 8), weight written 2 and read as the master's high half 2.
    EXPECT_EQ(
        workload::adam_step_bytes_per_parameter(tiny(R"(, "main_grads_dtype": "bf16", "store_params": false,
                                                              "store_param_remainders": true)")),
        28);
    // bf16 moments and no master: 2 + 2, 2 × 4, weight read and written 2 + 2.
    EXPECT_EQ(workload::adam_step_bytes_per_parameter(
                  tiny(R"(, "main_grads_dtype": "bf16", "exp_avg_dtype": "bf16", "exp_avg_sq_dtype": "bf16",
                          "store_params": false)")),
              16);
    // The step's op moves them over the GPU's shard, P/4.
    const config::Scenario nemo = tiny(R"(, "main_grads_dtype": "bf16", "store_params": false,
                                          "store_param_remainders": true)");
    EXPECT_EQ(find(workload::end_of_iteration(nemo, kParameters, 0), "optimizer.adam").bytes_moved.value,
              kParameters / 4 * 28);
}

testing::CommandResult run_tiny_with(const std::string& sets) {
    return testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-22b.json") + " " +
                                 sets);
}

void expect_refused(const std::string& sets, const std::string& message) {
    const testing::CommandResult r = run_tiny_with(sets);
    EXPECT_EQ(r.status, 2) << sets;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
}

TEST(OptimizerState, BadSettingsAreRefusedNamingTheKey) {
    expect_refused("--set training.main_grads_dtype=fp16", "training.main_grads_dtype");
    expect_refused("--set training.exp_avg_dtype=int8", "training.exp_avg_dtype");
    expect_refused("--set training.exp_avg_sq_dtype=true", "training.exp_avg_sq_dtype");
    expect_refused("--set training.store_params=1", "training.store_params");
    expect_refused("--set training.store_param_remainders=true",
                   "training.store_param_remainders=true requires training.store_params=false");
    expect_refused("--set training.store_params=false --set training.optimizer_param_copy=true",
                   "training.optimizer_param_copy=true requires training.store_params=true");
    expect_refused("--set training.use_distributed_optimizer=true --set "
                   "parallelism.data_parallel_sharding_strategy=optim_grads_params --set "
                   "training.main_grads_dtype=bf16",
                   "training.main_grads_dtype=\"bf16\" is not modelled with "
                   "parallelism.data_parallel_sharding_strategy=\"optim_grads_params\"");
    // NeMo's fp32 embedding gradients (workload/fp32_embedding_gradients.h): a boolean, and only where
    // Apex's DistributedFusedAdam could run them.
    expect_refused("--set training.fp32_embedding_grads=1",
                   "training.fp32_embedding_grads: expected a JSON boolean");
    expect_refused("--set training.fp32_embedding_grads=true",
                   "training.fp32_embedding_grads=true requires training.use_distributed_optimizer=true");
    expect_refused(
        "--set training.use_distributed_optimizer=true --set "
        "parallelism.data_parallel_sharding_strategy=optim_grads --set training.fp32_embedding_grads=true",
        "training.fp32_embedding_grads=true is not modelled with "
        "parallelism.data_parallel_sharding_strategy=\"optim_grads\"");
    expect_refused("--set training.use_distributed_optimizer=true --set model.mtp_num_layers=1 --set "
                   "training.fp32_embedding_grads=true",
                   "training.fp32_embedding_grads=true is not modelled with model.mtp_num_layers > 0");
}

// The three NeMo 24.07 DGX-H100 FP8 rows that trainsim called "does not fit" with Megatron's 2 + 4 + 12/d
// bytes a parameter fit with the optimizer state NeMo's launcher configs ask Apex for
// (scenarios/README.md, "nemo/").
TEST(OptimizerState, TheNemoRowsThatRanOnEightyGigabyteGpusFit) {
    for (const char* row : {"gpt3-20b-64gpu-fp8", "llama3-8b-8gpu-fp8", "nemotron4-340b-128gpu-fp8"}) {
        const testing::CommandResult r = testing::run_trainsim(
            "run " + testing::source_path(std::string("scenarios/nemo/") + row + ".json") + " --format json");
        ASSERT_EQ(r.status, 0) << r.err;
        const nlohmann::json j = nlohmann::json::parse(r.out);
        EXPECT_TRUE(j["fits_in_memory"].get<bool>()) << row << ": " << j["peak_memory_bytes"];
    }
}

}  // namespace
}  // namespace trainsim
