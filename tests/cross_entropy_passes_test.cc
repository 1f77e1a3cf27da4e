// The vocab-parallel cross-entropy's passes over the fp32 logits (training.cross_entropy_loss_fusion,
// sim/workload/cross_entropy_passes.h): bytes per logit element as Megatron-Core's eager and compiled
// versions run them, the ops the output layer emits, and their exact cost in an iteration.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "sim/cost/hardware_profile.h"
#include "sim/program/iteration_program.h"
#include "sim/workload/cross_entropy_passes.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_ops.h"
#include "tests/support/op_named.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using testing::op_named;

using workload::cross_entropy_bytes_per_logit;

// Hand counts from Megatron-Core 0.8's code, one line a kernel (cross_entropy_passes.h).
TEST(CrossEntropyPasses, BytesPerLogitAsMegatronCoreRunsThem) {
    // Eager: .float() 2 + 4, max 4, − max 4 + 4, exp 4 + 4, sum 4, ÷ sum 4 + 4; backward × grad 4 + 4,
    // back to bf16 4 + 2.
    EXPECT_EQ(cross_entropy_bytes_per_logit(false).forward, 6 + 4 + 8 + 8 + 4 + 8);
    EXPECT_EQ(cross_entropy_bytes_per_logit(false).backward, 8 + 6);
    // Compiled: max with the fp32 copy 2 + 4, − max/exp/sum 4 + 4, ÷ sum 4 + 4; backward 4 + 4 + 2.
    EXPECT_EQ(cross_entropy_bytes_per_logit(true).forward, 6 + 8 + 8);
    EXPECT_EQ(cross_entropy_bytes_per_logit(true).backward, 10);
    // Unset: the estimate trainsim had before the key (read 2, write and re-read 4; read 4, write 2).
    EXPECT_EQ(cross_entropy_bytes_per_logit(std::nullopt).forward, 10);
    EXPECT_EQ(cross_entropy_bytes_per_logit(std::nullopt).backward, 6);
}

int count_prefix(const workload::OpList& ops, const std::string& prefix) {
    return static_cast<int>(std::count_if(
        ops.begin(), ops.end(), [&](const workload::Op& op) { return op.name.starts_with(prefix); }));
}

// A small last stage: 4 tokens (s 4, b 1) and a vocabulary of 16 split over t = 2: 32 logits a rank.
workload::LayerShape small_shape(std::optional<bool> fused) {
    workload::LayerShape x;
    x.seq = 4;
    x.micro_batch = 1;
    x.hidden = 8;
    x.heads = 2;
    x.ffn = 32;
    x.vocab = 16;
    x.tp = 2;
    x.cross_entropy_loss_fusion = fused;
    return x;
}

// The passes run as the kernels of the path the key selects, each at its own measured speed (the
// profile's kind_factors): ATen's eager kernels or Inductor's compiled ones; unset, the earlier estimate is
// a streaming kernel's.
TEST(CrossEntropyPasses, LossRunsAsTheKernelsOfItsPath) {
    const std::pair<std::optional<bool>, cost::MemoryBoundKind> paths[] = {
        {std::nullopt, cost::MemoryBoundKind::Generic},
        {false, cost::MemoryBoundKind::CrossEntropy},
        {true, cost::MemoryBoundKind::CrossEntropyFused}};
    for (const auto& [fused, kind] : paths) {
        const workload::LayerShape x = small_shape(fused);
        EXPECT_EQ(op_named(workload::output_forward(x), "loss.cross_entropy").memory_kind, kind);
        EXPECT_EQ(op_named(workload::output_backward(x), "loss.cross_entropy.bwd").memory_kind, kind);
    }
}

// Validation against the published H100 SXM timings the H100 profile's factors were fitted to (S-LIGER-
// MCORE-CE: Megatron-Core's loss on 8192 tokens x V 131072 at TP 1, forward + backward): the cost model
// prices the passes' bytes within 10 % of each measured path.
TEST(CrossEntropyPasses, H100PricesBothPathsWithinTenPercentOfTheirMeasurements) {
    const cost::CostModel h100(
        cost::load_hardware_profile("h100-80gb-dgx", testing::source_path("scenarios/hardware")));
    const std::int64_t logits = 8192LL * 131072;
    const auto priced_ms = [&](bool fused, cost::MemoryBoundKind kind) {
        const workload::CrossEntropyBytes b = cross_entropy_bytes_per_logit(fused);
        return 1e3 * (h100.memory_bound(Bytes{logits * b.forward}, kind).value +
                      h100.memory_bound(Bytes{logits * b.backward}, kind).value);
    };
    EXPECT_NEAR(priced_ms(true, cost::MemoryBoundKind::CrossEntropyFused), 18.230, 0.10 * 18.230);
    EXPECT_NEAR(priced_ms(false, cost::MemoryBoundKind::CrossEntropy), 21.246, 0.10 * 21.246);
    // A streaming kernel at the same bytes would miss the compiled loss by a third.
    EXPECT_LT(priced_ms(true, cost::MemoryBoundKind::Generic), 0.75 * 18.230);
}

