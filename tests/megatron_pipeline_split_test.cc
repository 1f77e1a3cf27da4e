// Megatron-Core's uneven pipeline splits become parallelism.layers_per_pipeline_stage: Llama 3.1 405B's
// 126 layers over 16 stages with the embedding and the loss counted as layers, decoder_first/last, and
// the rules that reject what Megatron (or trainsim) does not allow.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/core/input_error.h"

namespace trainsim::config {
namespace {

Scenario with(const std::string& parallel_extra, std::int64_t p, std::int64_t v = 1) {
    const std::string text = R"({"model": {"preset": "llama3.1-405b"},
        "parallelism": {"tensor_model_parallel_size": 8, "pipeline_model_parallel_size": )" +
                             std::to_string(p) + R"(, "virtual_pipeline_model_parallel_size": )" +
                             std::to_string(v) + parallel_extra + R"(},
        "training": {"micro_batch_size": 1, "global_batch_size": 64},
        "hardware": {"profile": "a100-80gb-selene"}})";
    return parse_scenario(text, "t");
}

std::string error_of(const std::string& parallel_extra, std::int64_t p, std::int64_t v = 1) {
    try {
        (void)with(parallel_extra, p, v);
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

TEST(MegatronPipelineSplit, EmbeddingAndLossTakeOneLayerSlotEach) {
    // (126 + 2) / 16 = 8 per stage; the first and last build 7 transformer layers.
    const Scenario s = with(R"(, "account_for_embedding_in_pipeline_split": true,
                               "account_for_loss_in_pipeline_split": true)",
                            16);
    std::vector<std::int64_t> expected(16, 8);
    expected.front() = 7;
    expected.back() = 7;
    EXPECT_EQ(s.pipeline_split(), expected);
    // Only the embedding: (126 + 1) is not divisible by 16.
    EXPECT_EQ(
        error_of(R"(, "account_for_embedding_in_pipeline_split": true)", 16),
        "model.num_layers=126 plus the 1 layer(s) accounted for the embedding and loss must be divisible by "
        "parallelism.pipeline_model_parallel_size=16 with at least 2 per stage (Megatron)");
}

TEST(MegatronPipelineSplit, DecoderFirstAndLastFixTheEndsAndShareTheRest) {
    // 126 − 15 − 15 = 96 over the 6 middle stages: 16 each.
    const Scenario s = with(R"(, "decoder_first_pipeline_num_layers": 15,
                               "decoder_last_pipeline_num_layers": 15)",
                            8);
    EXPECT_EQ(s.pipeline_split(), (std::vector<std::int64_t>{15, 16, 16, 16, 16, 16, 16, 15}));
    EXPECT_EQ(
        error_of(R"(, "decoder_first_pipeline_num_layers": 13)", 8),
        "model.num_layers=126 minus parallelism.decoder_first_pipeline_num_layers=13 leaves 113 layers, "
        "which must divide evenly among the 7 other pipeline stages (Megatron)");
    // With interleaving each stage's layers must still split evenly among its chunks.
    EXPECT_NE(
        error_of(R"(, "decoder_first_pipeline_num_layers": 15, "decoder_last_pipeline_num_layers": 15)", 8, 2)
            .find("must be divisible by parallelism.virtual_pipeline_model_parallel_size=2"),
        std::string::npos);
}

TEST(MegatronPipelineSplit, CombinationsMegatronOrTrainsimDoNotAllow) {
    EXPECT_EQ(
        error_of(R"(, "account_for_loss_in_pipeline_split": true, "decoder_first_pipeline_num_layers": 7)",
                 16),
        "parallelism.decoder_first/last_pipeline_num_layers cannot be combined with "
        "account_for_embedding/loss_in_pipeline_split (Megatron)");
    // With interleaving each rank's (126 + 2) / 8 = 16 slots must divide among its chunks.
    EXPECT_EQ(
        error_of(R"(, "account_for_embedding_in_pipeline_split": true,
                         "account_for_loss_in_pipeline_split": true)",
                 8, 3),
        "model.num_layers=126 plus the 2 layer(s) accounted for the embedding and loss must be divisible "
        "by parallelism.pipeline_model_parallel_size=8 and each rank's share by "
        "parallelism.virtual_pipeline_model_parallel_size=3 (Megatron)");
}

TEST(MegatronPipelineSplit, WithInterleavingOnlyTheFirstAndLastVirtualStagesGiveUpASlot) {
    // 16 slots per rank, 2 per chunk (v = 8): virtual stage 0 builds 1 layer, stage 63 builds 1.
    const Scenario s = with(R"(, "account_for_embedding_in_pipeline_split": true,
                               "account_for_loss_in_pipeline_split": true)",
                            8, 8);
    std::vector<std::int64_t> chunks(64, 2);
    chunks.front() = 1;
    chunks.back() = 1;
    EXPECT_EQ(s.parallelism.layers_per_virtual_stage, chunks);
    EXPECT_EQ(s.pipeline_split(), (std::vector<std::int64_t>{15, 16, 16, 16, 16, 16, 16, 15}));
    EXPECT_EQ(s.chunk_num_layers(0, 0), 1);
    EXPECT_EQ(s.chunk_num_layers(0, 1), 2);
    EXPECT_EQ(s.chunk_num_layers(7, 7), 1);
    EXPECT_EQ(s.first_layer_of_virtual_stage(1), 1);
    EXPECT_EQ(s.first_layer_of_virtual_stage(63), 125);
}

}  // namespace
}  // namespace trainsim::config
