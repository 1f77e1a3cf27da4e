// Transformer Engine's memory-bound kernels around context parallelism's p2p ring
// (sim/workload/cp_ring_kernels.h): K/V packing, the half-chunk copies, the output merge and the dQ/dKV
// accumulation, hand-counted on small tensors and found in a CP layer's op lists at their exact price.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "sim/config/scenario.h"
#include "sim/program/iteration_program.h"
#include "sim/report/iteration_report.h"
#include "sim/report/report_json.h"
#include "sim/report/report_text.h"
#include "sim/workload/cp_ring_kernels.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"
#include "tests/support/op_named.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using testing::op_named;

using config::RecomputeGranularity;
using workload::CpRingTensors;

// 1000 query elements and 500 key-plus-value elements, 2 bytes each.
TEST(CpRingKernels, BytesOfEachKernelByHand) {
    const CpRingTensors t{1000, 500};
    EXPECT_EQ(workload::cp_kv_pack_bytes(t), 2000);  // read and write K and V
    EXPECT_EQ(workload::cp_kv_half_bytes(t), 1000);  // half of them
    // Zero-fill out (2000), then per step read out and the step's output, write out (6000).
    EXPECT_EQ(workload::cp_out_merge_bytes(t, 2), 2000 + 2 * 6000);
    EXPECT_EQ(workload::cp_out_merge_bytes(t, 4), 2000 + 4 * 6000);
    // Step 0: copy dQ (4000), cat dK,dV (2000), copy into the travelling dKV (2000).
    EXPECT_EQ(workload::cp_grad_merge_bytes(t, 0), 4000 + 2000 + 2000);
    // Later steps: add dQ (6000), cat half (1000), add half (1500).
    EXPECT_EQ(workload::cp_grad_merge_bytes(t, 1), 6000 + 1000 + 1500);
    EXPECT_EQ(workload::cp_grad_merge_bytes(t, 3), workload::cp_grad_merge_bytes(t, 1));
}

config::Scenario cp_scenario(std::int64_t cp) {
    return config::parse_scenario(R"({"model": {"preset": "llama3-8b", "num_layers": 2, "seq_length": 8192},
        "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1,
                        "context_parallel_size": )" +
                                      std::to_string(cp) +
                                      R"(},
        "training": {"micro_batch_size": 1, "global_batch_size": 2, "attention_backend": "flash"},
        "hardware": {"profile": "a100-80gb-selene"}})",
                                  "test");
}

// Llama 3 8B at s 8192 on c = 2: 4096 tokens a rank, Q 4096 × 32 × 128 and K, V 4096 × 8 × 128 each.
TEST(CpRingKernels, RingLayerRunsThemWithTheRanksTensors) {
    const workload::LayerShape x = workload::layer_shape_of(cp_scenario(2));
    const std::int64_t q = 4096LL * 32 * 128;
    const std::int64_t kv = 2 * 4096LL * 8 * 128;
    const workload::OpList fwd = workload::layer_forward(x, RecomputeGranularity::None);
    const workload::OpList bwd = workload::layer_backward(x, RecomputeGranularity::None);
    EXPECT_EQ(op_named(fwd, "attn.cp_kv_pack").bytes_moved.value, 2 * kv * 2);
    EXPECT_EQ(op_named(fwd, "attn.cp_kv_half.1").bytes_moved.value, kv * 2);
    EXPECT_EQ(op_named(fwd, "attn.cp_out_merge").bytes_moved.value, (q + 2 * 3 * q) * 2);
    EXPECT_EQ(op_named(bwd, "attn.cp_kv_pack.bwd").bytes_moved.value, 2 * kv * 2);
    EXPECT_EQ(op_named(bwd, "attn.cp_kv_half.bwd.1").bytes_moved.value, kv * 2);
    EXPECT_EQ(op_named(bwd, "attn.cp_grad_merge.0").bytes_moved.value, (2 * q + 4 * kv) * 2);
    EXPECT_EQ(op_named(bwd, "attn.cp_grad_merge.1").bytes_moved.value, (3 * q + 5 * kv / 2) * 2);
    // No half copy before step 0: it attends the rank's own chunks.
    EXPECT_EQ(std::count_if(fwd.begin(), fwd.end(),
                            [](const workload::Op& op) { return op.name.starts_with("attn.cp_kv_half"); }),
              1);
    // Without CP none of them.
    const workload::OpList plain =
        workload::layer_forward(workload::layer_shape_of(cp_scenario(1)), RecomputeGranularity::None);
    EXPECT_TRUE(std::none_of(plain.begin(), plain.end(),
                             [](const workload::Op& op) { return op.name.starts_with("attn.cp_"); }));
}

