// Helpers shared by the tests: the shipped scenarios and profile, and running the CLI.
#pragma once

#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/cost/cost_model.h"

namespace trainsim::testing {

[[nodiscard]] inline std::string source_path(const std::string& relative) {
    return std::string(TRAINSIM_SOURCE_DIR) + "/" + relative;
}

[[nodiscard]] inline config::Scenario shipped_scenario(const std::string& name,
                                                       const std::vector<config::Override>& overrides = {}) {
    return config::load_scenario(source_path("scenarios/" + name + ".json"), overrides);
}

/// Two 175B-sized layers on one GPU (no TP, PP or DP: nothing waits for another GPU), two micro-batches,
/// with `extra` overrides on top.
[[nodiscard]] inline config::Scenario one_gpu_175b_layers(std::vector<config::Override> extra = {}) {
    std::vector<config::Override> o = {{"model.num_layers", "2"},
                                       {"parallelism.tensor_model_parallel_size", "1"},
                                       {"parallelism.pipeline_model_parallel_size", "1"},
                                       {"parallelism.virtual_pipeline_model_parallel_size", "1"},
                                       {"parallelism.sequence_parallel", "false"},
                                       {"parallelism.data_parallel_size", "1"},
                                       {"training.global_batch_size", "2"}};
    o.insert(o.end(), extra.begin(), extra.end());
    return shipped_scenario("korthikanti-175b", o);
}

[[nodiscard]] inline cost::CostModel shipped_cost_model() {
    return cost::CostModel(
        cost::load_hardware_profile("a100-80gb-selene", source_path("scenarios/hardware")));
}

struct CommandResult {
    int status = -1;
    std::string out;
    std::string err;
};

/// Runs the trainsim binary with `args` (a shell-quoted string) and captures both streams.
[[nodiscard]] CommandResult run_trainsim(const std::string& args);

}  // namespace trainsim::testing
