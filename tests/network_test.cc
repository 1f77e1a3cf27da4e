// The network as a graph (DESIGN.md §8 "Network"): topology and routes, NCCL's algorithm choice, and
// collectives as flows that share links, with exact times on hand-checkable clusters.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/engine/max_min_sharing.h"
#include "sim/engine/simulator.h"
#include "sim/network/collective_flows.h"
#include "sim/network/nccl_model.h"
#include "sim/network/topology.h"
#include "tests/test_support.h"

namespace trainsim::network {
namespace {

// Two DGX A100-like hosts: 8 GPUs, 8 NICs of 23.5 GB/s, NVLink 234.89 GB/s per GPU.
TopologySpec dgx(std::int64_t nodes_per_leaf = 20, double oversubscription = 1.0) {
    TopologySpec s;
    s.gpus_per_node = 8;
    s.nvlink_domain_gpus = 8;
    s.nics_per_node = 8;
    s.nodes_per_leaf = nodes_per_leaf;
    s.oversubscription = oversubscription;
    s.nvlink_GBps = 234.89;
    s.nic_GBps = 23.5;
    s.amd_host = true;
    return s;
}

std::vector<std::int64_t> ranks(std::int64_t first, std::int64_t count, std::int64_t stride = 1) {
    std::vector<std::int64_t> r;
    for (std::int64_t i = 0; i < count; ++i) {
        r.push_back(first + i * stride);
    }
    return r;
}

// The rate a flow gets alone on the network (max-min with itself), in GB/s.
double alone_rate_GBps(const NetworkFlow& f, const Topology& topo) {
    std::vector<double> capacity;
    for (LinkId l = 0; l < topo.num_links(); ++l) {
        capacity.push_back(topo.capacity_GBps(l));
    }
    std::vector<engine::FlowUse> uses;
    for (const auto& [l, w] : f.uses) {
        uses.push_back({engine::ResourceId{l}, w});
    }
    const std::vector<engine::SharedFlow> one{{f.max_rate_GBps, uses}};
    return engine::max_min_rates(one, capacity).front();
}

// The time a flow takes alone on the network: its latency, then its bytes at that rate.
double alone_seconds(const NetworkFlow& f, const Topology& topo) {
    return f.latency.value + f.amount_bytes / (alone_rate_GBps(f, topo) * 1e9);
}

TEST(Topology, RoutesStayOnNvlinkInsideANodeAndOnTheRailAcrossNodes) {
    const Topology topo(dgx(), 16);
    EXPECT_EQ(topo.route(0, 1).size(), 2U);  // GPU 0 → NVSwitch → GPU 1
    // GPU 3 → NIC 3 → leaf of rail 3 → NIC 3 of host 1 → GPU 11: rail-aligned, one leaf.
    const std::vector<LinkId>& r = topo.route(3, 11);
    ASSERT_EQ(r.size(), 4U);
    EXPECT_EQ(topo.link_name(r[1]), "nic 3 -> leaf 3");
    EXPECT_EQ(topo.link_name(r[2]), "leaf 3 -> nic 11");
    // Rails differ: up through the spine, in one scalable unit (the rails' leaves meet only there) as in
    // two units of one node each.
    ASSERT_EQ(topo.route(3, 12).size(), 6U);
    EXPECT_EQ(topo.link_name(topo.route(3, 12)[2]), "leaf 3 -> spine 0");
    const Topology split(dgx(1), 16);
    EXPECT_EQ(split.route(3, 12).size(), 6U);
    EXPECT_EQ(split.link_name(split.route(3, 12)[2]), "leaf 3 -> spine 0");
}

TEST(Topology, FewerNicsThanGpusShareThem) {
    TopologySpec s = dgx();
    s.nics_per_node = 4;  // 4 × 200 Gb/s per 8-GPU node
    const Topology topo(s, 16);
    EXPECT_EQ(topo.rail_of(0), 0);
    EXPECT_EQ(topo.rail_of(1), 0);
    EXPECT_EQ(topo.rail_of(7), 3);
    // GPUs 0 and 1 leave through the same NIC link.
    EXPECT_EQ(topo.route(0, 8)[1], topo.route(1, 9)[1]);
}

// nccl-tests' bus bandwidth of a ring all-reduce over two full DGX A100 hosts: 8 rails of 23.5 GB/s, so
// 188 GB/s (published: 192 GB/s, S-NCCL-812; the flow model is within 10 %).
TEST(CollectiveFlows, RingAllReduceOnTwoNodesGivesTheRailsBusBandwidth) {
    const Topology topo(dgx(), 16);
    const cost::CostModel cost = trainsim::testing::shipped_cost_model();
    const CollectiveFlows flows(topo, cost, GpuGeneration::Ampere);
    const std::vector<std::vector<std::int64_t>> group{ranks(0, 16)};
    const Bytes s{std::int64_t{1} << 30};
    const NetworkFlow f = flows.collective(cost::CollectiveKind::AllReduce, s, group);
    EXPECT_EQ(f.algorithm, Algorithm::Ring);
    EXPECT_EQ(f.protocol, Protocol::Simple);
    EXPECT_NEAR(alone_rate_GBps(f, topo), 188.0, 1e-9);
    // Exact time in the engine: amount 2·15/16·2^30 at 188 GB/s, then NCCL's Simple ring latency for
    // 2 AMD hosts: (8.4 + 28·max(3.4, 3·2.0) + 2·14.0) · 1.4 = 286.16 µs.
    engine::Program p;
    for (LinkId l = 0; l < topo.num_links(); ++l) {
        (void)p.add_resource(topo.capacity_GBps(l) * 1e9);
    }
    engine::FlowSpec spec{f.amount_bytes, f.max_rate_GBps * 1e9, to_sim_time(f.latency), {}};
    for (const auto& [l, w] : f.uses) {
        spec.uses.push_back({engine::ResourceId{l}, w});
    }
    const engine::RendezvousId rv = p.add_flow_rendezvous(1, p.add_flow_spec(spec), "ar");
    const engine::TaskId t = p.add_rendezvous_task(p.add_stream(engine::GpuId{0}, "dp"), rv, "ar");
    const engine::RunResult run = engine::simulate(p);
    const double amount = 2.0 * 15.0 / 16.0 * static_cast<double>(s.value);
    EXPECT_NEAR(f.latency.value, 286.16e-6, 1e-10);
    EXPECT_EQ(run.timings[t.index()].end, to_sim_time(Seconds{amount / 188e9}) + 286160_ns);
    const double busbw = amount / to_seconds(run.timings[t.index()].end).value / 1e9;
    EXPECT_NEAR(busbw / 192.0, 1.0, 0.10);
}

// Leaves of one node each and a 4:1 oversubscribed leaf tier: every rail's uplink carries a quarter of
// the NIC rate, so the cross-leaf ring's bandwidth part takes exactly 4× as long.
TEST(CollectiveFlows, AnOversubscribedUplinkSlowsACrossLeafAllReduceByTheRatio) {
    const cost::CostModel cost = trainsim::testing::shipped_cost_model();
    const std::vector<std::vector<std::int64_t>> group{ranks(0, 16)};
    const Bytes s{std::int64_t{1} << 30};
    const Topology flat(dgx(1, 1.0), 16), thin(dgx(1, 4.0), 16);
    const NetworkFlow a = CollectiveFlows(flat, cost, GpuGeneration::Ampere)
                              .collective(cost::CollectiveKind::AllReduce, s, group);
    const NetworkFlow b = CollectiveFlows(thin, cost, GpuGeneration::Ampere)
                              .collective(cost::CollectiveKind::AllReduce, s, group);
    EXPECT_NEAR(alone_rate_GBps(a, flat) / alone_rate_GBps(b, thin), 4.0, 1e-12);
}

// NCCL's model on 4 DGX A100 hosts (32 ranks, 8 channels of 23.5 GB/s, AMD hosts), all-reduce, by hand
// from tuning.cc: tree LL128 latency 14.0 + 2·(7·1.25 + 2·8.5) = 65.5 µs at algbw
// 0.5·min(0.92·188, 8·17.8)·(120/128 cap 8·20 → min(…)) = 60.075 GB/s with the 16-32 MB tree correction
// 0.9; ring LL128 latency 14.0 + 6·4.0 + 56·max(1.9, 2.0) = 150 µs at busbw min(0.92·188, 8·20) = 160 →
// algbw 160·32/62 = 82.58 GB/s. They cross where 65.5 + S/60.075e3 = 150 + S/82.58e3 µs: S ≈ 18.6 MB.
TEST(NcclModel, TreeRingCrossoverWhereNcclsModelPutsIt) {
    const Communicator comm{32, 4, 8, 23.5, GpuGeneration::Ampere, true};
    const AlgorithmChoice tree = nccl_estimate(cost::CollectiveKind::AllReduce, comm, Algorithm::Tree,
                                               Protocol::LL128, Bytes{20'000'000});
    const AlgorithmChoice ring = nccl_estimate(cost::CollectiveKind::AllReduce, comm, Algorithm::Ring,
                                               Protocol::LL128, Bytes{20'000'000});
    EXPECT_NEAR(tree.latency_us, 65.5, 1e-9);
    EXPECT_NEAR(tree.algbw_GBps, 60.075, 1e-9);
    EXPECT_NEAR(ring.latency_us, 150.0, 1e-9);
    EXPECT_NEAR(ring.algbw_GBps, 160.0 * 32.0 / 62.0, 1e-9);
    const double crossover = (150.0 - 65.5) / (1.0 / 60.075 - 1.0 / (160.0 * 32.0 / 62.0)) * 1e3;
    EXPECT_NEAR(crossover, 18.62e6, 0.01e6);
    const auto below = nccl_choose(cost::CollectiveKind::AllReduce, comm,
                                   Bytes{static_cast<std::int64_t>(crossover * 0.99)});
    const auto above = nccl_choose(cost::CollectiveKind::AllReduce, comm,
                                   Bytes{static_cast<std::int64_t>(crossover * 1.01)});
    EXPECT_EQ(below.algorithm, Algorithm::Tree);
    EXPECT_EQ(above.algorithm, Algorithm::Ring);
    // Small messages take the tree's log latency: 32 nodes of 8 A100 (measured 62-71 µs, S-NCCL-652;
    // that cluster has Intel hosts and 4 NICs): 6.8 + 2·(7·0.6 + 5·5.0) = 65.2 µs.
    const Communicator big{256, 32, 4, 23.5, GpuGeneration::Ampere, false};
    const auto small = nccl_choose(cost::CollectiveKind::AllReduce, big, Bytes{8});
    EXPECT_EQ(small.algorithm, Algorithm::Tree);
    EXPECT_NEAR(small.latency_us, 65.2, 1e-9);
}

// NCCL's NVLS graph on one DGX H100 (search.cc): 8 channels, one per GPU; each GPU carries 8 + 1 channel
// rates over its 18 × 20.6 = 370.8 GB/s of NVLink, so bwIntra is the fastest sm90 step within 41.2:
// 40; bwInter is raised from there while below 2 × 40: 50, then 60 (the fastest step). Across 2 nodes
// with 8 NICs of 48 GB/s (NDR): 8 channels, bwInter 48. A100 (no NVLink SHARP) and a switch without it
// get no graph.
TEST(NcclModel, NvlsGraphAsNcclsSearchFindsIt) {
    const NvlsGraph one = nvls_graph(GpuGeneration::Hopper, true, 8, 1, 8, 370.8, 48.0);
    EXPECT_EQ(one.channels, 8);
    EXPECT_EQ(one.bw_intra_GBps, 40.0);
    EXPECT_EQ(one.bw_inter_GBps, 60.0);
    const NvlsGraph two = nvls_graph(GpuGeneration::Hopper, true, 8, 2, 8, 370.8, 48.0);
    EXPECT_EQ(two.channels, 8);
    EXPECT_EQ(two.bw_intra_GBps, 40.0);
    EXPECT_EQ(two.bw_inter_GBps, 48.0);
    EXPECT_EQ(nvls_graph(GpuGeneration::Ampere, true, 8, 1, 8, 240.0, 23.5).channels, 0);
    EXPECT_EQ(nvls_graph(GpuGeneration::Hopper, false, 8, 1, 8, 370.8, 48.0).channels, 0);
}

// One DGX H100 node (Intel hosts), all-reduce. NVLS by hand from tuning.cc: per channel
// min(40 · 0.85 · 7/8 · 2, 60) = 59.5 GB/s, busbw 8 · 59.5 = 476, algbw 476 · 8/14 = 272 GB/s, latency
// the NVLink NVLS row, 25 µs. Against a hand-made ring graph of 8 channels at 40 GB/s, the ring LL is
// min(141, 160) = 141 busbw → algbw 141 · 8/14 = 80.571 at 6.6 + 14 · 0.6 = 15.0 µs. They cross where
// 15.0 + S/80.571e3 = 25 + S/272e3 µs: S = 1.1449 MB; no other pair is faster there.
TEST(NcclModel, NvlsRingCrossoverOnOneH100Node) {
    Communicator comm{8, 1, 8, 40.0, GpuGeneration::Hopper, false};
    const NvlsGraph g = nvls_graph(GpuGeneration::Hopper, true, 8, 1, 8, 370.8, 48.0);
    comm.nvls_channels = g.channels;
    comm.nvls_bw_intra_GBps = g.bw_intra_GBps;
    comm.nvls_bw_inter_GBps = g.bw_inter_GBps;
    const Bytes mb{1 << 20};
    const AlgorithmChoice nvls =
        nccl_estimate(cost::CollectiveKind::AllReduce, comm, Algorithm::Nvls, Protocol::Simple, mb);
    const AlgorithmChoice ring =
        nccl_estimate(cost::CollectiveKind::AllReduce, comm, Algorithm::Ring, Protocol::LL, mb);
    EXPECT_NEAR(nvls.latency_us, 25.0, 1e-9);
    EXPECT_NEAR(nvls.algbw_GBps, 476.0 * 8.0 / 14.0, 1e-4);  // NCCL computes in float
    EXPECT_NEAR(ring.latency_us, 15.0, 1e-9);
    EXPECT_NEAR(ring.algbw_GBps, 141.0 * 8.0 / 14.0, 1e-9);
    // NVLS runs Simple only, and not as a tree on one node.
    EXPECT_EQ(
        nccl_estimate(cost::CollectiveKind::AllReduce, comm, Algorithm::Nvls, Protocol::LL, mb).algbw_GBps,
        0.0);
    EXPECT_EQ(nccl_estimate(cost::CollectiveKind::AllReduce, comm, Algorithm::NvlsTree, Protocol::Simple, mb)
                  .algbw_GBps,
              0.0);
    const double crossover = (25.0 - 15.0) / (1.0 / ring.algbw_GBps - 1.0 / nvls.algbw_GBps) * 1e3;
    EXPECT_NEAR(crossover, 1.1449e6, 0.0001e6);
    const auto below = nccl_choose(cost::CollectiveKind::AllReduce, comm,
                                   Bytes{static_cast<std::int64_t>(crossover * 0.99)});
    const auto above = nccl_choose(cost::CollectiveKind::AllReduce, comm,
                                   Bytes{static_cast<std::int64_t>(crossover * 1.01)});
    EXPECT_EQ(below.algorithm, Algorithm::Ring);
    EXPECT_EQ(below.protocol, Protocol::LL);
    EXPECT_EQ(above.algorithm, Algorithm::Nvls);
    // The same node without NVLink SHARP never picks NVLS.
    comm.nvls_channels = 0;
    EXPECT_NE(nccl_choose(cost::CollectiveKind::AllReduce, comm, Bytes{std::int64_t{1} << 30}).algorithm,
              Algorithm::Nvls);
}

// The busbw NCCL's NVLS model gives an 8-GPU H100 all-reduce against published nccl-tests numbers
// (hardware.md §5.5): Azure ND H100 v5 (S-AZURE) 466.35 GB/s at 1 GiB and 478.87 at 8 GiB; S-NCCLT-212
// "~480GB/s". Tolerance 10 % (the issue's); the model is within 1.5 % here.
TEST(NcclModel, NvlsBusBandwidthMatchesPublishedH100AllReduce) {
    Communicator comm{8, 1, 8, 40.0, GpuGeneration::Hopper, false};
    const NvlsGraph g = nvls_graph(GpuGeneration::Hopper, true, 8, 1, 8, 370.8, 48.0);
    comm.nvls_channels = g.channels;
    comm.nvls_bw_intra_GBps = g.bw_intra_GBps;
    comm.nvls_bw_inter_GBps = g.bw_inter_GBps;
    for (const auto& [log2_bytes, published] : {std::pair{30, 466.35}, std::pair{33, 478.87}}) {
        const Bytes s{std::int64_t{1} << log2_bytes};
        const AlgorithmChoice c = nccl_choose(cost::CollectiveKind::AllReduce, comm, s);
        EXPECT_EQ(c.algorithm, Algorithm::Nvls);
        const double busbw = 2.0 * 7.0 / 8.0 * static_cast<double>(s.value) / c.time(s).value / 1e9;
        EXPECT_NEAR(busbw / published, 1.0, 0.10) << log2_bytes;
    }
}

// Two DGX H100 nodes (8 NICs of 48 GB/s): NVLS tree per channel min(59.5, 2 · 48, perChMaxNVLSTreeBw
// 57.7) = 57.7, busbw 461.6 → algbw 461.6 · 16/30 = 246.19 GB/s at 25 + 2 · 1 · 20.9 = 66.8 µs; NVLS
// across nodes needs SHARP in the IB switches (CollNet) and then takes min(59.5, 48) · 8 = 384 → 204.8
// GB/s at 25 + 18 = 43 µs.
TEST(NcclModel, NvlsTreeAcrossNodesAndNvlsOnlyWithSharp) {
    Communicator comm{16, 2, 8, 48.0, GpuGeneration::Hopper, false};
    const NvlsGraph g = nvls_graph(GpuGeneration::Hopper, true, 8, 2, 8, 370.8, 48.0);
    comm.nvls_channels = g.channels;
    comm.nvls_bw_intra_GBps = g.bw_intra_GBps;
    comm.nvls_bw_inter_GBps = g.bw_inter_GBps;
    const Bytes s{std::int64_t{1} << 30};
    const AlgorithmChoice tree =
        nccl_estimate(cost::CollectiveKind::AllReduce, comm, Algorithm::NvlsTree, Protocol::Simple, s);
    EXPECT_NEAR(tree.latency_us, 66.8, 1e-9);
    EXPECT_NEAR(tree.algbw_GBps, 57.7 * 8.0 * 16.0 / 30.0, 1e-9);
    EXPECT_EQ(
        nccl_estimate(cost::CollectiveKind::AllReduce, comm, Algorithm::Nvls, Protocol::Simple, s).algbw_GBps,
        0.0);
    EXPECT_EQ(nccl_choose(cost::CollectiveKind::AllReduce, comm, s).algorithm, Algorithm::NvlsTree);
    comm.collnet = true;
    const AlgorithmChoice sharp =
        nccl_estimate(cost::CollectiveKind::AllReduce, comm, Algorithm::Nvls, Protocol::Simple, s);
    EXPECT_NEAR(sharp.latency_us, 43.0, 1e-9);
    EXPECT_NEAR(sharp.algbw_GBps, 384.0 * 16.0 / 30.0, 1e-9);
}

// Published multi-node nccl-tests all-reduce bus bandwidths in the A100 profile's sources, reproduced by
// the flow model alone on the network, within 10 %.
TEST(CollectiveFlows, ReproducesPublishedMultiNodeAllReduceBusBandwidth) {
    const cost::CostModel cost = trainsim::testing::shipped_cost_model();
    struct Case {
        const char* source;
        std::int64_t nodes, nics;
        double busbw_GBps;
    };
    for (const Case& c :
         {Case{"S-NCCL-812: 2 DGX A100, 8 HDR", 2, 8, 192.0}, Case{"S-NCCL-1048: 2 nodes, 4 HDR", 2, 4, 86.0},
          Case{"S-NCCL-1048: 2 nodes through one HCA each", 2, 1, 24.0},
          Case{"S-NCCLT-100: HGX A100, 4 CX-6, 2 nodes", 2, 4, 91.0},
          Case{"S-NCCLT-119: 3 nodes A100-40GB, 4 HDR, peak", 3, 4, 96.0}}) {
        SCOPED_TRACE(c.source);
        TopologySpec s = dgx();
        s.nics_per_node = c.nics;
        const Topology topo(s, 8 * c.nodes);
        const CollectiveFlows flows(topo, cost, GpuGeneration::Ampere);
        const std::vector<std::vector<std::int64_t>> group{ranks(0, 8 * c.nodes)};
        const Bytes bytes{std::int64_t{8} << 30};  // nccl-tests' largest sizes, where busbw is quoted
        const NetworkFlow f = flows.collective(cost::CollectiveKind::AllReduce, bytes, group);
        const double seconds = alone_seconds(f, topo);
        const double n = 8.0 * static_cast<double>(c.nodes);
        const double busbw = 2.0 * (n - 1.0) / n * static_cast<double>(bytes.value) / seconds / 1e9;
        EXPECT_NEAR(busbw / c.busbw_GBps, 1.0, 0.10) << busbw;
    }
}

// Published small-message all-reduce times (8-128 B) through the flow model on the topology, alone on the
// network. 32 nodes of 8 A100 with 4 HDR NICs and Intel hosts (S-NCCL-652, measured 62-71 µs): NCCL's
// tree LL, 6.8 + 2·(7·0.6 + 5·5.0) = 65.2 µs plus 128 B at its algbw, inside the measured range.
// 2 nodes of 1 A100 with one HDR NIC each (S-NCCLT-150, measured 19-20 µs): the ring LL's 6.6 + 2·5.0 =
// 16.6 µs (with one rank per node NCCL takes the tree's network latency), 15 % fast. Below 1 MiB the
// tolerance is 20 %: NCCL's latencies are its defaults for any InfiniBand cluster, not this one's.
TEST(CollectiveFlows, ReproducesPublishedSmallMessageAllReduceTimes) {
    const cost::CostModel cost = trainsim::testing::shipped_cost_model();
    TopologySpec intel = dgx();
    intel.amd_host = false;
    intel.nics_per_node = 4;
    const Topology big(intel, 256);
    const std::vector<std::vector<std::int64_t>> all{ranks(0, 256)};
    for (const std::int64_t bytes : {8, 128}) {
        const NetworkFlow f = CollectiveFlows(big, cost, GpuGeneration::Ampere)
                                  .collective(cost::CollectiveKind::AllReduce, Bytes{bytes}, all);
        EXPECT_EQ(f.algorithm, Algorithm::Tree);
        EXPECT_EQ(f.protocol, Protocol::LL);
        EXPECT_NEAR(f.latency.value, 65.2e-6, 1e-12);
        EXPECT_GE(alone_seconds(f, big), 62e-6) << bytes;
        EXPECT_LE(alone_seconds(f, big), 71e-6) << bytes;
    }
    const Topology two(dgx(), 16);
    const std::vector<std::vector<std::int64_t>> pair{{0, 8}};
    for (const std::int64_t bytes : {8, 128}) {
        const NetworkFlow f = CollectiveFlows(two, cost, GpuGeneration::Ampere)
                                  .collective(cost::CollectiveKind::AllReduce, Bytes{bytes}, pair);
        EXPECT_EQ(f.algorithm, Algorithm::Ring);
        EXPECT_NEAR(f.latency.value, 16.6e-6, 1e-12);
        EXPECT_NEAR(alone_seconds(f, two) / 19.5e-6, 1.0, 0.20) << bytes;
    }
}

}  // namespace
}  // namespace trainsim::network

