// The network's counter tracks in `--trace` under hardware.network_model=flow (DESIGN.md §8 "Network"):
// each NIC direction's and fabric link's load over time, exact on a hand-checkable incast, and the same
// tracks in the JSON and the Perfetto protobuf trace of a real run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/network/topology.h"
#include "sim/program/iteration_program.h"
#include "sim/report/link_rate_tracks.h"
#include "tests/support/json_file.h"
#include "tests/test_support.h"
#ifdef TRAINSIM_WITH_PROTOBUF
#include "perfetto_trace.pb.h"
#endif

namespace trainsim {
namespace {

using report::LinkRateSample;
using report::LinkRateTrack;

// Two 8-GPU hosts with 4 NICs of 25 GB/s each (GPUs 2i and 2i+1 share NIC i), all NICs on one leaf.
network::TopologySpec two_hosts_four_nics() {
    network::TopologySpec s;
    s.kind = network::FabricKind::FatTree;
    s.gpus_per_node = 8;
    s.nvlink_domain_gpus = 8;
    s.nics_per_node = 4;
    s.nodes_per_leaf = 2;
    s.nvlink_GBps = 300.0;
    s.nic_GBps = 25.0;
    return s;
}

// A program whose engine resources are the topology's links (as NetworkFlows builds it) and one flow
// per (from GPU, to GPU, bytes), all starting at 0.
struct Transfer {
    std::int64_t from, to;
    double bytes;
};
program::IterationProgram transfers(const std::vector<Transfer>& list) {
    program::IterationProgram prog;
    prog.topology = std::make_shared<const network::Topology>(two_hosts_four_nics(), 16);
    const network::Topology& topo = *prog.topology;
    for (network::LinkId l = 0; l < topo.num_links(); ++l) {
        std::ignore = prog.program.add_resource(topo.capacity_GBps(l) * 1e9);
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        engine::FlowSpec spec{list[i].bytes, 25e9, SimTime{}, {}};
        for (const network::LinkId l : topo.route(list[i].from, list[i].to)) {
            spec.uses.push_back({engine::ResourceId{l}, 1.0});
        }
        const std::string name = "send " + std::to_string(i);
        std::ignore = prog.program.add_rendezvous_task(
            prog.program.add_stream(engine::GpuId{static_cast<std::int32_t>(i)}, name),
            prog.program.add_flow_rendezvous(1, prog.program.add_flow_spec(spec), name), name);
    }
    return prog;
}

// GPUs 0 and 1 of host 0 share NIC 0; they send 50 kB to GPU 8 (host 1, NIC 0) and 25 kB to GPU 10 (host
// 1, NIC 1). Both cross node 0's NIC 0, so each gets 12.5 GB/s (12.5 bytes/ns): node 0 NIC 0 tx is full,
// and each receiving NIC shows half. The 25 kB end at 2000 ns; the 50 kB have 25 kB left, now alone at
// 25 GB/s, and end at 3000 ns: node 1 NIC 0 rx steps up to the full rate for its last 1000 ns.
TEST(LinkRateTracks, AnIncastShowsTheHalvedRateThenTheFullRate) {
    const program::IterationProgram prog = transfers({{0, 8, 50'000.0}, {1, 10, 25'000.0}});
    engine::RunOptions options;
    options.record_rates_of = report::traced_links(*prog.topology, {});
    const engine::RunResult run = engine::simulate(prog.program, options);
    ASSERT_EQ(run.makespan, 3000_ns);
    const std::vector<LinkRateTrack> tracks = report::link_rate_tracks(prog, run, {});
    ASSERT_EQ(tracks.size(), 3U);  // the GPU-to-NIC links inside each host have no track
    EXPECT_EQ(tracks[0].name, "node 0 NIC 0 tx");
    EXPECT_EQ(tracks[0].samples, (std::vector<LinkRateSample>{{0_ns, 25'000'000'000}, {3000_ns, 0}}));
    EXPECT_EQ(tracks[1].name, "node 1 NIC 0 rx");
    EXPECT_EQ(tracks[1].samples,
              (std::vector<LinkRateSample>{{0_ns, 12'500'000'000}, {2000_ns, 25'000'000'000}, {3000_ns, 0}}));
    EXPECT_EQ(tracks[2].name, "node 1 NIC 1 rx");
    EXPECT_EQ(tracks[2].samples, (std::vector<LinkRateSample>{{0_ns, 12'500'000'000}, {2000_ns, 0}}));

    // A window opens with the value then, keeps the changes inside it, and drops a track idle in it.
    report::TraceOptions window;
    window.window_start = 2500_ns;
    window.window_end = 5000_ns;
    const std::vector<LinkRateTrack> late = report::link_rate_tracks(prog, run, window);
    ASSERT_EQ(late.size(), 2U);
    EXPECT_EQ(late[0].samples, (std::vector<LinkRateSample>{{2500_ns, 25'000'000'000}, {3000_ns, 0}}));
    EXPECT_EQ(late[1].name, "node 1 NIC 0 rx");
    EXPECT_EQ(late[1].samples, (std::vector<LinkRateSample>{{2500_ns, 25'000'000'000}, {3000_ns, 0}}));

    // --trace-ranks 0-7 records only host 0's NICs (and any switch-to-switch link: none here).
    options.record_rates_of = report::traced_links(*prog.topology, {{0, 7}});
    const std::vector<LinkRateTrack> host0 =
        report::link_rate_tracks(prog, engine::simulate(prog.program, options), {});
    ASSERT_EQ(host0.size(), 1U);
    EXPECT_EQ(host0[0].name, "node 0 NIC 0 tx");

    // A run that did not record rates (no --trace) has no tracks.
    EXPECT_TRUE(report::link_rate_tracks(prog, engine::simulate(prog.program), {}).empty());
}

// Llama 2 13B on two H100 hosts, PP 4 × DP 4, on the flow model: the gradient all-reduces cross the NICs
// and stage 1's sends to stage 2 cross rails, so leaf-spine links carry traffic too.
const std::string kLlama = testing::source_path("scenarios/nemo/llama2-13b-16gpu-fp8.json") +
                           " --set hardware.network_model=flow --set training.global_batch_size=16";

// The "network" process's counter events of a JSON trace, by track name: (ts in ns, bytes/s).
std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>>
network_counters(const nlohmann::json& trace) {
    std::int64_t pid = -1;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "network") {
            pid = e["pid"].get<std::int64_t>();
        }
    }
    std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>> out;
    for (const auto& e : trace["traceEvents"]) {
        if (pid >= 0 && e["ph"] == "C" && e["pid"] == pid) {
            out[e["name"].get<std::string>()].emplace_back(std::llround(e["ts"].get<double>() * 1e3),
                                                           e["args"]["bytes/s"].get<std::int64_t>());
        }
    }
    return out;
}

TEST(LinkRateTracks, JsonTraceHasACounterPerNicAndFabricLink) {
    const std::string path = ::testing::TempDir() + "link_rate_tracks.json";
    const auto r = testing::run_trainsim("run " + kLlama + " --trace " + path);
    ASSERT_EQ(r.status, 0) << r.err;
    const auto counters = network_counters(testing::read_json_file(path));
    const config::Scenario sc =
        testing::shipped_scenario("nemo/llama2-13b-16gpu-fp8",
                                  {{"hardware.network_model", "flow"}, {"training.global_batch_size", "16"}});
    const cost::HardwareProfile profile =
        cost::load_hardware_profile(sc.hardware.profile, testing::source_path("scenarios/hardware"));
    const auto nic_rate = static_cast<std::int64_t>(profile.inter_node.nic_GBps * 1e9);
    std::size_t nics = 0;
    std::size_t fabric = 0;
    for (const auto& [name, samples] : counters) {
        ASSERT_FALSE(samples.empty());
        std::int64_t peak = 0;
        for (std::size_t i = 0; i < samples.size(); ++i) {
            EXPECT_GE(samples[i].second, 0) << name;
            EXPECT_TRUE(i == 0 || samples[i].first > samples[i - 1].first) << name;
            peak = std::max(peak, samples[i].second);
        }
        EXPECT_GT(peak, 0) << name;
        EXPECT_EQ(samples.back().second, 0) << name;  // every transfer has ended by the iteration's end
        if (name.starts_with("node ")) {
            ++nics;
            EXPECT_TRUE(name.ends_with(" tx") || name.ends_with(" rx")) << name;
            EXPECT_LE(peak, nic_rate) << name;
        } else {
            ++fabric;
            EXPECT_TRUE(name.starts_with("leaf ") || name.starts_with("spine ")) << name;
        }
    }
    // Both hosts' 8 NICs send and receive gradients.
    EXPECT_EQ(nics, 32U);
    EXPECT_GT(fabric, 0U);

    // --trace-ranks 0-7 (host 0) keeps host 0's NICs, in both directions, and the fabric links.
    const std::string host0 = ::testing::TempDir() + "link_rate_tracks_host0.json";
    ASSERT_EQ(testing::run_trainsim("run " + kLlama + " --trace-ranks 0-7 --trace " + host0).status, 0);
    std::size_t host0_nics = 0;
    std::size_t host0_fabric = 0;
    for (const auto& [name, samples] : network_counters(testing::read_json_file(host0))) {
        if (name.starts_with("node ")) {
            ++host0_nics;
            EXPECT_TRUE(name.starts_with("node 0 NIC ")) << name;
            EXPECT_EQ(samples, counters.at(name)) << name;
        } else {
            ++host0_fabric;
        }
    }
    EXPECT_EQ(host0_nics, 16U);
    EXPECT_EQ(host0_fabric, fabric);

    // The analytical model has no links, so no network process.
    const std::string plain = ::testing::TempDir() + "link_rate_tracks_analytical.json";
    ASSERT_EQ(testing::run_trainsim("run " +
                                    testing::source_path("scenarios/nemo/llama2-13b-16gpu-fp8.json") +
                                    " --set training.global_batch_size=16 --trace " + plain)
                  .status,
              0);
    EXPECT_TRUE(network_counters(testing::read_json_file(plain)).empty());
}

#ifdef TRAINSIM_WITH_PROTOBUF
// The protobuf trace decodes, and its network counter tracks (children of the "network" process) carry
// the JSON trace's names, times and values.
TEST(LinkRateTracks, PftraceHasTheSameNetworkCounters) {
    const std::string json_path = ::testing::TempDir() + "link_rate_tracks_same.json";
    const std::string proto_path = ::testing::TempDir() + "link_rate_tracks_same.pftrace";
    ASSERT_EQ(testing::run_trainsim("run " + kLlama + " --trace " + json_path).status, 0);
    const auto r = testing::run_trainsim("run " + kLlama + " --trace " + proto_path);
    ASSERT_EQ(r.status, 0) << r.err;
    std::ifstream in(proto_path, std::ios::binary);
    perfetto::protos::Trace trace;
    ASSERT_TRUE(trace.ParseFromIstream(&in));
    std::uint64_t network = 0;
    std::map<std::uint64_t, std::string> track_name;
    std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>> counters;
    for (const auto& p : trace.packet()) {
        if (p.has_track_descriptor()) {
            const auto& d = p.track_descriptor();
            if (d.has_process() && d.process().process_name() == "network") {
                network = d.uuid();
            } else if (d.has_counter() && network != 0 && d.parent_uuid() == network) {
                track_name[d.uuid()] = d.name();
            }
        } else if (p.track_event().type() == perfetto::protos::TrackEvent::TYPE_COUNTER &&
                   track_name.count(p.track_event().track_uuid()) == 1) {
            counters[track_name[p.track_event().track_uuid()]].emplace_back(
                static_cast<std::int64_t>(p.timestamp()), p.track_event().counter_value());
        }
    }
    ASSERT_NE(network, 0U);
    const auto json = network_counters(testing::read_json_file(json_path));
    ASSERT_FALSE(json.empty());
    EXPECT_EQ(counters, json);
}
#endif

}  // namespace
}  // namespace trainsim
