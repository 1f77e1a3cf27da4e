// The workload against the papers' formulas: per-layer GEMM FLOPs (Korthikanti Appendix A), model
// FLOPs per iteration (Eq. 7) summed over every simulated op, activation bytes (Table 2, all six rows
// for the four Korthikanti models, to the byte) and parameter counts (Narayanan Eq. 2).
#include <gtest/gtest.h>

#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"
#include "sim/workload/model_flops.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"
#include "tests/test_support.h"

namespace trainsim::workload {
namespace {

using config::RecomputeGranularity;

double gemm_flops(const OpList& ops, bool recompute_only = false) {
    double total = 0;
    for (const Op& op : ops) {
        if (!recompute_only || op.is_recompute) {
            total += op.flops().value;
        }
    }
    return total;
}

LayerShape shape(std::int64_t h, std::int64_t a, std::int64_t b, std::int64_t t, bool sp) {
    return LayerShape{2048, b, h, a, 4 * h, 51200, t, sp, {}};
}

TEST(LayerFlops, ForwardIs24bsh2Plus4bs2hPerTensorRank) {
    for (const bool sp : {false, true}) {
        const LayerShape x = shape(6144, 64, 4, 8, sp);
        const double s = 2048, b = 4, h = 6144, t = 8;
        const double expected = (24 * b * s * h * h + 4 * b * s * s * h) / t;
        EXPECT_DOUBLE_EQ(gemm_flops(layer_forward(x, RecomputeGranularity::None)), expected);
        EXPECT_DOUBLE_EQ(gemm_flops(layer_backward(x, RecomputeGranularity::None)), 2 * expected);
        // Full recompute runs the forward again; selective only QKᵀ and attention over V (+4bs²h/t).
        EXPECT_DOUBLE_EQ(gemm_flops(layer_backward(x, RecomputeGranularity::Full), true), expected);
        EXPECT_DOUBLE_EQ(gemm_flops(layer_backward(x, RecomputeGranularity::Selective), true), 4 * b * s * s * h / t);
    }
}

TEST(LayerCommunication, MegatronPlacementWithoutAndWithSequenceParallelism) {
    auto names = [](const OpList& ops) {
        std::vector<std::string> out;
        for (const Op& op : ops) {
            if (op.kind == OpKind::Collective) {
                out.push_back(op.name + (op.blocking ? "" : " (async)"));
            }
        }
        return out;
    };
    const LayerShape plain = shape(6144, 64, 4, 8, false);
    EXPECT_EQ(names(layer_forward(plain, RecomputeGranularity::None)),
              (std::vector<std::string>{"proj.allreduce", "fc2.allreduce"}));
    EXPECT_EQ(names(layer_backward(plain, RecomputeGranularity::None)),
              (std::vector<std::string>{"fc1.dgrad_allreduce (async)", "qkv.dgrad_allreduce (async)"}));
    const LayerShape sp = shape(6144, 64, 4, 8, true);
    EXPECT_EQ(names(layer_forward(sp, RecomputeGranularity::None)),
              (std::vector<std::string>{"ln1.allgather", "proj.reducescatter", "ln2.allgather", "fc2.reducescatter"}));
    EXPECT_EQ(names(layer_backward(sp, RecomputeGranularity::None)),
              (std::vector<std::string>{"fc2.grad_allgather", "fc1.input_allgather (async)",
                                        "fc1.dgrad_reducescatter (async)", "proj.grad_allgather",
                                        "qkv.input_allgather (async)", "qkv.dgrad_reducescatter (async)"}));
}

TEST(LayerCommunication, AsyncAllReduceIsJoinedAfterTheWeightGradient) {
    const OpList ops = layer_backward(shape(6144, 64, 4, 8, false), RecomputeGranularity::None);
    for (std::size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].name == "fc1.dgrad_allreduce") {
            EXPECT_EQ(ops[i + 1].name, "fc1.wgrad");  // runs under the wgrad GEMM
            EXPECT_EQ(ops[i + 2].after, (std::vector<std::int32_t>{static_cast<std::int32_t>(i)}));
        }
    }
}

// Korthikanti Table 2, in bytes, with the paper's conventions.
double table2(RecomputeGranularity policy, bool sp, double s, double b, double h, double a, double t) {
    const double sbh = s * b * h;
    if (policy == RecomputeGranularity::Full) {
        // Table 2's sbh(2) is the layer input; with SP Megatron checkpoints its [s/t, b, h] shard.
        return sp ? sbh * 2 / t : sbh * 2;
    }
    if (policy == RecomputeGranularity::Selective) {
        return sp ? sbh * 34 / t : sbh * (10 + 24 / t);
    }
    return sp ? sbh * (34 / t + 5 * a * s / (h * t)) : sbh * (10 + 24 / t + 5 * a * s / (h * t));
}

