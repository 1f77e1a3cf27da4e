// Context and expert parallelism under the flow network model (hardware.network_model=flow, DESIGN.md §8
// "Network"): the context-parallel ring's send/recv steps, its all-gather and all-to-all variants, and
// the expert dispatch/combine all-to-all and expert-data-parallel reduction as flows on the topology,
// with exact times on hand-checkable clusters and the shipped scenarios against the analytical model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <string>

#include "sim/engine/simulator.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/network/collective_flows.h"
#include "sim/network/topology.h"
#include "sim/program/iteration_program.h"
#include "tests/support/layer_op_spans.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

// Llama 3 8B (32 query heads, 8 key/value heads of 128), two layers, on the A100 profile (NVLink
// point-to-point 195.1 GB/s and 7.2 µs; one HDR NIC per GPU, 23.5 GB/s and 9.3 µs).
std::string cp_scenario(std::int64_t cp, std::int64_t seq, std::int64_t gpus_per_node,
                        const std::string& extra_parallelism = "") {
    return R"({"model": {"preset": "llama3-8b", "num_layers": 2, "seq_length": )" + std::to_string(seq) +
           R"(},
        "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1,
                        "context_parallel_size": )" +
           std::to_string(cp) + extra_parallelism + R"(},
        "training": {"micro_batch_size": 1, "global_batch_size": 2, "attention_backend": "flash"},
        "hardware": {"profile": "a100-80gb-selene", "network_model": "flow", "gpus_per_node": )" +
           std::to_string(gpus_per_node) + "}}";
}

// Scenario `text` (one GPU a node) with each node its own leaf behind a 4:1 oversubscribed spine: a
// one-NIC leaf's uplink carries 23.5 / 4 = 5.875 GB/s.
std::string behind_oversubscribed_spine(std::string text) {
    text.insert(text.rfind("}}"), R"(, "topology": {"nodes_per_leaf": 1, "oversubscription": 4})");
    return text;
}

// The flow model's network report of scenario `text`.
report::NetworkReport network_report(const std::string& text) {
    return experiment::simulate_scenario(config::parse_scenario(text, "test"), testing::shipped_cost_model())
        .report.network;
}

SimTime length(const program::OpSpan& s) {
    return s.end - s.start;
}

std::map<std::string, program::OpSpan> forward_spans(const std::string& text) {
    const config::Scenario sc = config::parse_scenario(text, "test");
    const program::IterationProgram prog = program::build_iteration(sc, testing::shipped_cost_model());
    const engine::RunResult run = program::simulate(prog);
    return testing::layer_zero_spans(prog, run, program::Phase::Forward);
}

// Each CP rank's keys and values for s/c tokens: 2 · (s/c) · 8 heads · 128 · 2 bytes.
constexpr std::int64_t kv_bytes(std::int64_t seq, std::int64_t cp) {
    return 2 * (seq / cp) * 8 * 128 * 2;
}

// Expects each of the forward's CP ring `steps` of scenario `text` to take `bytes` at `rate_Bps` plus
// `latency_s` (to 2 ns).
void expect_ring_steps(const std::string& text, double bytes, double rate_Bps, double latency_s,
                       std::initializer_list<const char*> steps = {"attn.cp_kv_exchange.1"}) {
    const auto spans = forward_spans(text);
    const SimTime expected = to_sim_time(Seconds{bytes / rate_Bps}) + to_sim_time(Seconds{latency_s});
    for (const char* step : steps) {
        SCOPED_TRACE(step);
        EXPECT_NEAR(static_cast<double>(length(spans.at(step)).ns()), static_cast<double>(expected.ns()),
                    2.0);
    }
}

