// training.overlap_param_gather: the distributed optimizer's parameter all-gather runs bucket by bucket
// in the first forward (Megatron-Core's finish_param_sync, Apex DistributedFusedAdam's pre-forward hook):
// the buckets are the gradient buckets gathered the other way round, the first is exposed, each later one
// runs beside the compute of the one before, and the blocking all-gather after the step is gone; with
// several chunks a rank dispatches whole chunks (Megatron's interleaved schedule).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/core/input_error.h"
#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"
#include "sim/program/parameter_gather.h"
#include "sim/workload/parameter_count.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using program::ParameterGather;

TEST(ParameterGather, BucketsAreTheGradientBucketsGatheredFirstLayerFirst) {
    // Forward units: embedding 5, two layers of 10, the output layer 3; buckets of 10. Filled in backward
    // order: {output, layer 1} = 13 closes, {layer 0} = 10 closes, {embedding} = 5 is the last, partial.
    std::vector<std::int64_t> sizes;
    EXPECT_EQ(ParameterGather::buckets({5, 10, 10, 3}, 10, sizes), (std::vector<std::int32_t>{0, 1, 2, 2}));
    EXPECT_EQ(sizes, (std::vector<std::int64_t>{5, 10, 13}));
    // Units without parameters wait for nothing; one bucket can hold everything.
    EXPECT_EQ(ParameterGather::buckets({0, 4, 0, 7}, 10, sizes), (std::vector<std::int32_t>{-1, 0, -1, 0}));
    EXPECT_EQ(sizes, (std::vector<std::int64_t>{11}));
    EXPECT_EQ(ParameterGather::buckets({3, 3}, 100, sizes), (std::vector<std::int32_t>{0, 0}));
    EXPECT_EQ(sizes, (std::vector<std::int64_t>{6}));
}

// Two 175B layers on two data-parallel GPUs of one node, two micro-batches each, one layer per bucket.
config::Scenario two_layers(bool overlap_param_gather) {
    const config::Scenario base = testing::one_gpu_175b_layers();
    const std::int64_t layer = workload::layer_parameters_per_rank(workload::layer_shape_of(base));
    return testing::one_gpu_175b_layers(
        {{"parallelism.data_parallel_size", "2"},
         {"training.global_batch_size", "4"},
         {"training.use_distributed_optimizer", "true"},
         {"training.overlap_grad_reduce", "true"},
         {"training.ddp_bucket_size", std::to_string(layer)},
         {"training.overlap_param_gather", overlap_param_gather ? "true" : "false"}});
}

struct Span {
    program::TaskInfo task;
    program::OpSpan span;
};

std::vector<Span> spans_of_gpu0(const program::IterationProgram& prog, const engine::RunResult& run) {
    std::vector<Span> spans;
    for (std::size_t t = 0; t < prog.info.size(); ++t) {
        const program::TaskInfo task = prog.info[t];
        if (task.gpu != engine::GpuId{0} || task.priced < 0) {
            continue;
        }
        for (const program::OpSpan& s :
             program::op_spans(prog, engine::TaskId::from_index(t), run.timings[t])) {
            spans.push_back({task, s});
        }
    }
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.span.start < b.span.start; });
    return spans;
}