namespace trainsim {
namespace {

// End to end through the scenario: a 4:1 oversubscribed leaf tier slows a data-parallel-heavy layout
// (22B, TP 8 × DP 4 on 4 nodes, one node per leaf, so the gradient all-reduce crosses the spine) and
// leaves a TP-only one (the same model on one node) exactly as it was.
TEST(NetworkModel, OversubscriptionSlowsDataParallelNotTensorParallelOnly) {
    const auto time_of = [](const std::string& extra) {
        const auto r = trainsim::testing::run_trainsim(
            "run " + trainsim::testing::source_path("scenarios/korthikanti-22b.json") +
            " --format json --set hardware.network_model=flow --set hardware.topology.nodes_per_leaf=1 " +
            extra);
        EXPECT_EQ(r.status, 0) << r.err;
        const auto at = r.out.find("\"iteration_time_s\": ");
        return std::stod(r.out.substr(at + 20));
    };
    const std::string dp = "--set parallelism.data_parallel_size=4 --set training.global_batch_size=16 ";
    const double dp_flat = time_of(dp);
    const double dp_thin = time_of(dp + "--set hardware.topology.oversubscription=4");
    const double tp_flat = time_of("");
    const double tp_thin = time_of("--set hardware.topology.oversubscription=4");
    EXPECT_GT(dp_thin, dp_flat * 1.01);
    EXPECT_EQ(tp_thin, tp_flat);
}

// End to end: on 2 DGX H100 nodes (gpt3-5b at DP 16, the gradient all-reduce at the end of the step, not
// sharded nor overlapped) NVLS tree (per channel min(59.5, 2 · 48, 57.7)) beats the ring's 48.5 per NIC,
// so hardware.topology.nvls=false is slower (on 8 nodes the NVLS-tree cap of 45.5 loses to the ring, as
// NCCL's model says); a non-boolean is an error naming the key.
TEST(NetworkModel, NvlsKeyChangesAnH100MultiNodeRun) {
    const auto time_of = [](const std::string& extra) {
        const auto r = trainsim::testing::run_trainsim(
            "run " + trainsim::testing::source_path("scenarios/nemo/gpt3-5b-64gpu-fp8.json") +
            " --format json --set hardware.network_model=flow --set training.use_distributed_optimizer=false"
            " --set training.fp32_embedding_grads=false"
            " --set training.overlap_grad_reduce=false --set training.ddp_bucket_size=null"
            " --set training.overlap_param_gather=false --set parallelism.data_parallel_size=16"
            " --set training.global_batch_size=512 " +
            extra);
        EXPECT_EQ(r.status, 0) << r.err;
        const auto at = r.out.find("\"iteration_time_s\": ");
        return std::stod(r.out.substr(at + 20));
    };
    const double with = time_of("");
    const double without = time_of("--set hardware.topology.nvls=false");
    EXPECT_LT(with, without);
    const auto bad = trainsim::testing::run_trainsim(
        "run " + trainsim::testing::source_path("scenarios/nemo/gpt3-5b-64gpu-fp8.json") +
        " --set hardware.network_model=flow --set hardware.topology.nvls=3");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("hardware.topology.nvls"), std::string::npos) << bad.err;
}

// Llama 2 13B on two H100 nodes, PP 4 × DP 4: stage 1 (GPUs 4-7) sends to stage 2 (GPUs 8-11) across
// rails (GPU 7 to GPU 11 is rail 7 to rail 3), which crosses the spine of the one scalable unit. It used to
// stop with an internal error ("no path between two leaves").
TEST(NetworkModel, PipelineSendsAcrossRailsRunOnTheFlowModel) {
    const auto r = trainsim::testing::run_trainsim(
        "run " + trainsim::testing::source_path("scenarios/nemo/llama2-13b-16gpu-fp8.json") +
        " --set hardware.network_model=flow --set training.global_batch_size=16");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("iteration time"), std::string::npos);
}

TEST(NetworkModel, ATopologyWithoutTheFlowModelIsAnError) {
    const auto r = trainsim::testing::run_trainsim(
        "run " + trainsim::testing::source_path("scenarios/korthikanti-22b.json") +
        " --set hardware.topology.oversubscription=4");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("hardware.topology: applies only with hardware.network_model=flow"),
              std::string::npos)
        << r.err;
    const auto typo = trainsim::testing::run_trainsim(
        "run " + trainsim::testing::source_path("scenarios/korthikanti-22b.json") +
        " --set hardware.network_model=flow --set hardware.topology.oversubscriptoin=4");
    EXPECT_EQ(typo.status, 2);
    EXPECT_NE(typo.err.find("did you mean hardware.topology.oversubscription?"), std::string::npos)
        << typo.err;
    const auto preset = trainsim::testing::run_trainsim(
        "run " + trainsim::testing::source_path("scenarios/korthikanti-22b.json") +
        " --set hardware.network_model=flow --set hardware.topology.preset=dgx-a100-superpd");
    EXPECT_EQ(preset.status, 2);
    EXPECT_NE(preset.err.find("did you mean dgx-a100-superpod?"), std::string::npos) << preset.err;
}

}  // namespace
}  // namespace trainsim