// CP 2 on nodes of one GPU: rank 0 sends its K/V block to rank 1 and rank 1 to rank 0 at once, each
// through its own NIC (one direction of each full-duplex link), so the step takes one NIC's transfer:
// 32 MiB / 23.5 GB/s = 1427.85 µs, then the NIC send latency 9.3 µs.
TEST(FlowContextParallel, RingStepAcrossTwoNodesTakesTheBytesOverOneNicPlusLatency) {
    const std::int64_t seq = 16384;
    const double bytes = static_cast<double>(kv_bytes(seq, 2));
    ASSERT_EQ(bytes, 33554432.0);
    expect_ring_steps(cp_scenario(2, seq, 1), bytes, 23.5e9, 9.3e-6);
}

// The same step when each node is its own scalable unit behind a 4:1 oversubscribed leaf: both hops go
// up through the spine, whose uplink from a one-NIC leaf carries 23.5 / 4 = 5.875 GB/s, so the step's
// bandwidth part takes exactly 4× as long: 32 MiB / 5.875 GB/s = 5711.39 µs, + 9.3 µs. (The analytical
// model has no fabric: there the step stays 1437.15 µs.)
TEST(FlowContextParallel, AnOversubscribedSpineSlowsACrossNodeRingStepByTheRatio) {
    const std::int64_t seq = 16384;
    const std::string text = behind_oversubscribed_spine(cp_scenario(2, seq, 1));
    expect_ring_steps(text, static_cast<double>(kv_bytes(seq, 2)), 23.5e9 / 4.0, 9.3e-6);
}

// The network report gives that ring's lost time its own line: each of the 16 exchanges a GPU takes
// part in (2 layers × 2 micro-batches × the forward's one and the backward's K/V and two dK/dV steps) runs
// at the spine's 5.875 GB/s instead of its NIC's 23.5 GB/s, at least 5711.39 − 1427.85 = 4283.54 µs more
// than alone, and none of it lands in TP's or EP's line.
TEST(FlowContextParallel, RingContentionHasItsOwnLineInTheNetworkReport) {
    const report::NetworkReport n = network_report(behind_oversubscribed_spine(cp_scenario(2, 16384, 1)));
    const double per_exchange = 33554432.0 / 5.875e9 - 33554432.0 / 23.5e9;
    EXPECT_GE(n.contention_cp.value, 16 * per_exchange * (1 - 1e-9));
    EXPECT_EQ(n.contention_tp.value, 0.0);
    EXPECT_EQ(n.contention_ep.value, 0.0);
}

// Inside a node the same step runs over NVLink at the profile's point-to-point rate (the NVSwitch ports'
// 234.89 GB/s do not bind): 32 MiB / 195.1 GB/s = 171.98 µs + 7.2 µs.
TEST(FlowContextParallel, RingStepInsideANodeTakesTheBytesOverNvlinkPlusLatency) {
    const std::int64_t seq = 16384;
    expect_ring_steps(cp_scenario(2, seq, 8), static_cast<double>(kv_bytes(seq, 2)), 195.1e9, 7.2e-6);
}

// A ring of 4 over nodes of 2 GPUs: two hops cross nodes (1 → 2 and 3 → 0), so the whole step runs at
// the NIC's rate, the worst hop, as the analytical model prices it (Layout::context_ring_hop).
TEST(FlowContextParallel, RingStepWaitsForItsSlowestHop) {
    const std::int64_t seq = 16384;
    expect_ring_steps(cp_scenario(4, seq, 2), static_cast<double>(kv_bytes(seq, 4)), 23.5e9, 9.3e-6,
                      {"attn.cp_kv_exchange.1", "attn.cp_kv_exchange.2", "attn.cp_kv_exchange.3"});
}

