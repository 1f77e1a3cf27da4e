// Megatron-Core's expert rank order (etp innermost, then ep, then expert dp, then pp) and which expert
// groups cross nodes, against hand-listed groups.
#include <gtest/gtest.h>

#include <vector>

#include "sim/parallel/expert_layout.h"

namespace trainsim::parallel {
namespace {

config::Scenario scenario(std::int64_t t, std::int64_t c, std::int64_t d, std::int64_t p, std::int64_t ep,
                          std::int64_t etp, std::int64_t per_node) {
    config::Scenario sc;
    sc.parallelism.tensor_model_parallel_size = t;
    sc.parallelism.context_parallel_size = c;
    sc.parallelism.data_parallel_size = d;
    sc.parallelism.pipeline_model_parallel_size = p;
    sc.parallelism.expert_model_parallel_size = ep;
    sc.parallelism.expert_tensor_parallel_size = etp;
    sc.hardware.gpus_per_node = per_node;
    return sc;
}

TEST(ExpertLayout, RanksRegroupEachStageAsEtpThenEpThenExpertDp) {
    // t 2, d 4, p 2 on 4-GPU nodes: 8 ranks a stage. ETP 1 × EP 4 leaves expert DP 2: the EP groups of
    // stage 0 are {0,1,2,3} and {4,5,6,7}, the expert-DP groups {0,4}, {1,5}, ...; stage 1 starts at 8.
    const config::Scenario sc = scenario(2, 1, 4, 2, 4, 1, 4);
    const ExpertLayout l(sc);
    EXPECT_EQ(l.expert_data_size(), 2);
    EXPECT_EQ(l.coordinates(5), (ExpertCoordinates{0, 1, 1, 0}));
    EXPECT_EQ(l.coordinates(13), (ExpertCoordinates{0, 1, 1, 1}));
    EXPECT_EQ(l.global_rank({0, 3, 1, 1}), 15);
    EXPECT_EQ(l.expert_parallel_group(5), (GroupSpan{4, 1}));  // {4..7}: one node
    EXPECT_EQ(l.expert_data_group(5), (GroupSpan{2, 2}));      // {1, 5}: two nodes
    // The pipeline coordinate is the dense layout's, as Megatron asserts.
    const Layout dense(sc);
    for (std::int64_t r = 0; r < dense.world_size(); ++r) {
        EXPECT_EQ(l.coordinates(r).pp, dense.coordinates(r).pp) << r;
        EXPECT_EQ(l.global_rank(l.coordinates(r)), r);
    }
}

TEST(ExpertLayout, ExpertTensorParallelStridesTheExpertGroup) {
    // ETP 2 × EP 4 = t 2 × d 4: expert DP 1; the EP group of rank 0 is {0, 2, 4, 6}, two 4-GPU nodes.
    const ExpertLayout l(scenario(2, 1, 4, 1, 4, 2, 4));
    EXPECT_EQ(l.expert_data_size(), 1);
    EXPECT_EQ(l.expert_parallel_group(0), (GroupSpan{4, 2}));
    EXPECT_EQ(l.expert_parallel_group(3), (GroupSpan{4, 2}));  // {1, 3, 5, 7}
    EXPECT_EQ(l.expert_data_group(3), (GroupSpan{1, 1}));
}

TEST(ExpertLayout, ExpertTensorAndTpEpGroupsAreConsecutiveRanks) {
    // ETP 2 × EP 2 × EDP 2 = t 2 × d 4 on 2-GPU nodes: the expert-TP pairs {0,1}, {2,3}, ... inside a node,
    // the tp_ep groups {0..3} and {4..7} across two, the EP group of rank 5 {5, 7}, its expert-DP {1, 5}.
    const ExpertLayout l(scenario(2, 1, 4, 1, 2, 2, 2));
    EXPECT_EQ(l.expert_tensor_group(5), (GroupSpan{2, 1}));
    EXPECT_EQ(l.expert_tensor_and_model_group(5), (GroupSpan{4, 2}));
    EXPECT_EQ(l.members(ExpertLayout::Group::ExpertTensor, 5), (std::vector<std::int64_t>{4, 5}));
    EXPECT_EQ(l.members(ExpertLayout::Group::ExpertTensorAndModel, 5),
              (std::vector<std::int64_t>{4, 5, 6, 7}));
    EXPECT_EQ(l.members(ExpertLayout::Group::ExpertParallel, 5), (std::vector<std::int64_t>{5, 7}));
    EXPECT_EQ(l.members(ExpertLayout::Group::ExpertData, 5), (std::vector<std::int64_t>{1, 5}));
    // At ETP 1 the tp_ep group is the EP group.
    const ExpertLayout one(scenario(2, 1, 4, 1, 4, 1, 4));
    EXPECT_EQ(one.expert_tensor_group(6), (GroupSpan{1, 1}));
    EXPECT_EQ(one.expert_tensor_and_model_group(6), one.expert_parallel_group(6));
    EXPECT_EQ(one.members(ExpertLayout::Group::ExpertTensorAndModel, 6),
              one.members(ExpertLayout::Group::ExpertParallel, 6));
}

TEST(ExpertLayout, DeepSeekV3OnGb200UsesThePipelineStagesRanks) {
    // modern_runs.md's GB200 row: TP 1, PP 4, EP 64 on 256 GPUs (d 64), so EP is a whole stage's 64
    // ranks and expert DP is 1. Counting a 72-GPU NVLink domain as one node, stage 0 (ranks 0..63)
    // fits one domain and stage 1 (64..127) straddles the first two.
    const ExpertLayout l(scenario(1, 1, 64, 4, 64, 1, 72));
    EXPECT_EQ(l.expert_data_size(), 1);
    EXPECT_EQ(l.expert_parallel_group(0), (GroupSpan{64, 1}));
    EXPECT_EQ(l.expert_parallel_group(64), (GroupSpan{64, 2}));  // ranks 64..127 straddle 72
}

}  // namespace
}  // namespace trainsim::parallel
