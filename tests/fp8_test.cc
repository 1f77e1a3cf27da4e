// FP8 training (training.fp8_format): the FP8 GEMM cost, Transformer Engine's extra kernels and FP8
// all-gathers in a layer's op list (sim/workload/fp8_layer.h), FP8 weight copies in memory, and the
// checks that refuse FP8 where the hardware has none. Expected values are worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/cost/cost_model.h"
#include "sim/cost/hardware_profile.h"
#include "sim/memory/static_memory.h"
#include "sim/workload/fp8_layer.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using config::Fp8Recipe;
using config::RecomputeGranularity;
using workload::Op;
using workload::OpList;

cost::HardwareProfile h100() {
    return cost::load_hardware_profile("h100-80gb-dgx", testing::source_path("scenarios/hardware"));
}

TEST(Fp8GemmCost, ReadsTheFp8CurveAgainstTheFp8Peak) {
    cost::HardwareProfile p = h100();
    p.gemm_efficiency_vs_flops = cost::Curve{{1e6}, {0.8}, "flat"};
    p.fp8_gemm_efficiency_vs_flops = cost::Curve{{1e6}, {0.5}, "flat"};
    const cost::CostModel model(p);
    // 8192^3: 32 x 64 = 2048 tiles of 256x128 on 132 SMs, no wave correction. F = 2·8192³.
    const double flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
    const cost::GemmShape shape{8192, 8192, 8192, 1};
    EXPECT_DOUBLE_EQ(model.gemm(shape, cost::GemmClass::Dense, cost::GemmPrecision::Fp8).value,
                     flops / (1979e12 * 0.5));
    EXPECT_DOUBLE_EQ(model.gemm(shape).value, flops / (989e12 * 0.8));
    // FP8 is for dense GEMMs only (attention stays BF16 in TE).
    EXPECT_THROW((void)model.gemm(shape, cost::GemmClass::AttentionScore, cost::GemmPrecision::Fp8),
                 std::invalid_argument);
}

TEST(Fp8GemmCost, ShippedH100ReproducesAzuresFp8Cube) {
    const cost::CostModel model(h100());
    // S-AZURE cuBLASLt FP8 8192³: 1290.1 TFLOP/s; the curve's knot at 1.1e12 holds 0.652 of 1979, and
    // 2·8192³ = 1.0995e12 reads just below it.
    const cost::GemmShape shape{8192, 8192, 8192, 1};
    const double t = model.gemm(shape, cost::GemmClass::Dense, cost::GemmPrecision::Fp8).value;
    EXPECT_NEAR(shape.flops().value / t / 1e12, 1290.1, 0.01 * 1290.1);
}

TEST(Fp8GemmCost, AProfileWithoutFp8RefusesIt) {
    const cost::CostModel a100 = testing::shipped_cost_model();
    EXPECT_FALSE(a100.profile().has_fp8());
    EXPECT_THROW((void)a100.gemm({64, 64, 64, 1}, cost::GemmClass::Dense, cost::GemmPrecision::Fp8),
                 std::invalid_argument);
}

// A layer small enough to count by hand: s = 4, b = 2 (8 tokens), h = 8, a = 2, ffn = 32, t = 2, SP.
workload::LayerShape tiny(std::optional<Fp8Recipe> fp8) {
    workload::LayerShape x;
    x.seq = 4;
    x.micro_batch = 2;
    x.hidden = 8;
    x.heads = 2;
    x.ffn = 32;
    x.vocab = 64;
    x.tp = 2;
    x.sequence_parallel = true;
    x.fp8 = fp8;
    return x;
}

std::ptrdiff_t index_of(const OpList& ops, const std::string& name) {
    const auto it = std::find_if(ops.begin(), ops.end(), [&](const Op& op) { return op.name == name; });
    EXPECT_NE(it, ops.end()) << name;
    return it - ops.begin();
}

const Op& op_named(const OpList& ops, const std::string& name) {
    return ops[static_cast<std::size_t>(index_of(ops, name))];
}

bool has(const OpList& ops, const std::string& name) {
    return std::any_of(ops.begin(), ops.end(), [&](const Op& op) { return op.name == name; });
}