TEST(CrossEntropyPasses, OutputLayerMovesThoseBytesOverItsLogitShard) {
    for (const bool fused : {false, true}) {
        SCOPED_TRACE(fused ? "fused" : "eager");
        const workload::LayerShape x = small_shape(fused);
        const workload::OpList fwd = workload::output_forward(x);
        const workload::OpList bwd = workload::output_backward(x);
        EXPECT_EQ(op_named(fwd, "loss.cross_entropy").bytes_moved.value, 32 * (fused ? 22 : 38));
        EXPECT_EQ(op_named(bwd, "loss.cross_entropy.bwd").bytes_moved.value, 32 * (fused ? 10 : 14));
        // The fp32 softmax stays for the backward either way.
        EXPECT_EQ(op_named(fwd, "loss.cross_entropy").saved_bytes.value, 32 * 4);
        // TP all-reduces of per-token fp32 values: max, then the target logit and the sum of exponentials
        // (one batched all-reduce of both when fused).
        EXPECT_EQ(count_prefix(fwd, "loss.allreduce"), fused ? 2 : 3);
        if (fused) {
            EXPECT_EQ(op_named(fwd, "loss.allreduce_target_sum_exp").collective_bytes.value, 2 * 4 * 4);
        }
    }
}

// One GPU, two micro-batches, nothing beside the compute stream: the iteration grows by exactly the
// extra loss kernel time of each micro-batch (each op rounded to the nanosecond, as the engine does).
TEST(CrossEntropyPasses, EagerLossLengthensTheIterationByItsExtraPasses) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const config::Scenario before = testing::one_gpu_175b_layers();
    const config::Scenario eager =
        testing::one_gpu_175b_layers({{"training.cross_entropy_loss_fusion", "false"}});
    ASSERT_FALSE(before.training.cross_entropy_loss_fusion.has_value());
    ASSERT_EQ(eager.training.cross_entropy_loss_fusion, false);
    const workload::LayerShape x = workload::layer_shape_of(eager);
    const std::int64_t logits = x.tokens() * x.vocab;  // t = 1: the whole vocabulary (51200)
    const auto priced = [&](std::int64_t bytes_per_logit, cost::MemoryBoundKind kind) {
        return to_sim_time(cost.memory_bound(Bytes{logits * bytes_per_logit}, kind));
    };
    // The A100 profile has no timing of the loss's kernels: its cross_entropy factor is the streaming one.
    const auto eager_kind = cost::MemoryBoundKind::CrossEntropy;
    const auto unset_kind = cost::MemoryBoundKind::Generic;
    const SimTime per_microbatch =
        priced(38, eager_kind) - priced(10, unset_kind) + priced(14, eager_kind) - priced(6, unset_kind);
    const auto iteration = [&](const config::Scenario& sc) {
        return program::simulate(program::build_iteration(sc, cost)).makespan;
    };
    EXPECT_EQ(iteration(eager) - iteration(before), 2 * per_microbatch);
    // Hand check of the size: 2048 tokens × 51200 logits × 28 more bytes forward and 8 backward is 3.8 GB
    // of A100 HBM traffic per micro-batch, a few milliseconds.
    EXPECT_GT(to_seconds(per_microbatch).value, 1e-3);
}

TEST(CrossEntropyPasses, NemoFilesSetTheKeyAsTheirLauncherConfigs) {
    EXPECT_EQ(testing::shipped_scenario("nemo/gpt3-5b-64gpu-fp8").training.cross_entropy_loss_fusion, false);
    EXPECT_EQ(testing::shipped_scenario("nemo/llama3-8b-8gpu-fp8").training.cross_entropy_loss_fusion, true);
    EXPECT_EQ(testing::shipped_scenario("nemo/nemotron3-8b-64gpu-fp8").training.cross_entropy_loss_fusion,
              true);
    EXPECT_FALSE(
        testing::shipped_scenario("korthikanti-175b").training.cross_entropy_loss_fusion.has_value());
}

TEST(CrossEntropyPasses, NonBooleanIsRefusedNamingTheKey) {
    const testing::CommandResult r =
        testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-22b.json") +
                              " --set training.cross_entropy_loss_fusion=yes");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("training.cross_entropy_loss_fusion"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("boolean"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace
}  // namespace trainsim
