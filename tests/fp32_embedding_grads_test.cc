// training.fp32_embedding_grads (sim/workload/fp32_embedding_gradients.h): NeMo's fp32 embedding
// gradients under Apex DistributedFusedAdam with bf16 main grads. Hand-counted parameters, static bytes,
// the gradient collectives' bytes, the Adam step's and the memset's bytes, and the embedding's main_grad
// add priced at 1 ns a byte; with the key off, or with fp32 main grads, nothing changes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/memory/static_memory.h"
#include "sim/program/iteration_program.h"
#include "sim/workload/fp32_embedding_gradients.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_ops.h"
#include "tests/support/one_byte_per_ns.h"
#include "tests/support/op_named.h"
#include "tests/support/priced_ops.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using testing::op_named;

// V 1024 over t 2 (a 512 × 64 shard: 32768 parameters), learned positions s 128 × h 64 (8192, on every
// TP rank), p 2 (the last stage holds the tied copy), d 2 with the distributed optimizer, bf16 main grads.
constexpr std::int64_t kWord = 32768;
constexpr std::int64_t kPosition = 8192;

config::Scenario small_model(const std::string& training_extra, const std::string& model_extra = "",
                             int pipeline = 2, const std::string& main_grads = "bf16") {
    return config::parse_scenario(
        R"({"model": {"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "seq_length": 128,
                      "padded_vocab_size": 1024)" +
            model_extra + R"(},
            "parallelism": {"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": )" +
            std::to_string(pipeline) + R"(, "data_parallel_size": 2},
            "training": {"micro_batch_size": 2, "global_batch_size": 8, "use_distributed_optimizer": true,
                         "main_grads_dtype": ")" +
            main_grads + "\"" + training_extra + R"(},
            "hardware": {"profile": "a100-80gb-selene"}})",
        "test");
}

const std::string kOn = R"(, "fp32_embedding_grads": true)";

TEST(Fp32EmbeddingGrads, TheEmbeddingTablesByStage) {
    const config::Scenario on = small_model(kOn);
    // First stage: word and position tables; last: the tied word embedding's copy.
    EXPECT_EQ(workload::fp32_gradient_parameters(on, 0), kWord + kPosition);
    EXPECT_EQ(workload::fp32_gradient_parameters(on, 1), kWord);
    // Untied, the output layer keeps bf16 gradients (NeMo marks it only with shared embeddings).
    const config::Scenario untied = small_model(kOn, R"(, "untie_embeddings_and_output_weights": true)");
    EXPECT_EQ(workload::fp32_gradient_parameters(untied, 0), kWord + kPosition);
    EXPECT_EQ(workload::fp32_gradient_parameters(untied, 1), 0);
    // RoPE has no position table.
    const config::Scenario rope = small_model(kOn, R"(, "position_embedding_type": "rope")");
    EXPECT_EQ(workload::fp32_gradient_parameters(rope, 0), kWord);
    // One stage: the tied table is one parameter, counted once.
    EXPECT_EQ(workload::fp32_gradient_parameters(small_model(kOn, "", 1), 0), kWord + kPosition);
    // Off, or with fp32 main grads already: none.
    EXPECT_EQ(workload::fp32_gradient_parameters(small_model(""), 0), 0);
    const config::Scenario fp32_main = small_model(kOn, "", 2, "fp32");
    EXPECT_EQ(workload::fp32_gradient_parameters(fp32_main, 0), 0);
    EXPECT_EQ(workload::embedding_gradient_bytes(fp32_main), 4);
    EXPECT_EQ(workload::embedding_gradient_bytes(on), 4);
    EXPECT_EQ(workload::embedding_gradient_bytes(small_model("")), 2);
}