// The forward ring sends to the next rank, the backward (Transformer Engine's
// AttnFuncWithCPAndKVP2P.backward) to the previous one. On two rail-optimised DGX hosts the ring
// 0 → 9 → 10 → 0 crosses the spine down to rail 1's leaf (0 → 9); its reverse 0 → 10 → 9 → 0 goes down to
// rail 2's leaf instead.
TEST(FlowContextParallel, BackwardRingRunsTheOtherWay) {
    network::TopologySpec spec;
    spec.gpus_per_node = 8;
    spec.nvlink_domain_gpus = 8;
    spec.nics_per_node = 8;
    spec.nic_GBps = 23.5;
    spec.nvlink_GBps = 234.89;
    const network::Topology topo(spec, 16);
    const cost::CostModel cost = testing::shipped_cost_model();
    const network::CollectiveFlows flows(topo, cost, network::GpuGeneration::Ampere);
    const std::vector<std::vector<std::int64_t>> ring{{0, 9, 10}};
    const auto names = [&](const network::NetworkFlow& f) {
        std::vector<std::string> out;
        for (const auto& [link, weight] : f.uses) {
            EXPECT_EQ(weight, 1.0);
            out.push_back(topo.link_name(link));
        }
        return out;
    };
    const std::vector<std::string> forward = names(flows.ring_exchange(Bytes{1000}, ring, false));
    const std::vector<std::string> backward = names(flows.ring_exchange(Bytes{1000}, ring, true));
    const auto has = [](const std::vector<std::string>& v, const std::string& name) {
        return std::find(v.begin(), v.end(), name) != v.end();
    };
    EXPECT_TRUE(has(forward, "spine 0 -> leaf 1"));
    EXPECT_FALSE(has(forward, "spine 0 -> leaf 2"));
    EXPECT_TRUE(has(backward, "spine 0 -> leaf 2"));
    EXPECT_FALSE(has(backward, "spine 0 -> leaf 1"));
    // Alone, a step across nodes runs at one NIC's rate with the NIC's send latency.
    const network::NetworkFlow step = flows.ring_exchange(Bytes{1000}, ring, false);
    EXPECT_EQ(step.max_rate_GBps, 23.5);
    EXPECT_DOUBLE_EQ(step.latency.value, 9.3e-6);
    EXPECT_EQ(step.amount_bytes, 1000.0);
}

// The same through the program: the op names of transformer_layer.cc's ring decide the direction. CP 4
// on nodes of two GPUs (two rails): the forward's cross-node hops 1 → 2 and 3 → 0 go from rail 1 down to
// rail 0's leaf; the backward's dK/dV hops 2 → 1 and 0 → 3 down to rail 1's.
TEST(FlowContextParallel, ProgramsBackwardExchangesRunTheRingTheOtherWay) {
    const config::Scenario sc = config::parse_scenario(cp_scenario(4, 16384, 2), "test");
    const program::IterationProgram prog = program::build_iteration(sc, testing::shipped_cost_model());
    const engine::RunResult run = program::simulate(prog);
    std::map<std::string, std::vector<std::string>> links;  // op name → the links its flow crosses
    for (std::size_t t = 0; t < prog.info.size(); ++t) {
        const auto task = engine::TaskId::from_index(t);
        const engine::RendezvousId rv = prog.program.rendezvous_of(task);
        if (rv == engine::kNoRendezvous || prog.program.rendezvous_flow(rv) == engine::kNoFlow) {
            continue;
        }
        for (const program::OpSpan& span : program::op_spans(prog, task, run.timings[t])) {
            if (span.op == nullptr || links.count(span.op->name) > 0) {
                continue;
            }
            for (const engine::FlowUse& use : prog.program.flow_spec(prog.program.rendezvous_flow(rv)).uses) {
                links[span.op->name].push_back(prog.topology->link_name(use.resource.value()));
            }
        }
    }
    const auto crosses = [&](const std::string& op, const std::string& link) {
        const std::vector<std::string>& l = links.at(op);
        return std::find(l.begin(), l.end(), link) != l.end();
    };
    for (const char* forward : {"attn.cp_kv_exchange.1", "attn.cp_kv_exchange.3"}) {
        SCOPED_TRACE(forward);
        EXPECT_TRUE(crosses(forward, "spine 0 -> leaf 0"));
        EXPECT_FALSE(crosses(forward, "spine 0 -> leaf 1"));
    }
    for (const char* backward :
         {"attn.cp_kv_exchange.bwd.1", "attn.cp_dkv_exchange.0", "attn.cp_dkv_exchange.3"}) {
        SCOPED_TRACE(backward);
        EXPECT_TRUE(crosses(backward, "spine 0 -> leaf 1"));
        EXPECT_FALSE(crosses(backward, "spine 0 -> leaf 0"));
    }
}

