// FSDP / ZeRO-3 (parallelism.data_parallel_sharding_strategy): static memory against 18·P/d plus the
// gathered layers, the communication per iteration against m · L · P_layer · (2·2 + 4), the prefetch
// overlap of the weight gathers, and the rules that reject what is not a sharding setup.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/core/input_error.h"
#include "sim/engine/simulator.h"
#include "sim/memory/static_memory.h"
#include "sim/program/iteration_program.h"
#include "sim/workload/fsdp_ops.h"
#include "sim/workload/parameter_count.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

config::Scenario llama(const std::string& strategy, bool distributed = true) {
    const std::string text = R"({"model": {"preset": "llama3-8b", "num_layers": 4, "seq_length": 2048},
        "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1,
                        "data_parallel_size": 8, "data_parallel_sharding_strategy": ")" +
                             strategy + R"("},
        "training": {"micro_batch_size": 1, "global_batch_size": 16, "attention_backend": "flash",
                     "use_distributed_optimizer": )" +
                             (distributed ? std::string("true") : std::string("false")) + R"(},
        "hardware": {"profile": "a100-80gb-selene"}})";
    return config::parse_scenario(text, "test");
}

TEST(Fsdp, StaticBytesAre18PerParameterOverDPlusTwoGatheredLayers) {
    const config::Scenario sc = llama("optim_grads_params");
    const std::int64_t P = workload::stage_parameters(sc, 0).total();
    const std::int64_t layer = workload::layer_parameters_per_rank(workload::layer_shape_of(sc));
    const auto expected =
        static_cast<std::int64_t>(std::ceil(static_cast<double>(P) * 18.0 / 8.0)) + 2 * 2 * layer;
    EXPECT_EQ(memory::static_bytes(sc, 0).value, expected);
    // The other strategies: 2 + 4 + 12/d (optim), 2 + 16/d (optim_grads).
    EXPECT_DOUBLE_EQ(memory::bytes_per_parameter(llama("optim")), 2.0 + 4.0 + 12.0 / 8.0);
    EXPECT_DOUBLE_EQ(memory::bytes_per_parameter(llama("optim_grads")), 2.0 + 16.0 / 8.0);
    EXPECT_EQ(memory::gathered_layer_bytes(llama("optim_grads"), 0).value, 0);
}

TEST(Fsdp, DataParallelTrafficPerIterationFollowsTheFormula) {
    const config::Scenario sc = llama("optim_grads_params");
    const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram prog = program::build_iteration(sc, cost);
    // Sum nccl-tests' S over every layer gather and reduce-scatter the program issues.
    std::int64_t layer_traffic = 0;
    int gathers = 0, scatters = 0;
    for (std::size_t t = 0; t < prog.info.size(); ++t) {
        const program::TaskInfo task = prog.info[t];
        if (task.priced < 0) {
            continue;  // pipeline transfers
        }
        const workload::OpList* ops = prog.priced[static_cast<std::size_t>(task.priced)].ops;
        for (std::size_t i = task.first_op; i < std::size_t{task.first_op} + task.op_count; ++i) {
            const workload::Op& op = (*ops)[i];
            if (op.name == "fsdp.param_allgather") {
                ++gathers;
                layer_traffic += op.collective_bytes.value;
            } else if (op.name == "fsdp.grad_reducescatter") {
                ++scatters;
                layer_traffic += op.collective_bytes.value;
            }
        }
    }
    const std::int64_t m = sc.num_microbatches();  // 16 / 8 = 2
    const std::int64_t layer = workload::layer_parameters_per_rank(workload::layer_shape_of(sc));
    EXPECT_EQ(gathers, 2 * m * 4);
    EXPECT_EQ(scatters, m * 4);
    EXPECT_EQ(layer_traffic, workload::fsdp_layer_traffic_bytes(m, 4, layer));
    EXPECT_EQ(layer_traffic, m * 4 * layer * 8);
}

// Each gather is issued one layer ahead, so it runs under the previous layer's compute: the iteration
// grows by much less than the gathers and reduce-scatters take in total.
TEST(Fsdp, PrefetchHidesMostOfTheLayerGathers) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const config::Scenario sharded = llama("optim_grads_params");
    const program::IterationProgram prog = program::build_iteration(sharded, cost);
    SimTime fsdp_comm{};
    for (std::size_t t = 0; t < prog.info.size(); ++t) {
        const program::TaskInfo task = prog.info[t];
        if (task.priced < 0) {
            continue;
        }
        const program::PricedOps& priced = prog.priced[static_cast<std::size_t>(task.priced)];
        for (std::size_t i = task.first_op; i < std::size_t{task.first_op} + task.op_count; ++i) {
            if ((*priced.ops)[i].name.starts_with("fsdp.")) {
                fsdp_comm += priced.durations[i];
            }
        }
    }
    const SimTime with_fsdp = program::simulate(prog).makespan;
    const SimTime without = program::simulate(program::build_iteration(llama("optim"), cost)).makespan;
    ASSERT_GT(fsdp_comm, 0_ns);
    EXPECT_LT(with_fsdp - without, fsdp_comm / 4);
}

TEST(Fsdp, ShardingNeedsTheDistributedOptimizer) {
    try {
        (void)llama("optim_grads_params", /*distributed=*/false);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(
            std::string(e.what()),
            "parallelism.data_parallel_sharding_strategy=\"optim_grads_params\" requires "
            "training.use_distributed_optimizer=true (every sharding strategy shards the optimizer state)");
    }
}

}  // namespace
}  // namespace trainsim