TEST(ParameterGather, FirstBucketIsExposedAndTheNextRunsBesideTheComputeBeforeIt) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const config::Scenario on = two_layers(true);
    const program::IterationProgram prog = program::build_iteration(on, cost);
    const engine::RunResult run = program::simulate(prog);
    const std::vector<Span> spans = spans_of_gpu0(prog, run);

    std::vector<Span> gathers;
    SimTime embedding_start = -1_ns, embedding_end = -1_ns, layer0_start = -1_ns, layer0_end = -1_ns,
            layer1_start = -1_ns;
    for (const Span& s : spans) {
        const std::string& name = s.span.op->name;
        if (name == "dp.param_allgather") {
            gathers.push_back(s);
            continue;
        }
        if (s.task.microbatch != 0 || s.task.phase != program::Phase::Forward ||
            s.task.category != program::TaskCategory::Compute) {
            continue;
        }
        if (name.starts_with("embedding.")) {
            embedding_start = embedding_start < SimTime{} ? s.span.start : embedding_start;
            embedding_end = s.span.end;
        } else if (s.task.layer == 0) {
            layer0_start = layer0_start < SimTime{} ? s.span.start : layer0_start;
            layer0_end = s.span.end;
        } else if (s.task.layer == 1 && layer1_start < SimTime{}) {
            layer1_start = s.span.start;
        }
    }
    // Three buckets, gathered embedding first: {embedding}, {layer 0}, {layer 1, final norm}; 2 bytes a
    // parameter, every parameter once.
    const workload::StageParameters stage = workload::stage_parameters(on, 0);
    const std::int64_t layer = workload::layer_parameters_per_rank(workload::layer_shape_of(on));
    ASSERT_EQ(gathers.size(), 3u);
    EXPECT_EQ(gathers[0].span.op->collective_bytes.value,
              2 * workload::word_embedding_parameters_per_rank(on) +
                  2 * workload::position_embedding_parameters(on));
    EXPECT_EQ(gathers[1].span.op->collective_bytes.value, 2 * layer);
    EXPECT_EQ(gathers[0].span.op->collective_bytes.value + gathers[1].span.op->collective_bytes.value +
                  gathers[2].span.op->collective_bytes.value,
              2 * stage.total());
    // The first gather opens the iteration and the embedding waits for it; the second queues behind it on
    // the data-parallel stream, and layer 0 waits for it (3.6 GB take longer than the embedding's
    // kernels); the third runs beside layer 0, which outlasts it, so layer 1 follows layer 0 at once.
    EXPECT_EQ(gathers[0].span.start, 0_ns);
    EXPECT_EQ(embedding_start, gathers[0].span.end);
    EXPECT_EQ(gathers[1].span.start, gathers[0].span.end);
    ASSERT_GT(gathers[1].span.end, embedding_end);
    EXPECT_EQ(layer0_start, gathers[1].span.end);
    EXPECT_EQ(gathers[2].span.start, gathers[1].span.end);
    ASSERT_LT(gathers[2].span.end, layer0_end);
    EXPECT_EQ(layer1_start, layer0_end);

    // Against the blocking gather after the step: the iteration loses that gather and gains the first two
    // buckets' exposure, less the embedding's kernels that the second one hid.
    const program::IterationProgram off_prog = program::build_iteration(two_layers(false), cost);
    const engine::RunResult off_run = program::simulate(off_prog);
    SimTime blocking{-1};
    for (const Span& s : spans_of_gpu0(off_prog, off_run)) {
        if (s.span.op->name == "dp.param_allgather") {
            ASSERT_LT(blocking, 0_ns) << "one blocking gather";
            blocking = s.span.end - s.span.start;
            EXPECT_EQ(s.span.op->collective_bytes.value, 2 * stage.total());
        }
    }
    ASSERT_GT(blocking, 0_ns);
    const SimTime exposed = (gathers[0].span.end - gathers[0].span.start) +
                            (gathers[1].span.end - gathers[1].span.start) - (embedding_end - embedding_start);
    EXPECT_EQ(run.makespan, off_run.makespan - blocking + exposed);
}

TEST(ParameterGather, WithSeveralChunksTheFirstTwoChunksGatherFromTheStart) {
    // Four 175B layers, p = 2, v = 2, d = 2: rank 0 holds chunk 0 (the embedding and layer 0) and chunk 1
    // (layer 2). As Megatron's interleaved schedule calls param_sync_func for chunks 0 and 1 before its
    // first step, all three of rank 0's buckets ({embedding}, {layer 0}, {layer 2}) are issued at once and
    // run back to back from the start; the compute still waits bucket by bucket.
    const config::Scenario base = testing::one_gpu_175b_layers();
    const std::int64_t layer = workload::layer_parameters_per_rank(workload::layer_shape_of(base));
    const config::Scenario sc =
        testing::one_gpu_175b_layers({{"model.num_layers", "4"},
                                      {"parallelism.pipeline_model_parallel_size", "2"},
                                      {"parallelism.virtual_pipeline_model_parallel_size", "2"},
                                      {"parallelism.data_parallel_size", "2"},
                                      {"training.global_batch_size", "4"},
                                      {"training.use_distributed_optimizer", "true"},
                                      {"training.overlap_grad_reduce", "true"},
                                      {"training.ddp_bucket_size", std::to_string(layer)},
                                      {"training.overlap_param_gather", "true"}});
    const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    const engine::RunResult run = program::simulate(prog);
    ASSERT_EQ(prog.gpus[0].coordinates.pp, 0);
    std::vector<Span> gathers;
    SimTime embedding_start{-1};
    for (const Span& s : spans_of_gpu0(prog, run)) {
        if (s.span.op->name == "dp.param_allgather") {
            gathers.push_back(s);
        } else if (s.span.op->name.starts_with("embedding.") && embedding_start < SimTime{} &&
                   s.task.phase == program::Phase::Forward) {
            embedding_start = s.span.start;
        }
    }
    ASSERT_EQ(gathers.size(), 3u);
    EXPECT_EQ(gathers[0].span.start, 0_ns);
    EXPECT_EQ(gathers[1].span.start, gathers[0].span.end);
    EXPECT_EQ(gathers[2].span.start, gathers[1].span.end);
    EXPECT_EQ(gathers[1].span.op->collective_bytes.value, 2 * layer);
    EXPECT_EQ(gathers[2].span.op->collective_bytes.value, 2 * layer);
    EXPECT_EQ(embedding_start, gathers[0].span.end);
}

TEST(ParameterGather, NeedsTheDistributedOptimizerAndOverlappedGradients) {
    EXPECT_THROW((void)testing::one_gpu_175b_layers({{"parallelism.data_parallel_size", "2"},
                                                     {"training.global_batch_size", "4"},
                                                     {"training.overlap_grad_reduce", "true"},
                                                     {"training.overlap_param_gather", "true"}}),
                 InputError);
    EXPECT_THROW((void)testing::one_gpu_175b_layers({{"parallelism.data_parallel_size", "2"},
                                                     {"training.global_batch_size", "4"},
                                                     {"training.use_distributed_optimizer", "true"},
                                                     {"training.overlap_param_gather", "true"}}),
                 InputError);
}

}  // namespace
}  // namespace trainsim