TEST(Fp32EmbeddingGrads, StaticBytesHoldTheTablesGradientsInFp32) {
    const config::Scenario off = small_model("");
    const config::Scenario on = small_model(kOn);
    // 4 − 2 more bytes a table parameter, unsharded (Apex's gradient buffer is whole on every rank).
    EXPECT_EQ(memory::static_bytes(on, 0).value - memory::static_bytes(off, 0).value,
              2 * (kWord + kPosition));
    EXPECT_EQ(memory::static_bytes(on, 0).value - memory::static_bytes(off, 0).value, 81920);
    EXPECT_EQ(memory::static_bytes(on, 1).value - memory::static_bytes(off, 1).value, 65536);
    const std::string untied = R"(, "untie_embeddings_and_output_weights": true)";
    EXPECT_EQ(memory::static_bytes(small_model(kOn, untied), 1).value,
              memory::static_bytes(small_model("", untied), 1).value);
}

std::vector<std::int64_t> collective_bytes_of(const workload::OpList& ops, const std::string& name) {
    std::vector<std::int64_t> out;
    for (const workload::Op& op : ops) {
        if (op.name == name) {
            out.push_back(op.collective_bytes.value);
        }
    }
    return out;
}

TEST(Fp32EmbeddingGrads, TheEndOfTheIterationMovesTheTablesGradientsInFp32) {
    // 100000 parameters on a first stage of two, 40960 of them the tables, the word table tied to the last
    // stage's copy; d 2; no overlapped reduction.
    constexpr std::int64_t kParams = 100000;
    const workload::OpList off = workload::end_of_iteration(small_model(""), kParams, kWord);
    const workload::OpList on =
        workload::end_of_iteration(small_model(kOn), kParams, kWord,
                                   /*gradients_reduced=*/false, 0, 0, 0, kWord + kPosition);
    // Off: one reduce-scatter of 2 bytes a gradient. On: the tables' bucket of its own, 4 bytes a gradient.
    EXPECT_EQ(collective_bytes_of(off, "dp.grad_reducescatter"), std::vector<std::int64_t>{200000});
    EXPECT_EQ(collective_bytes_of(on, "dp.grad_reducescatter"), (std::vector<std::int64_t>{118080, 163840}));
    // The tied embedding's all-reduce between first and last stage moves NeMo's fp32 main_grad.
    EXPECT_EQ(op_named(off, "embedding.grad_allreduce").collective_bytes.value, kWord * 2);
    EXPECT_EQ(op_named(on, "embedding.grad_allreduce").collective_bytes.value, kWord * 4);
    // Adam over the 50000-parameter shard: 2·2 (gradient and norm) + 2·12 + 2 = 30 bytes each; the tables'
    // 20480 of them read their gradient twice at 4 bytes: 2 × 20480 × 2 more.
    EXPECT_EQ(op_named(off, "optimizer.adam").bytes_moved.value, 50000 * 30);
    EXPECT_EQ(op_named(on, "optimizer.adam").bytes_moved.value, 50000 * 30 + 81920);
    // DualPipe's sum of the two model copies' gradients over the rank's shard: 50000 × 2 bytes, the
    // tables' 20480 at 4 (the op list alone; NeMo has no DualPipe).
    config::Scenario dualpipe = small_model(kOn);
    dualpipe.schedule = config::ScheduleKind::DualPipe;
    EXPECT_EQ(op_named(workload::end_of_iteration(dualpipe, kParams, 0, false, 0, 0, 0, kWord + kPosition),
                       "dualpipe.copy_grad_allreduce")
                  .collective_bytes.value,
              50000 * 2 + 20480 * 2);
    // With the reduction already overlapped, only the all-reduce and the step differ.
    const workload::OpList reduced =
        workload::end_of_iteration(small_model(kOn), kParams, kWord, true, 0, 0, 0, kWord + kPosition);
    EXPECT_TRUE(collective_bytes_of(reduced, "dp.grad_reducescatter").empty());
}

