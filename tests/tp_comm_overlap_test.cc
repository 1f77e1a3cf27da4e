// parallelism.tp_comm_overlap (Transformer Engine's userbuffers, sim/workload/tp_comm_overlap.h): the op
// list it makes from a sequence-parallel layer, checked op by op, and what it does end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/cost/hardware_profile.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/tp_comm_overlap.h"
#include "sim/workload/transformer_layer.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using config::RecomputeGranularity;
using workload::Op;
using workload::OpKind;
using workload::OpList;

// GPT-3 20B as NeMo runs it (scenarios/nemo/gpt3-20b-64gpu-fp8.json: t = 2, SP), here BF16 at t = 4 so
// the ring has three steps.
config::Scenario gpt3_20b(bool overlap) {
    return testing::shipped_scenario("nemo/gpt3-20b-64gpu-fp8",
                                     {{"parallelism.tensor_model_parallel_size", "4"},
                                      {"parallelism.data_parallel_size", "16"},
                                      {"training.fp8_format", "null"},
                                      {"training.fp8_recipe", "null"},
                                      {"parallelism.tp_comm_overlap", overlap ? "true" : "false"}});
}

std::int32_t index_of(const OpList& ops, const std::string& name) {
    const auto it = std::find_if(ops.begin(), ops.end(), [&](const Op& op) { return op.name == name; });
    EXPECT_NE(it, ops.end()) << name;
    return static_cast<std::int32_t>(it - ops.begin());
}

TEST(TpCommOverlap, RingExchangeFeedsTheQkvGemmChunkByChunk) {
    const workload::LayerShape plain = workload::layer_shape_of(gpt3_20b(false));
    const workload::LayerShape x = workload::layer_shape_of(gpt3_20b(true));
    ASSERT_TRUE(x.tp_comm_overlap);
    const OpList before = workload::layer_forward(plain, RecomputeGranularity::None);
    const OpList ops = workload::layer_forward(x, RecomputeGranularity::None);
    const Op& ag = before[static_cast<std::size_t>(index_of(before, "ln1.allgather"))];
    const Op& qkv = before[static_cast<std::size_t>(index_of(before, "qkv"))];
    // s·b = 2048 × 2 = 4096 tokens in 4 chunks of 1024; 3 ring steps of a third of the gathered bytes.
    ASSERT_EQ(qkv.gemm.m, 4096);
    const std::int32_t ln = index_of(ops, "ln1");
    for (int k = 0; k < 4; ++k) {
        const Op& c = ops[static_cast<std::size_t>(index_of(ops, "qkv.chunk" + std::to_string(k)))];
        EXPECT_EQ(c.gemm.m, 1024);
        EXPECT_EQ(c.gemm.n, qkv.gemm.n);
        EXPECT_EQ(c.gemm.k, qkv.gemm.k);
        EXPECT_EQ(c.saved_bytes.value, k == 0 ? qkv.saved_bytes.value : 0);
        if (k < 3) {
            const std::int32_t step = index_of(ops, "ln1.allgather.step" + std::to_string(k));
            const Op& s = ops[static_cast<std::size_t>(step)];
            EXPECT_FALSE(s.blocking);
            EXPECT_EQ(s.comm_sms, 1);  // TE's ring exchange copies with the copy engines, on 1 SM
            EXPECT_EQ(s.collective_bytes.value * 3, ag.collective_bytes.value);
            EXPECT_EQ(s.after, std::vector<std::int32_t>{ln});  // the gathered input is LayerNorm's output
        }
        // Chunk 0 runs on the rank's own shard at once; chunk k waits for ring step k − 1.
        const std::vector<std::int32_t> expected =
            k == 0 ? std::vector<std::int32_t>{}
                   : std::vector<std::int32_t>{index_of(ops, "ln1.allgather.step" + std::to_string(k - 1))};
        EXPECT_EQ(c.after, expected) << "qkv.chunk" << k;
    }
    EXPECT_EQ(std::count_if(ops.begin(), ops.end(), [](const Op& op) { return op.name == "qkv"; }), 0);
}