// all_gather and a2a: alone on the network a flow takes the analytical model's time (the measured
// NVLink curve inside a node; the rails and NVLink parts of the all-to-all across nodes).
TEST(FlowContextParallel, AllGatherAndAllToAllAloneTakeTheAnalyticalTime) {
    const cost::CostModel cost = testing::shipped_cost_model();
    const std::int64_t seq = 16384;
    {
        const auto spans = forward_spans(cp_scenario(4, seq, 8, R"(, "cp_comm_type": "all_gather")"));
        const SimTime expected = to_sim_time(cost.collective(
            cost::CollectiveKind::AllGather, Bytes{4 * kv_bytes(seq, 4)}, 4, cost::Scope::IntraNode, 1, 0));
        EXPECT_NEAR(static_cast<double>(length(spans.at("attn.cp_kv_allgather")).ns()),
                    static_cast<double>(expected.ns()), 2.0);
    }
    for (const std::int64_t gpus_per_node : {8, 2}) {
        SCOPED_TRACE("gpus_per_node " + std::to_string(gpus_per_node));
        const auto spans = forward_spans(cp_scenario(4, seq, gpus_per_node, R"(, "cp_comm_type": "a2a")"));
        const std::int64_t nodes = 4 / std::min<std::int64_t>(4, gpus_per_node);
        // Each rank's s/c tokens of Q: 4096 · 32 heads · 128 · 2 bytes.
        const SimTime expected = to_sim_time(cost.collective(
            cost::CollectiveKind::AllToAll, Bytes{4096 * 32 * 128 * 2}, 4,
            nodes > 1 ? cost::Scope::InterNode : cost::Scope::IntraNode, static_cast<int>(nodes), 0));
        EXPECT_NEAR(static_cast<double>(length(spans.at("attn.cp_a2a.q")).ns()),
                    static_cast<double>(expected.ns()), 2.0);
    }
}

// Folding under the flow model: each simulated GPU's flows carry its folded peers' traffic (and its
// context-parallel ranks'), so simulating every replica gives the same iteration. CP 2 × DP 2 on nodes of
// two GPUs: each CP ring and the dp × cp gradient reduction cross nodes.
TEST(FlowContextParallel, UnfoldedReplicasGiveTheSameIterationTime) {
    const config::Scenario sc =
        config::parse_scenario(cp_scenario(2, 8192, 2, R"(, "data_parallel_size": 2)"), "test");
    const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram folded = program::build_iteration(sc, cost);
    const program::IterationProgram unfolded =
        program::build_iteration(sc, cost, program::Fold{false, false});
    EXPECT_EQ(folded.gpus.size(), 1u);
    EXPECT_EQ(unfolded.gpus.size(), 2u);
    const SimTime a = program::simulate(folded).makespan;
    const SimTime b = program::simulate(unfolded).makespan;
    EXPECT_NEAR(static_cast<double>(a.ns()), static_cast<double>(b.ns()), 1e-6 * static_cast<double>(a.ns()));
}

double iteration_time(const std::string& args) {
    const testing::CommandResult r = testing::run_trainsim("run " + args + " --format json");
    EXPECT_EQ(r.status, 0) << r.err;
    const auto at = r.out.find("\"iteration_time_s\": ");
    return at == std::string::npos ? 0.0 : std::stod(r.out.substr(at + 20));
}

