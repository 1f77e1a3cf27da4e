// The embedding's dense weight gradient (sim/workload/stage_ops.cc): F.embedding's backward zero-fills a
// 16-bit gradient of the whole table and the gradient hook adds it into main_grad, every micro-batch, on
// the stage that runs the input embedding's backward. Hand-counted bytes and hand-priced nanoseconds on
// a small model.
#include <gtest/gtest.h>

#include <cstddef>
#include <sstream>
#include <string>

#include "sim/config/scenario.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/program/iteration_program.h"
#include "sim/report/iteration_report.h"
#include "sim/report/report_json.h"
#include "sim/report/report_text.h"
#include "sim/report/stage_compute_ops.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_ops.h"
#include "tests/support/one_byte_per_ns.h"
#include "tests/support/op_named.h"
#include "tests/support/priced_ops.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using testing::op_named;

// V 1024 over t = 2 (a 512 × 64 shard: 32768 parameters), learned positions of s 128 (128 × 64 = 8192
// parameters, on every TP rank), b 2 (256 token rows of h 64 = 16384 elements), p 2, m 2.
config::Scenario small_model(const std::string& main_grads_dtype) {
    return config::parse_scenario(
        R"({"model": {"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "seq_length": 128,
                      "padded_vocab_size": 1024},
            "parallelism": {"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 2},
            "training": {"micro_batch_size": 2, "global_batch_size": 4, "main_grads_dtype": ")" +
            main_grads_dtype + R"("},
            "hardware": {"profile": "a100-80gb-selene"}})",
        "test");
}

TEST(EmbeddingWgrad, BytesByHandFp32AndBf16MainGrad) {
    for (const auto& [dtype, g] : {std::pair<std::string, std::int64_t>{"fp32", 4}, {"bf16", 2}}) {
        const workload::OpList ops =
            workload::embedding_backward(workload::layer_shape_of(small_model(dtype)));
        // Zero-fill the 16-bit gradient: 2 bytes a parameter.
        EXPECT_EQ(op_named(ops, "embedding.wgrad_memset").bytes_moved.value, 32768 * 2) << dtype;
        EXPECT_EQ(op_named(ops, "embedding.position.wgrad_memset").bytes_moved.value, 8192 * 2) << dtype;
        // Scatter-add of the 256 rows: read and write 2 bytes an element.
        EXPECT_EQ(op_named(ops, "embedding.grad_accumulate").bytes_moved.value, 2 * 16384 * 2) << dtype;
        EXPECT_EQ(op_named(ops, "embedding.position.grad_accumulate").bytes_moved.value, 2 * 16384 * 2);
        // main_grad.add_(grad): read the 16-bit gradient, read and write main_grad (G bytes each).
        EXPECT_EQ(op_named(ops, "embedding.main_grad_add").bytes_moved.value, 32768 * (2 + 2 * g)) << dtype;
        EXPECT_EQ(op_named(ops, "embedding.position.main_grad_add").bytes_moved.value, 8192 * (2 + 2 * g));
        EXPECT_EQ(op_named(ops, "embedding.main_grad_add").memory_kind, cost::MemoryBoundKind::Generic);
        EXPECT_EQ(op_named(ops, "embedding.main_grad_add").stream, workload::OpStream::Compute);
    }
    // The fp32 numbers written out: 327680 and 81920 bytes; bf16: 196608 and 49152.
    const workload::OpList fp32 = workload::embedding_backward(workload::layer_shape_of(small_model("fp32")));
    EXPECT_EQ(op_named(fp32, "embedding.main_grad_add").bytes_moved.value, 327680);
    const workload::OpList bf16 = workload::embedding_backward(workload::layer_shape_of(small_model("bf16")));
    EXPECT_EQ(op_named(bf16, "embedding.main_grad_add").bytes_moved.value, 196608);
}

// RoPE has no position table: only the word embedding's passes.
TEST(EmbeddingWgrad, RopeHasNoPositionTable) {
    config::Scenario sc = small_model("fp32");
    sc.model.position_embedding_type = config::PositionEmbeddingType::Rope;
    const workload::OpList ops = workload::embedding_backward(workload::layer_shape_of(sc));
    EXPECT_EQ(op_named(ops, "embedding.main_grad_add").bytes_moved.value, 327680);
    for (const workload::Op& op : ops) {
        EXPECT_EQ(op.name.find("position"), std::string::npos) << op.name;
    }
}