TEST(Fp8Layer, DelayedScalingForwardCastsProjAndFc2InputsAndGathersFp8) {
    const OpList bf16 = workload::layer_forward(tiny(std::nullopt), RecomputeGranularity::None);
    const OpList fp8 = workload::layer_forward(tiny(Fp8Recipe::Delayed), RecomputeGranularity::None);
    for (const char* gemm : {"qkv", "proj", "fc1", "fc2"}) {
        EXPECT_EQ(op_named(fp8, gemm).gemm_precision, cost::GemmPrecision::Fp8) << gemm;
        // The wgrad's saved input is kept in FP8: half the bytes.
        EXPECT_EQ(op_named(fp8, gemm).saved_bytes.value * 2, op_named(bf16, gemm).saved_bytes.value) << gemm;
    }
    EXPECT_EQ(op_named(fp8, "qkv").saved_bytes.value, 32);  // the LN output shard 8·8/2, one byte each
    for (const char* gemm : {"attn.qk", "attn.av"}) {
        EXPECT_EQ(op_named(fp8, gemm).gemm_precision, cost::GemmPrecision::Bf16) << gemm;
    }
    // LayerNorm-fed inputs are cast inside TE's LayerNorm under delayed scaling: no kernel of their own.
    EXPECT_FALSE(has(fp8, "fp8.qkv.cast"));
    EXPECT_FALSE(has(fp8, "fp8.fc1.cast"));
    // proj's input [8 tokens, h/t = 4] and fc2's [8, ffn/t = 16]: read 2, write 1 + 1 bytes an element.
    EXPECT_EQ(op_named(fp8, "fp8.proj.cast_transpose").bytes_moved.value, 8 * 4 * 4);
    EXPECT_EQ(op_named(fp8, "fp8.fc2.cast_transpose").bytes_moved.value, 8 * 16 * 4);
    EXPECT_EQ(index_of(fp8, "fp8.proj.cast_transpose") + 1, index_of(fp8, "proj"));
    // SP all-gathers of the LayerNorm outputs move FP8: 8·8 elements, 1 byte.
    EXPECT_EQ(op_named(bf16, "ln1.allgather").collective_bytes.value, 128);
    EXPECT_EQ(op_named(fp8, "ln1.allgather").collective_bytes.value, 64);
    EXPECT_EQ(op_named(fp8, "ln2.allgather").collective_bytes.value, 64);
    // Two kernels added, nothing removed; dependencies still name the same ops.
    ASSERT_EQ(fp8.size(), bf16.size() + 2);
    const Op& qkv = op_named(fp8, "qkv");
    ASSERT_EQ(qkv.after.size(), 1u);
    EXPECT_EQ(fp8[static_cast<std::size_t>(qkv.after[0])].name, "ln1.allgather");
}

// An RMSNorm layer (Llama) gathers its norms' outputs under their own names; TE gathers those in FP8 too.
TEST(Fp8Layer, RmsNormOutputsAreGatheredInFp8) {
    workload::LayerShape x = tiny(Fp8Recipe::Delayed);
    x.rmsnorm = true;
    const OpList fp8 = workload::layer_forward(x, RecomputeGranularity::None);
    EXPECT_EQ(op_named(fp8, "rmsnorm1.allgather").collective_bytes.value, 64);  // 8·8 elements, 1 byte
    EXPECT_EQ(op_named(fp8, "rmsnorm2.allgather").collective_bytes.value, 64);
}