TEST(Fp32EmbeddingGrads, BucketAndMemsetBytes) {
    const config::Scenario on = small_model(kOn);
    EXPECT_EQ(op_named(workload::gradient_bucket_reduction(on, kWord + kPosition, kWord + kPosition),
                       "dp.grad_reducescatter")
                  .collective_bytes.value,
              163840);
    EXPECT_EQ(op_named(workload::gradient_bucket_reduction(on, 1000), "dp.grad_reducescatter")
                  .collective_bytes.value,
              2000);
    EXPECT_EQ(op_named(workload::gradient_buffer_zeroing(on, 100000, kWord + kPosition),
                       "optimizer.zero_grad_buffer")
                  .bytes_moved.value,
              200000 + 81920);
}

TEST(Fp32EmbeddingGrads, TheMainGradAddReadsAndWritesFp32) {
    // Read the 16-bit gradient, read and write the fp32 main_grad: 2 + 2·4 bytes a parameter, not 2 + 2·2.
    const workload::OpList on = workload::embedding_backward(workload::layer_shape_of(small_model(kOn)));
    EXPECT_EQ(op_named(on, "embedding.main_grad_add").bytes_moved.value, 327680);
    EXPECT_EQ(op_named(on, "embedding.position.main_grad_add").bytes_moved.value, 81920);
    const workload::OpList off = workload::embedding_backward(workload::layer_shape_of(small_model("")));
    EXPECT_EQ(op_named(off, "embedding.main_grad_add").bytes_moved.value, 196608);
    EXPECT_EQ(op_named(off, "embedding.position.main_grad_add").bytes_moved.value, 49152);
}

// The simulated iteration with overlapped reduction: on the first stage the add takes 2 µs + 327680 ns
// each micro-batch, and the tables' bucket is reduce-scattered alone in fp32 (163840 bytes); on the last
// stage the tied copy's (131072 bytes). The other buckets move 2 bytes a gradient.
TEST(Fp32EmbeddingGrads, TheSimulatedIterationPricesTheAddAndReducesTheTablesInFp32) {
    const cost::CostModel cost = testing::one_byte_per_ns();
    const config::Scenario sc = small_model(kOn + R"(, "overlap_grad_reduce": true)");
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    std::vector<std::vector<std::int64_t>> reduce_scatters(2);
    int adds = 0;
    testing::for_each_priced_op(prog, [&](std::int64_t stage, const workload::Op& op, SimTime d) {
        if (op.name == "embedding.main_grad_add") {
            EXPECT_EQ(d, SimTime{2000 + 327680});
            ++adds;
        } else if (op.name == "dp.grad_reducescatter") {
            reduce_scatters[static_cast<std::size_t>(stage)].push_back(op.collective_bytes.value);
        }
    });
    EXPECT_EQ(adds, 2);  // m = 2 micro-batches on the simulated GPU of stage 0
    const workload::StageParameters first = workload::stage_parameters(sc, 0);
    const workload::StageParameters last = workload::stage_parameters(sc, 1);
    EXPECT_EQ(reduce_scatters[0],
              (std::vector<std::int64_t>{163840, (first.total() - kWord - kPosition) * 2}));
    EXPECT_EQ(reduce_scatters[1], (std::vector<std::int64_t>{131072, (last.total() - kWord) * 2}));
}

// Off it is today's iteration; with fp32 main grads the key changes nothing (documented as a no-op);
// with bf16 main grads the iteration is slower.
TEST(Fp32EmbeddingGrads, OffOrWithFp32MainGradsTheIterationIsUnchanged) {
    const std::string overlap = R"(, "overlap_grad_reduce": true, "zero_grad_buffer": true)";
    const cost::CostModel cost = testing::shipped_cost_model();
    const auto run = [&](const std::string& extra, const std::string& main_grads = "bf16") {
        return experiment::simulate_scenario(small_model(overlap + extra, "", 2, main_grads), cost).report;
    };
    EXPECT_EQ(run(kOn, "fp32").fingerprint, run("", "fp32").fingerprint);
    EXPECT_EQ(run(R"(, "fp32_embedding_grads": false)").fingerprint, run("").fingerprint);
    EXPECT_GT(run(kOn).iteration_time.value, run("").iteration_time.value);
}

}  // namespace
}  // namespace trainsim