// The shipped long-context scenario (Llama 3 8B, 128k tokens, TP 2 × CP 16 × DP 2 on 8 H100 nodes): its
// ring exchanges hide under the attention steps and the gradient reduction is overlapped, so the flow
// model's iteration is within 1 % of the analytical one (measured: 13.1262 s against 13.1257 s).
TEST(FlowContextParallel, ShippedLongContextScenarioRunsWithinOnePercentOfAnalytical) {
    const std::string file = testing::source_path("scenarios/long-context/llama3-8b-128k-64gpu.json");
    const double analytical = iteration_time(file);
    const double flow = iteration_time(file + " --set hardware.network_model=flow");
    ASSERT_GT(analytical, 0.0);
    EXPECT_NE(flow, analytical);  // the flow model ran: its NCCL rings are not the analytical curves
    EXPECT_NEAR(flow / analytical, 1.0, 0.01);
}

// A small MoE layer (hidden 4096, 32 heads, 4096 tokens; 16 experts, top 2, SwiGLU experts of 14336) with
// expert parallelism `ep` over `dp` data-parallel ranks, on the A100 profile with the flow model.
std::string moe_scenario(std::int64_t ep, std::int64_t dp, std::int64_t gpus_per_node) {
    return R"({"model": {"num_layers": 2, "hidden_size": 4096, "num_attention_heads": 32, "seq_length": 4096,
        "moe_ffn_hidden_size": 14336, "padded_vocab_size": 32768, "ffn_hidden_size": 14336, "swiglu": true,
        "normalization": "RMSNorm", "position_embedding_type": "rope", "add_bias_linear": false,
        "num_experts": 16, "moe_router_topk": 2, "moe_token_dispatcher_type": "alltoall",
        "moe_grouped_gemm": true},
      "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1,
        "data_parallel_size": )" +
           std::to_string(dp) + R"(, "expert_model_parallel_size": )" + std::to_string(ep) + R"(},
      "training": {"micro_batch_size": 1, "global_batch_size": )" +
           std::to_string(dp) + R"(, "attention_backend": "flash", "use_distributed_optimizer": true},
      "hardware": {"profile": "a100-80gb-selene", "network_model": "flow", "gpus_per_node": )" +
           std::to_string(gpus_per_node) + "}}";
}

// EP 2 on two nodes of one GPU: each rank's S is its 4096 · 2 routed tokens of 4096 bf16 elements,
// 64 MiB, and it sends half of it, 32 MiB, to the other rank through its NIC while receiving the other
// half. Alone that takes the analytical all-to-all's time: one NIC at the profile's efficiency at 64 MiB
// (0.521, a point of busbw_efficiency_vs_bytes), 33554432 / (23.5 GB/s · 0.521) = 2740.59 µs, plus the
// NIC send latency 9.3 µs. The combine moves the same bytes back.
TEST(FlowExpertParallel, DispatchAndCombineAcrossTwoNodesTakeTheHalfOverOneNic) {
    const auto spans = forward_spans(moe_scenario(2, 2, 1));
    const SimTime expected =
        to_sim_time(Seconds{33554432.0 / (23.5e9 * 0.521)}) + to_sim_time(Seconds{9.3e-6});
    EXPECT_NEAR(static_cast<double>(length(spans.at("moe.dispatch.alltoall")).ns()),
                static_cast<double>(expected.ns()), 2.0);
    EXPECT_NEAR(static_cast<double>(length(spans.at("moe.combine.alltoall")).ns()),
                static_cast<double>(expected.ns()), 2.0);
    // The probs' all-to-all follows the tokens': S = 8192 bf16 probs, 16 KiB, half of it (8 KiB) through
    // the NIC at the curve's first point's efficiency (0.333 at 16 MiB, held below it), plus the latency:
    // 8192 / (23.5 GB/s · 0.333) = 1.05 µs + 9.3 µs.
    const SimTime probs = to_sim_time(Seconds{8192.0 / (23.5e9 * 0.333)}) + to_sim_time(Seconds{9.3e-6});
    EXPECT_NEAR(static_cast<double>(length(spans.at("moe.dispatch.probs_alltoall")).ns()),
                static_cast<double>(probs.ns()), 2.0);
    EXPECT_EQ(spans.at("moe.dispatch.probs_alltoall").start, spans.at("moe.dispatch.alltoall").end);
    // The experts wait for the dispatch and the combine for the experts, as in the analytical model.
    EXPECT_EQ(spans.at("experts.fc1").start, spans.at("moe.dispatch.probs_alltoall").end);
    EXPECT_EQ(spans.at("moe.combine.alltoall").start, spans.at("experts.fc2").end);
}