TEST(Fp8Layer, DelayedScalingBackwardCastsGradientsAndTransposesGatheredInputs) {
    const OpList fp8 = workload::layer_backward(tiny(Fp8Recipe::Delayed), RecomputeGranularity::None);
    for (const char* gemm : {"qkv.dgrad", "qkv.wgrad", "proj.dgrad", "proj.wgrad", "fc1.dgrad", "fc1.wgrad",
                             "fc2.dgrad", "fc2.wgrad"}) {
        // TE promotes dgrad's and wgrad's partial sums to FP32 (_2X_ACC_DGRAD, _2X_ACC_WGRAD).
        EXPECT_EQ(op_named(fp8, gemm).gemm_precision, cost::GemmPrecision::Fp8SplitAccumulator) << gemm;
    }
    // Output gradients: fc2's and proj's [8, h = 8], fc1's [8, 16], qkv's [8, 3h/t = 12]; 4 bytes each.
    EXPECT_EQ(op_named(fp8, "fp8.fc2.grad_cast_transpose").bytes_moved.value, 8 * 8 * 4);
    EXPECT_EQ(op_named(fp8, "fp8.proj.grad_cast_transpose").bytes_moved.value, 8 * 8 * 4);
    EXPECT_EQ(op_named(fp8, "fp8.fc1.grad_cast_transpose").bytes_moved.value, 8 * 16 * 4);
    EXPECT_EQ(op_named(fp8, "fp8.qkv.grad_cast_transpose").bytes_moved.value, 8 * 12 * 4);
    // The gathered FP8 input [8, 8] of qkv and fc1 is transposed for the wgrad: read 1, write 1.
    EXPECT_EQ(op_named(fp8, "fp8.fc1.input_transpose").bytes_moved.value, 8 * 8 * 2);
    EXPECT_EQ(index_of(fp8, "fp8.fc1.input_transpose") + 1, index_of(fp8, "fc1.wgrad"));
    EXPECT_EQ(op_named(fp8, "fc1.input_allgather").collective_bytes.value, 64);
    // The dgrad's cast waits for the gradient all-gather, as the dgrad did.
    const Op& cast = op_named(fp8, "fp8.fc2.grad_cast_transpose");
    ASSERT_FALSE(cast.after.empty());
    EXPECT_EQ(fp8[static_cast<std::size_t>(cast.after[0])].name, "fc2.grad_allgather");
}

TEST(Fp8Layer, TensorwiseScalingReadsEachTensorOnceMoreForItsAmax) {
    const OpList fwd = workload::layer_forward(tiny(Fp8Recipe::Tensorwise), RecomputeGranularity::None);
    // The LN output shard (8·8/2 = 32 elements): amax reads 2 bytes, the cast reads 2 and writes 1.
    EXPECT_EQ(op_named(fwd, "fp8.qkv.amax").bytes_moved.value, 32 * 2);
    EXPECT_EQ(op_named(fwd, "fp8.qkv.cast").bytes_moved.value, 32 * 3);
    EXPECT_EQ(op_named(fwd, "fp8.proj.amax").bytes_moved.value, 8 * 4 * 2);
    const OpList bwd = workload::layer_backward(tiny(Fp8Recipe::Tensorwise), RecomputeGranularity::None);
    EXPECT_EQ(op_named(bwd, "fp8.fc2.grad_amax").bytes_moved.value, 8 * 8 * 2);
}

TEST(Fp8Layer, BlockScaledRecipesQuantizeBothCopiesInTheForward) {
    for (const Fp8Recipe recipe : {Fp8Recipe::Blockwise, Fp8Recipe::Mxfp8}) {
        const OpList fwd = workload::layer_forward(tiny(recipe), RecomputeGranularity::None);
        EXPECT_EQ(op_named(fwd, "fp8.qkv.cast_transpose").bytes_moved.value, 32 * 4);
        EXPECT_FALSE(has(fwd, "fp8.qkv.amax"));
        const OpList bwd = workload::layer_backward(tiny(recipe), RecomputeGranularity::None);
        EXPECT_FALSE(has(bwd, "fp8.qkv.input_transpose"));
    }
}