TEST(TpCommOverlap, PipelinedReduceScatterBehindProjInFourChunks) {
    const workload::LayerShape x = workload::layer_shape_of(gpt3_20b(true));
    const OpList ops = workload::layer_forward(x, RecomputeGranularity::None);
    const OpList before =
        workload::layer_forward(workload::layer_shape_of(gpt3_20b(false)), RecomputeGranularity::None);
    const Op& rs = before[static_cast<std::size_t>(index_of(before, "proj.reducescatter"))];
    for (int k = 0; k < 4; ++k) {
        const std::int32_t c = index_of(ops, "proj.chunk" + std::to_string(k));
        const Op& s =
            ops[static_cast<std::size_t>(index_of(ops, "proj.reducescatter.chunk" + std::to_string(k)))];
        EXPECT_EQ(ops[static_cast<std::size_t>(c)].gemm.m, 1024);
        EXPECT_EQ(s.collective_bytes.value * 4, rs.collective_bytes.value);
        EXPECT_EQ(s.after, std::vector<std::int32_t>{c});
        EXPECT_EQ(s.blocking, k == 3);  // only the last one is waited for
        EXPECT_EQ(s.comm_sms, 16);      // TE's pipelined reduce-scatter holds 16 SMs
    }
    // Compute beside it runs on the other 116 of H100's 132 SMs.
    const cost::CostModel h100(
        cost::load_hardware_profile("h100-80gb-dgx", testing::source_path("scenarios/hardware")));
    EXPECT_DOUBLE_EQ(h100.compute_slowdown_beside_sms(16), 132.0 / 116.0);
    EXPECT_THROW((void)h100.compute_slowdown_beside_sms(132), std::invalid_argument);
}

TEST(TpCommOverlap, KeepsTheLayersFlopsAndBytesAndShortensTheIteration) {
    for (const bool backward : {false, true}) {
        const auto list = [&](bool overlap) {
            const workload::LayerShape x = workload::layer_shape_of(gpt3_20b(overlap));
            return backward ? workload::layer_backward(x, RecomputeGranularity::None)
                            : workload::layer_forward(x, RecomputeGranularity::None);
        };
        const OpList a = list(false);
        const OpList b = list(true);
        const auto sums = [](const OpList& ops) {
            double flops = 0;
            std::int64_t bytes = 0;
            std::int64_t saved = 0;
            for (const Op& op : ops) {
                flops += op.flops().value;
                bytes += op.collective_bytes.value;
                saved += op.saved_bytes.value;
            }
            return std::tuple{flops, bytes, saved};
        };
        EXPECT_EQ(sums(a), sums(b)) << (backward ? "backward" : "forward");
        EXPECT_GT(b.size(), a.size());
    }
    const auto time = [](bool overlap) {
        const auto r = testing::run_trainsim(
            "run " + testing::source_path("scenarios/nemo/gpt3-20b-64gpu-fp8.json") +
            " --set parallelism.tp_comm_overlap=" + (overlap ? "true" : "false") + " --format json");
        EXPECT_EQ(r.status, 0) << r.err;
        const auto at = r.out.find("\"iteration_time_s\":");
        return std::stod(r.out.substr(at + 19));
    };
    EXPECT_LT(time(true), time(false));
}

TEST(TpCommOverlap, OneRankIsUnchangedAndWithoutSequenceParallelismItIsAnInputError) {
    workload::LayerShape x = workload::layer_shape_of(gpt3_20b(false));
    x.tp = 1;
    x.sequence_parallel = false;
    x.tp_comm_overlap = true;
    const OpList ops = workload::layer_forward(x, RecomputeGranularity::None);
    x.tp_comm_overlap = false;
    EXPECT_EQ(ops.size(), workload::layer_forward(x, RecomputeGranularity::None).size());

    const auto r =
        testing::run_trainsim("run " + testing::source_path("scenarios/nemo/gpt3-20b-64gpu-fp8.json") +
                              " --set parallelism.sequence_parallel=false --set "
                              "parallelism.tp_comm_overlap=true");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("parallelism.tp_comm_overlap=true requires parallelism.sequence_parallel=true"),
              std::string::npos)
        << r.err;
}

}  // namespace
}  // namespace trainsim