// Behind a 4:1 oversubscribed spine the same dispatch and combine run at 5.875 GB/s instead of their
// alone rate (23.5 GB/s at 0.521 efficiency): each of a GPU's 8 all-to-alls (2 layers, dispatch and
// combine, forward and backward, one micro-batch) loses at least 5711.39 − 2740.59 = 2970.80 µs, and the
// report counts it in the expert line, not TP's or CP's.
TEST(FlowExpertParallel, AllToAllContentionHasItsOwnLineInTheNetworkReport) {
    const report::NetworkReport n = network_report(behind_oversubscribed_spine(moe_scenario(2, 2, 1)));
    const double per_alltoall = 33554432.0 / 5.875e9 - 33554432.0 / (23.5e9 * 0.521);
    EXPECT_GE(n.contention_ep.value, 8 * per_alltoall * (1 - 1e-9));
    EXPECT_EQ(n.contention_tp.value, 0.0);
    EXPECT_EQ(n.contention_cp.value, 0.0);
}

// Each member's share of a collective (what it sends) adds up to the whole collective: the expert
// groups are lowered rank by rank, and the shares of a group's members must load its links exactly as
// the one collective does. Ring all-reduce and all-to-all over two DGX hosts, split between the hosts.
TEST(FlowExpertParallel, TheMembersSharesAddUpToTheCollective) {
    network::TopologySpec spec;
    spec.nic_GBps = 23.5;
    spec.nvlink_GBps = 234.89;
    spec.amd_host = true;
    const network::Topology topo(spec, 16);
    const cost::CostModel cost = testing::shipped_cost_model();
    const network::CollectiveFlows flows(topo, cost, network::GpuGeneration::Ampere);
    std::vector<std::int64_t> all, first_host, second_host;
    for (std::int64_t r = 0; r < 16; ++r) {
        all.push_back(r);
        (r < 8 ? first_host : second_host).push_back(r);
    }
    const std::vector<std::vector<std::int64_t>> group{all};
    for (const cost::CollectiveKind kind : {cost::CollectiveKind::AllReduce, cost::CollectiveKind::AllToAll,
                                            cost::CollectiveKind::ReduceScatter}) {
        SCOPED_TRACE(static_cast<int>(kind));
        const Bytes bytes{std::int64_t{1} << 28};
        const network::NetworkFlow whole = flows.collective(kind, bytes, group);
        const network::NetworkFlow a = flows.collective(kind, bytes, group, first_host);
        const network::NetworkFlow b = flows.collective(kind, bytes, group, second_host);
        EXPECT_EQ(a.amount_bytes, whole.amount_bytes);
        EXPECT_EQ(a.max_rate_GBps, whole.max_rate_GBps);
        EXPECT_EQ(a.latency.value, whole.latency.value);
        std::map<network::LinkId, double> sum;
        for (const auto& [link, weight] : a.uses) {
            sum[link] += weight;
        }
        for (const auto& [link, weight] : b.uses) {
            sum[link] += weight;
        }
        ASSERT_EQ(sum.size(), whole.uses.size());
        for (const auto& [link, weight] : whole.uses) {
            EXPECT_NEAR(sum.at(link), weight, 1e-12) << topo.link_name(link);
        }
    }
}