// In the simulated iteration the passes run on stage 0 only (the last stage's tied copy gets its
// gradient from the output layer's fused wgrad GEMM, which writes main_grad itself), once per
// micro-batch, each at its price by hand; the breakdown's line is their sum over the two stages' mean.
TEST(EmbeddingWgrad, PricedOnTheFirstStageOnlyEveryMicrobatch) {
    const cost::CostModel cost = testing::one_byte_per_ns();
    const config::Scenario sc = small_model("fp32");
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    const engine::RunResult run = program::simulate(prog);
    const report::IterationReport r = report::make_iteration_report(sc, cost, prog, run);
    int memsets = 0, adds = 0;
    testing::for_each_priced_op(prog, [&](std::int64_t stage, const workload::Op& op, SimTime d) {
        if (op.name == "embedding.wgrad_memset") {
            EXPECT_EQ(stage, 0);
            EXPECT_EQ(d, SimTime{2000 + 65536});
            ++memsets;
        } else if (op.name == "embedding.main_grad_add") {
            EXPECT_EQ(stage, 0);
            EXPECT_EQ(d, SimTime{2000 + 327680});
            ++adds;
        } else if (op.name == "embedding.position.main_grad_add") {
            EXPECT_EQ(stage, 0);
            EXPECT_EQ(d, SimTime{2000 + 81920});
        }
    });
    EXPECT_EQ(memsets, 2);  // m = 2 micro-batches, on the one simulated GPU of stage 0 (TP peers folded)
    EXPECT_EQ(adds, 2);
    // Per micro-batch 65536 + 327680 + 16384 + 81920 bytes and four launches; 2 micro-batches over 2 stages.
    const double per_microbatch_ns = 65536 + 327680 + 16384 + 81920 + 4 * 2000;
    EXPECT_NEAR(r.embedding_wgrad.value, 2 * per_microbatch_ns / 2 * 1e-9, 1e-15);
    EXPECT_DOUBLE_EQ(report::to_json(r)["embedding_wgrad_s"].get<double>(), r.embedding_wgrad.value);
    std::ostringstream text;
    report::write_text(text, r);
    EXPECT_NE(text.str().find("the embedding's dense weight gradient 0.500 ms"), std::string::npos)
        << text.str();
}

// The 16-bit gradient is memory while the embedding's backward runs: from its memset until the hook's
// add (the backward's last op). A table much larger than the activations (V 65536 × h 512 in 16 bits is
// 64 MiB; the forward keeps under 20 MB, 16 MiB of it the fp32 softmax), one micro-batch: the peak of the
// stage that runs the embedding's backward is the word gradient, the position table's (s 64 × h 512 × 2)
// and the embedding's dropout mask (s·b·h bytes), all held at the end of that backward; the layers' and
// the output layer's tensors are freed by then, on one stage too (the embedding is a memory key of its
// own, task_info.h's kEmbeddingLayer). The last stage of two holds no such gradient.
TEST(EmbeddingWgrad, DenseGradientIsMemoryDuringTheEmbeddingsBackward) {
    const std::int64_t peak = 65536LL * 512 * 2 + 64LL * 512 * 2 + 64LL * 512 * 1;
    for (const char* p : {"1", "2"}) {
        const config::Scenario sc = config::parse_scenario(
            std::string(R"({"model": {"num_layers": 2, "hidden_size": 512, "num_attention_heads": 8,
                                      "seq_length": 64, "padded_vocab_size": 65536},
                            "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": )") +
                p + R"(},
                "training": {"micro_batch_size": 1, "global_batch_size": 1},
                "hardware": {"profile": "a100-80gb-selene"}})",
            "test");
        const experiment::Simulation sim = experiment::simulate_scenario(sc, testing::shipped_cost_model());
        EXPECT_EQ(sim.report.stages.front().activation_bytes.value, peak) << "p " << p;
        if (sim.report.stages.size() == 2) {
            EXPECT_LT(sim.report.stages.back().activation_bytes.value, 20'000'000);
        }
    }
}

}  // namespace
}  // namespace trainsim