// Their price is the streaming curve's (MemoryBoundKind::Generic), launch included: at 4096 tokens the
// forward merge moves 235 MB, about 0.15 ms on an A100.
TEST(CpRingKernels, PricedAsStreamingKernels) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const workload::LayerShape x = workload::layer_shape_of(cp_scenario(2));
    const workload::OpList forward = workload::layer_forward(x, RecomputeGranularity::None);
    const workload::Op& merge = op_named(forward, "attn.cp_out_merge");  // a reference into `forward`
    EXPECT_EQ(merge.bytes_moved.value, 7LL * 4096 * 32 * 128 * 2);
    const double s = cost.memory_bound(merge.bytes_moved, merge.memory_kind).value;
    EXPECT_EQ(merge.memory_kind, cost::MemoryBoundKind::Generic);
    EXPECT_GT(s, 0.05e-3);
    EXPECT_LT(s, 0.2e-3);
}

// The breakdown's line is the time the ring kernels take in the simulated iteration: the sum of their
// spans on the one simulated GPU (PP 1), each forward output merge at its streaming price (nothing runs
// beside it: the ring's exchanges are done by then), 2 layers × 2 micro-batches of them.
TEST(CpRingKernels, BreakdownLineIsTheirTimeInTheIteration) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const config::Scenario sc = cp_scenario(2);
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    const engine::RunResult run = program::simulate(prog);
    const report::IterationReport r = report::make_iteration_report(sc, cost, prog, run);
    ASSERT_TRUE(r.cp_ring_kernels.has_value());
    SimTime total{};
    int merges = 0;
    const SimTime merge_price =
        to_sim_time(cost.memory_bound(Bytes{7LL * 4096 * 32 * 128 * 2}, cost::MemoryBoundKind::Generic));
    for (std::size_t t = 0; t < prog.info.size(); ++t) {
        if (prog.info[t].gpu != engine::GpuId{0} || prog.info[t].priced < 0) {
            continue;
        }
        for (const program::OpSpan& span :
             program::op_spans(prog, engine::TaskId::from_index(t), run.timings[t])) {
            if (span.op != nullptr && span.op->kind == workload::OpKind::MemoryBound &&
                span.op->name.starts_with("attn.cp_")) {  // not the exchanges (collectives)
                total += span.end - span.start;
            }
            if (span.op != nullptr && span.op->name == "attn.cp_out_merge") {
                EXPECT_EQ(span.end - span.start, merge_price);
                ++merges;
            }
        }
    }
    EXPECT_EQ(merges, 2 * 2);
    EXPECT_GT(total, 0_ns);
    EXPECT_NEAR(r.cp_ring_kernels->value, to_seconds(total).value, 1e-12);
    std::ostringstream text;
    report::write_text(text, r);
    EXPECT_NE(text.str().find("TE's context-parallel ring kernels"), std::string::npos) << text.str();
    EXPECT_DOUBLE_EQ(report::to_json(r)["cp_ring_kernels_s"].get<double>(), r.cp_ring_kernels->value);
    // Without CP there is no such line.
    const config::Scenario plain = cp_scenario(1);
    const program::IterationProgram plain_prog = program::build_iteration(plain, cost);
    const report::IterationReport p =
        report::make_iteration_report(plain, cost, plain_prog, program::simulate(plain_prog));
    EXPECT_FALSE(p.cp_ring_kernels.has_value());
    EXPECT_FALSE(report::to_json(p).contains("cp_ring_kernels_s"));
}

}  // namespace
}  // namespace trainsim