// Copies of one all-to-all that span different numbers of nodes run as one flow, priced for the widest:
// a group inside one host beside a group across the two hosts must not let the latter finish at NVLink's
// rate and latency (expert groups of a folded stage can straddle a node boundary unevenly).
TEST(FlowExpertParallel, CopiesOfDifferentSpansArePricedForTheWidest) {
    network::TopologySpec spec;
    spec.nic_GBps = 23.5;
    spec.nvlink_GBps = 234.89;
    spec.amd_host = true;
    const network::Topology topo(spec, 16);
    const cost::CostModel cost = testing::shipped_cost_model();
    const network::CollectiveFlows flows(topo, cost, network::GpuGeneration::Ampere);
    const Bytes bytes{std::int64_t{1} << 26};
    const std::vector<std::int64_t> inside{0, 1}, across{7, 8};
    const std::vector<std::vector<std::int64_t>> only_across{across}, only_inside{inside};
    const network::NetworkFlow wide = flows.collective(cost::CollectiveKind::AllToAll, bytes, only_across);
    for (const auto& copies : {std::vector<std::vector<std::int64_t>>{inside, across},
                               std::vector<std::vector<std::int64_t>>{across, inside}}) {
        const network::NetworkFlow both = flows.collective(cost::CollectiveKind::AllToAll, bytes, copies);
        EXPECT_EQ(both.max_rate_GBps, wide.max_rate_GBps);
        EXPECT_EQ(both.latency.value, wide.latency.value);
    }
    const network::NetworkFlow narrow = flows.collective(cost::CollectiveKind::AllToAll, bytes, only_inside);
    EXPECT_GT(narrow.max_rate_GBps, wide.max_rate_GBps);  // the case would not test anything otherwise
}

// Folding: the simulated GPU's expert flows carry what every rank it stands for sends, so simulating
// every GPU (each sending its own share) gives the same iteration. EP 4 × EDP 2 on nodes of two GPUs:
// each dispatch crosses nodes, and so does the expert gradients' reduce-scatter and all-gather.
TEST(FlowExpertParallel, UnfoldedGpusGiveTheSameIterationTime) {
    const config::Scenario sc = config::parse_scenario(moe_scenario(4, 8, 2), "test");
    const cost::CostModel cost = testing::shipped_cost_model();
    const program::IterationProgram folded = program::build_iteration(sc, cost);
    const program::IterationProgram unfolded =
        program::build_iteration(sc, cost, program::Fold{false, false});
    EXPECT_EQ(folded.gpus.size(), 1u);
    EXPECT_EQ(unfolded.gpus.size(), 8u);
    const SimTime a = program::simulate(folded).makespan;
    const SimTime b = program::simulate(unfolded).makespan;
    EXPECT_NEAR(static_cast<double>(a.ns()), static_cast<double>(b.ns()), 1e-6 * static_cast<double>(a.ns()));
}

// The shipped Mixtral 8x7B scenario (TP 2, EP 8, PP 4, DP 8 on H100 nodes; each EP group one node, the
// expert-data-parallel pairs across nodes) under the flow model: within 1 % of the analytical model
// (measured: 2.7136 s against 2.7147 s).
TEST(FlowExpertParallel, ShippedMixtralScenarioRunsWithinOnePercentOfAnalytical) {
    const std::string file = testing::source_path("scenarios/moe/mixtral-8x7b-64gpu.json");
    const double analytical = iteration_time(file);
    const double flow = iteration_time(file + " --set hardware.network_model=flow");
    ASSERT_GT(analytical, 0.0);
    EXPECT_NE(flow, analytical);
    EXPECT_NEAR(flow / analytical, 1.0, 0.01);
}

}  // namespace
}  // namespace trainsim
