// Megatron's rank order (tensor innermost, then data, then pipeline) and which groups cross nodes.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "sim/parallel/layout.h"
#include "tests/test_support.h"

namespace trainsim::parallel {
namespace {

Layout layout(std::int64_t t, std::int64_t p, std::int64_t d, std::int64_t per_node) {
    config::Scenario sc;
    sc.parallelism.tensor_model_parallel_size = t;
    sc.parallelism.pipeline_model_parallel_size = p;
    sc.parallelism.data_parallel_size = d;
    sc.hardware.gpus_per_node = per_node;
    return Layout(sc);
}

TEST(Layout, RankOrderIsTensorThenDataThenPipeline) {
    const Layout l = layout(8, 35, 8, 8);  // MT-NLG on 2240 GPUs
    EXPECT_EQ(l.world_size(), 2240);
    EXPECT_EQ(l.global_rank({0, 0, 0}), 0);
    EXPECT_EQ(l.global_rank({7, 0, 0}), 7);
    EXPECT_EQ(l.global_rank({0, 1, 0}), 8);
    EXPECT_EQ(l.global_rank({0, 0, 1}), 64);
    EXPECT_EQ(l.global_rank({7, 7, 34}), 2239);
    for (std::int64_t r = 0; r < l.world_size(); r += 37) {
        EXPECT_EQ(l.global_rank(l.coordinates(r)), r);
    }
}

TEST(Layout, WhichGroupsCrossNodes) {
    const Layout l = layout(8, 35, 8, 8);
    const Coordinates c{3, 5, 17};
    EXPECT_EQ(l.tensor_group(c).nodes, 1);  // a node is one TP group: NVLink
    EXPECT_EQ(l.tensor_group(c).scope(), cost::Scope::IntraNode);
    EXPECT_EQ(l.data_group(c).size, 8);
    EXPECT_EQ(l.data_group(c).nodes, 8);  // one rank per node: 8 groups side by side on 8 rails
    EXPECT_EQ(l.pair(c, {3, 5, 18}).scope(), cost::Scope::InterNode);
    EXPECT_EQ(l.model_parallel_group(c).size, 280);
    EXPECT_EQ(l.model_parallel_group(c).nodes, 35);
    EXPECT_EQ(l.embedding_group(c).nodes, 2);

    const Layout small = layout(2, 4, 2, 8);  // 16 GPUs on 2 nodes: stages 0-1 on node 0
    EXPECT_EQ(small.data_group({0, 0, 0}).nodes, 1);
    EXPECT_EQ(small.pair({0, 0, 1}, {0, 0, 2}).scope(), cost::Scope::InterNode);
    EXPECT_EQ(small.pair({0, 0, 0}, {0, 0, 1}).scope(), cost::Scope::IntraNode);
}

// The group spans are closed forms; counting each member's node gives the same answers.
TEST(Layout, GroupSpansMatchCountingEveryMembersNode) {
    auto nodes_of = [](const Layout& l, auto&& members) {
        std::set<std::int64_t> nodes;
        members([&](const Coordinates& m) { nodes.insert(l.node_of(l.global_rank(m))); });
        return static_cast<std::int64_t>(nodes.size());
    };
    for (const std::int64_t t : {1, 2, 3, 4, 8}) {
        for (const std::int64_t p : {1, 2, 3, 5}) {
            for (const std::int64_t d : {1, 2, 3, 6, 16}) {
                for (const std::int64_t per_node : {1, 2, 3, 4, 8, 16}) {
                    const Layout l = layout(t, p, d, per_node);
                    for (std::int64_t rank = 0; rank < l.world_size(); ++rank) {
                        const Coordinates c = l.coordinates(rank);
                        const std::string at = "t" + std::to_string(t) + " p" + std::to_string(p) + " d" +
                                               std::to_string(d) + " g" + std::to_string(per_node) +
                                               " rank " + std::to_string(rank);
                        EXPECT_EQ(l.tensor_group(c).nodes, nodes_of(l,
                                                                    [&](auto&& add) {
                                                                        for (std::int64_t tp = 0; tp < t;
                                                                             ++tp) {
                                                                            add({tp, c.dp, c.pp});
                                                                        }
                                                                    }))
                            << at;
                        EXPECT_EQ(l.data_group(c).nodes, nodes_of(l,
                                                                  [&](auto&& add) {
                                                                      for (std::int64_t dp = 0; dp < d;
                                                                           ++dp) {
                                                                          add({c.tp, dp, c.pp});
                                                                      }
                                                                  }))
                            << at;
                        EXPECT_EQ(l.model_parallel_group(c).nodes,
                                  nodes_of(l,
                                           [&](auto&& add) {
                                               for (std::int64_t pp = 0; pp < p; ++pp) {
                                                   for (std::int64_t tp = 0; tp < t; ++tp) {
                                                       add({tp, c.dp, pp});
                                                   }
                                               }
                                           }))
                            << at;
                    }
                }
            }
        }
    }
}

}  // namespace
}  // namespace trainsim::parallel