// TE's split accumulator (training.fp8_split_accumulator; its cost in fp8_split_accumulator_test.cc):
// dgrad and wgrad always, the forward only under blockwise (TE's _2X_ACC_FPROP is False;
// Float8BlockScaling requires the split accumulator on all three).
TEST(Fp8Layer, DgradAndWgradUseTheSplitAccumulatorTheForwardOnlyUnderBlockwise) {
    for (const Fp8Recipe recipe : {Fp8Recipe::Delayed, Fp8Recipe::Tensorwise, Fp8Recipe::Blockwise}) {
        const OpList fwd = workload::layer_forward(tiny(recipe), RecomputeGranularity::None);
        const OpList bwd = workload::layer_backward(tiny(recipe), RecomputeGranularity::None);
        const cost::GemmPrecision forward = recipe == Fp8Recipe::Blockwise
                                                ? cost::GemmPrecision::Fp8SplitAccumulator
                                                : cost::GemmPrecision::Fp8;
        for (const std::string gemm : {"qkv", "proj", "fc1", "fc2"}) {
            EXPECT_EQ(op_named(fwd, gemm).gemm_precision, forward) << gemm;
            EXPECT_EQ(op_named(bwd, gemm + ".dgrad").gemm_precision, cost::GemmPrecision::Fp8SplitAccumulator)
                << gemm;
            EXPECT_EQ(op_named(bwd, gemm + ".wgrad").gemm_precision, cost::GemmPrecision::Fp8SplitAccumulator)
                << gemm;
        }
        EXPECT_EQ(op_named(bwd, "attn.qk.dgrad_q").gemm_precision, cost::GemmPrecision::Bf16);
    }
    // Off: every FP8 GEMM at the fast rate, blockwise's forward too.
    workload::LayerShape off = tiny(Fp8Recipe::Blockwise);
    off.fp8_split_accumulator = false;
    const OpList fwd = workload::layer_forward(off, RecomputeGranularity::None);
    const OpList bwd = workload::layer_backward(off, RecomputeGranularity::None);
    for (const std::string gemm : {"qkv", "proj", "fc1", "fc2"}) {
        EXPECT_EQ(op_named(fwd, gemm).gemm_precision, cost::GemmPrecision::Fp8) << gemm;
        EXPECT_EQ(op_named(bwd, gemm + ".dgrad").gemm_precision, cost::GemmPrecision::Fp8) << gemm;
        EXPECT_EQ(op_named(bwd, gemm + ".wgrad").gemm_precision, cost::GemmPrecision::Fp8) << gemm;
    }
}

TEST(Fp8Memory, WeightCopiesAddTwoBytesPerLayerParameter) {
    const config::Scenario bf16 = testing::shipped_scenario("korthikanti-22b");
    const config::Scenario fp8 = testing::shipped_scenario(
        "korthikanti-22b", {{"training.fp8_format", "hybrid"}, {"hardware.profile", "h100-80gb-dgx"}});
    const std::int64_t per_layer = workload::layer_parameters_per_rank(workload::layer_shape_of(bf16));
    EXPECT_EQ(memory::static_bytes(fp8, 0).value - memory::static_bytes(bf16, 0).value, 2 * per_layer * 48);
    EXPECT_EQ(workload::fp8_weight_parameters(fp8, 0), per_layer * 48);
    EXPECT_EQ(workload::fp8_weight_casts(workload::fp8_weight_parameters(fp8, 0), Fp8Recipe::Delayed)
                  .front()
                  .bytes_moved.value,
              4 * per_layer * 48);
}

TEST(Fp8Scenario, RefusedWithoutFp8HardwareAndMxfp8OffBlackwell) {
    const testing::CommandResult a100 =
        testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-22b.json") +
                              " --set training.fp8_format=hybrid");
    EXPECT_EQ(a100.status, 2);
    EXPECT_NE(a100.err.find("training.fp8_format=\"hybrid\" needs FP8 tensor cores"), std::string::npos)
        << a100.err;
    const testing::CommandResult mx =
        testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-22b.json") +
                              " --set training.fp8_format=e4m3 --set training.fp8_recipe=mxfp8 --set "
                              "hardware.profile=h100-80gb-dgx");
    EXPECT_EQ(mx.status, 2);
    EXPECT_NE(mx.err.find("training.fp8_recipe=\"mxfp8\" needs a Blackwell GPU"), std::string::npos)
        << mx.err;
    const testing::CommandResult alone =
        testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-22b.json") +
                              " --set training.fp8_recipe=delayed");
    EXPECT_EQ(alone.status, 2);
    EXPECT_NE(alone.err.find("training.fp8_recipe=\"delayed\" requires training.fp8_format"),
              std::string::npos)
        << alone.err;
}

}  // namespace
}  // namespace trainsim