TEST(ActivationMemory, MatchesKorthikantiTable2ForTheFourModels) {
    struct Model {
        const char* name;
        std::int64_t h, a, b;
    };
    for (const Model m : {Model{"22B", 6144, 64, 4}, Model{"175B", 12288, 96, 1}, Model{"530B", 20480, 128, 1},
                          Model{"1T", 25600, 160, 1}}) {
        // Row 1 of Table 2, no parallelism: sbh(34 + 5as/h).
        const double sbh = 2048.0 * static_cast<double>(m.b * m.h);
        EXPECT_DOUBLE_EQ(static_cast<double>(layer_activation_bytes(shape(m.h, m.a, m.b, 1, false),
                                                                    RecomputeGranularity::None)
                                                 .value),
                         sbh * (34 + 5.0 * static_cast<double>(m.a) * 2048 / static_cast<double>(m.h)))
            << m.name;
        for (const auto policy :
             {RecomputeGranularity::None, RecomputeGranularity::Selective, RecomputeGranularity::Full}) {
            for (const bool sp : {false, true}) {
                const double expected = table2(policy, sp, 2048, static_cast<double>(m.b), static_cast<double>(m.h),
                                               static_cast<double>(m.a), 8);
                const auto got = layer_activation_bytes(shape(m.h, m.a, m.b, 8, sp), policy).value;
                EXPECT_DOUBLE_EQ(static_cast<double>(got), expected)
                    << m.name << " policy " << config::to_string(policy) << " sp " << sp;
            }
        }
    }
}

TEST(Parameters, MatchNarayananEquation2PlusTheFinalLayerNorm) {
    // Eq. 2: P = 12lh²(1 + 13/(12h) + (V + s)/(12lh)); it leaves out the final LayerNorm (2h).
    const config::Scenario sc = testing::shipped_scenario(
        "korthikanti-22b", {{"parallelism.tensor_model_parallel_size", "1"}, {"training.micro_batch_size", "1"},
                            {"training.global_batch_size", "1"}});
    const double l = 48, h = 6144, V = 51200, s = 2048;
    const double eq2 = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
    EXPECT_DOUBLE_EQ(static_cast<double>(stage_parameters(sc, 0).total()), eq2 + 2 * h);
}

TEST(ModelFlops, Equation7And8AndNarayananEquation3) {
    const config::Scenario sc = testing::shipped_scenario("korthikanti-22b");
    const double B = 4, L = 48, s = 2048, h = 6144, V = 51200;
    const double eq7 = 72 * B * L * s * h * h * (1 + s / (6 * h) + V / (12 * h * L));
    EXPECT_DOUBLE_EQ(model_flops_per_iteration(sc).value, eq7);
    EXPECT_DOUBLE_EQ(hardware_flops_per_iteration(sc).value, eq7);
    const config::Scenario sel =
        testing::shipped_scenario("korthikanti-22b", {{"training.recompute_granularity", "selective"}});
    EXPECT_DOUBLE_EQ(hardware_flops_per_iteration(sel).value,
                     72 * B * L * s * h * h * (1 + s / (3 * h) + V / (12 * h * L)));
    const config::Scenario full =
        testing::shipped_scenario("korthikanti-22b", {{"training.recompute_granularity", "full"}});
    EXPECT_DOUBLE_EQ(hardware_flops_per_iteration(full).value,
                     96 * B * L * s * h * h * (1 + s / (6 * h) + V / (16 * h * L)));
}

// Every GEMM the simulator runs, summed over the simulated GPUs and scaled by the folded copies,
// is exactly Eq. 7's model FLOPs (plus the recomputed forward for full recompute).
void expect_simulated_flops_match(const config::Scenario& sc, double expected) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    double total = 0;
    for (const program::TaskInfo& info : prog.info) {
        total += info.flops.value;
    }
    const double folded = static_cast<double>(sc.parallelism.tensor_model_parallel_size *
                                              sc.parallelism.data_parallel_size);
    EXPECT_NEAR(total * folded / expected, 1.0, 1e-12) << sc.name;
}

TEST(ModelFlops, SimulatedGemmsSumToEquation7) {
    for (const char* name : {"korthikanti-22b", "korthikanti-175b", "korthikanti-530b"}) {
        const config::Scenario sc = testing::shipped_scenario(name, {{"training.recompute_granularity", "none"}});
        expect_simulated_flops_match(sc, model_flops_per_iteration(sc).value);
    }
    const config::Scenario full =
        testing::shipped_scenario("korthikanti-175b", {{"training.recompute_granularity", "full"}});
    const double B = 64, L = 96, s = 2048, h = 12288, V = 51200;
    // Forward counted twice for the layers only: 96·B·L·s·h²·(1 + s/(6h)) + 6·B·s·h·V.
    expect_simulated_flops_match(full, 96 * B * L * s * h * h * (1 + s / (6 * h)) + 6 * B * s * h * V);
}

}  // namespace
}  // namespace trainsim::workload
