// hardware.collective_contention=nccl_channels (sim/cost/collective_contention.h): what a running NCCL
// collective takes from the kernels beside it, by NCCL's channel count for its size and by its HBM
// traffic, checked against the formula on hand-checkable cases, through the lowering and end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/core/input_error.h"
#include "sim/cost/collective_contention.h"
#include "sim/cost/profile_writer.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/program/op_lowering.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using cost::CollectiveKind;
using cost::Scope;

cost::HardwareProfile profile(const std::string& name) {
    return cost::load_hardware_profile(name, testing::source_path("scenarios/hardware"));
}

constexpr std::int64_t kMiB = 1 << 20;

TEST(CollectiveContention, NcclGivesUpAChannelPer32KiBMissing) {
    // src/enqueue.cc: while S < nc · 512 threads · 64, nc−−; never below one.
    EXPECT_EQ(cost::nccl_active_channels(24, Bytes{0}), 1);
    EXPECT_EQ(cost::nccl_active_channels(24, Bytes{32767}), 1);
    EXPECT_EQ(cost::nccl_active_channels(24, Bytes{65536}), 2);
    EXPECT_EQ(cost::nccl_active_channels(24, Bytes{65536 * 3 - 1}), 5);
    EXPECT_EQ(cost::nccl_active_channels(24, Bytes{24 * 32768}), 24);
    EXPECT_EQ(cost::nccl_active_channels(24, Bytes{1LL << 30}), 24);
    EXPECT_EQ(cost::nccl_active_channels(16, Bytes{1LL << 30}), 16);
}

TEST(CollectiveContention, ProfilesCarryNcclsChannelsAndTheHbmTraffic) {
    const cost::HardwareProfile a100 = profile("a100-80gb-selene");
    ASSERT_TRUE(a100.collective_contention);
    EXPECT_EQ(a100.collective_contention->intra_node_channels, 24);  // HGX A100's NCCL log
    EXPECT_EQ(a100.collective_contention->inter_node_channels, 16);  // 2 × one per NIC
    EXPECT_EQ(a100.collective_contention->hbm_bytes_per_reduced_byte, 3.0);
    EXPECT_EQ(a100.collective_contention->hbm_bytes_per_copied_byte, 2.0);
    const cost::HardwareProfile h100 = profile("h100-80gb-dgx");
    ASSERT_TRUE(h100.collective_contention);
    EXPECT_EQ(h100.collective_contention->intra_node_channels, 16);  // NVLS_NCHANNELS_SM90
    EXPECT_EQ(h100.collective_contention->inter_node_channels, 16);
    EXPECT_FALSE(profile("h200-141gb-dgx").collective_contention);  // no data: the fixed share only
}

TEST(CollectiveContention, ProfileSectionIsWrittenBackAsReadWithItsProvenance) {
    cost::HardwareProfile p = profile("a100-80gb-selene");
    const Json written = cost::profile_to_json(p);
    const Json& c = written["network"]["collective_contention"];
    EXPECT_EQ(c["intra_node_channels"]["value"], 24);
    EXPECT_EQ(c["inter_node_channels"]["value"], 16);
    EXPECT_EQ(c["hbm_bytes_per_reduced_byte"]["value"], 3);
    EXPECT_EQ(c["hbm_bytes_per_copied_byte"]["value"], 2);
    EXPECT_EQ(c["intra_node_channels"]["kind"], "measured");
    EXPECT_EQ(c["assumptions"].size(), 3u);
    EXPECT_EQ(cost::profile_from_json(p.name, parse_strict_json(written.dump(), p.name)), p);

    p.collective_contention->inter_node_channels = 8;
    p.provenance.values["network.collective_contention.inter_node_channels"] = {"measured",
                                                                                "S-NCCLT-100: a test"};
    const Json changed = cost::profile_to_json(p);
    EXPECT_EQ(changed["network"]["collective_contention"]["inter_node_channels"]["value"], 8);
    EXPECT_EQ(changed["network"]["collective_contention"]["inter_node_channels"]["source"],
              "S-NCCLT-100: a test");
    EXPECT_EQ(cost::profile_from_json(p.name, parse_strict_json(changed.dump(), p.name)), p);

    // Without the section nothing is written, and the profile reads back without it.
    p.collective_contention.reset();
    const Json without = cost::profile_to_json(p);
    EXPECT_FALSE(without["network"].contains("collective_contention"));
    EXPECT_FALSE(
        cost::profile_from_json(p.name, parse_strict_json(without.dump(), p.name)).collective_contention);
}

TEST(CollectiveContention, ChannelsAsManyAsSmsAreRejected) {
    Json doc = cost::profile_to_json(profile("a100-80gb-selene"));
    doc["network"]["collective_contention"]["intra_node_channels"]["value"] = 65;
    try {
        (void)cost::profile_from_json("a100-80gb-selene", parse_strict_json(doc.dump(), "a100-80gb-selene"));
        FAIL() << "65 channels were accepted";
    } catch (const InputError& e) {
        EXPECT_NE(
            std::string(e.what()).find("network.collective_contention.intra_node_channels.value must be at "
                                       "most NCCL's 64 channels (MAXCHANNELS), got 65"),
            std::string::npos)
            << e.what();
    }
    // As many channels as SMs load (a CPU-fitted profile keeps its base's section) but cannot be used.
    cost::HardwareProfile p = profile("a100-80gb-selene");
    p.collective_contention->intra_node_channels = 108;
    const config::Scenario sc =
        testing::shipped_scenario("korthikanti-22b", {{"hardware.collective_contention", "nccl_channels"}});
    try {
        (void)experiment::simulate_scenario(sc, cost::CostModel(p));
        FAIL() << "108 channels on 108 SMs was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(
                      "profile a100-80gb-selene runs 108 NCCL channels "
                      "(network.collective_contention), which must be fewer than its 108 SMs"),
                  std::string::npos)
            << e.what();
    }
}

TEST(CollectiveContention, SharesAndSlowdownsFollowTheFormula) {
    const cost::CostModel cost(profile("a100-80gb-selene"));
    const cost::HardwareProfile& p = cost.profile();
    const Bytes s{256 * kMiB};
    const Seconds d = cost.collective(CollectiveKind::AllReduce, s, 8, Scope::IntraNode);
    const cost::ContentionShares ar =
        cost::collective_contention(p, CollectiveKind::AllReduce, s, 8, Scope::IntraNode, d);
    EXPECT_EQ(ar.channels, 24);
    EXPECT_DOUBLE_EQ(ar.sm_share, 24.0 / 108.0);
    // An all-reduce is half reduce-scatter steps (3 HBM bytes per bus byte), half all-gather steps (2).
    const double rate = 2.5 * static_cast<double>(s.value) * 2.0 * 7.0 / 8.0 / d.value;
    EXPECT_DOUBLE_EQ(ar.hbm_share, rate / 2039e9);
    EXPECT_GT(ar.hbm_share, 0.2);  // ~230 GB/s of bus bandwidth moves ~575 GB/s through HBM
    const cost::OverlapSlowdown f = cost::overlap_slowdown(ar);
    EXPECT_DOUBLE_EQ(f.compute_bound, 108.0 / 84.0);
    EXPECT_DOUBLE_EQ(f.memory_bound, 1.0 / (1.0 - rate / 2039e9));

    // Over the same time a reduce-scatter moves 3/2 the HBM bytes of an all-gather.
    const cost::ContentionShares rs =
        cost::collective_contention(p, CollectiveKind::ReduceScatter, s, 8, Scope::IntraNode, d);
    const cost::ContentionShares ag =
        cost::collective_contention(p, CollectiveKind::AllGather, s, 8, Scope::IntraNode, d);
    EXPECT_DOUBLE_EQ(rs.hbm_share, 1.5 * ag.hbm_share);
    // Across nodes NCCL runs 16 channels; HBM is shared at most half and half.
    const cost::ContentionShares inter =
        cost::collective_contention(p, CollectiveKind::AllReduce, s, 16, Scope::InterNode, Seconds{1e-6});
    EXPECT_EQ(inter.channels, 16);
    EXPECT_DOUBLE_EQ(inter.hbm_share, 0.5);
    EXPECT_DOUBLE_EQ(cost::overlap_slowdown(inter).memory_bound, 2.0);
}

TEST(CollectiveContention, ASmallCollectiveSlowsComputeLessThanALargeOne) {
    const cost::CostModel cost(profile("a100-80gb-selene"));
    const auto slowdown = [&](std::int64_t bytes) {
        const Seconds d = cost.collective(CollectiveKind::AllReduce, Bytes{bytes}, 8, Scope::IntraNode);
        return cost::collective_contention(cost.profile(), CollectiveKind::AllReduce, Bytes{bytes}, 8,
                                           Scope::IntraNode, d);
    };
    const cost::ContentionShares small = slowdown(64 * 1024);  // 2 channels, latency-bound
    const cost::ContentionShares large = slowdown(256 * kMiB);
    EXPECT_EQ(small.channels, 2);
    EXPECT_EQ(large.channels, 24);
    EXPECT_LT(cost::overlap_slowdown(small).compute_bound, cost::overlap_slowdown(large).compute_bound);
    EXPECT_LT(cost::overlap_slowdown(small).memory_bound, cost::overlap_slowdown(large).memory_bound);
    EXPECT_DOUBLE_EQ(cost::overlap_slowdown(small).compute_bound, 108.0 / 106.0);
}

// One list on one GPU: an asynchronous all-reduce of 256 MiB over 8 GPUs of a node, then a GEMM and a
// memory-bound kernel beside it, then a GEMM that waits for it.
struct Lowered {
    std::vector<SimTime> priced;  // what each op costs alone
    std::vector<SimTime> durations;
    program::SimulatedGpu gpu;
};

Lowered lower_beside_all_reduce(const std::string& model) {
    const config::Scenario sc = testing::shipped_scenario(
        "korthikanti-175b", {{"parallelism.tensor_model_parallel_size", "8"},
                             {"parallelism.pipeline_model_parallel_size", "1"},
                             {"parallelism.virtual_pipeline_model_parallel_size", "1"},
                             {"parallelism.data_parallel_size", "1"},
                             {"hardware.collective_contention", model}});
    const cost::CostModel cost(profile("a100-80gb-selene"));
    const parallel::Layout layout(sc);
    const program::OpPricing pricing(cost, layout, sc);
    workload::OpList ops(4);
    ops[0].name = "allreduce";
    ops[0].kind = workload::OpKind::Collective;
    ops[0].stream = workload::OpStream::TensorComm;
    ops[0].collective = CollectiveKind::AllReduce;
    ops[0].collective_bytes = Bytes{256 * kMiB};
    ops[0].group = workload::CommGroup::Tensor;
    ops[1].name = "gemm";
    ops[1].gemm = {4096, 4096, 4096, 1};
    ops[2].name = "memory_bound";
    ops[2].kind = workload::OpKind::MemoryBound;
    ops[2].bytes_moved = Bytes{64 * kMiB};
    ops[3].name = "gemm.after";
    ops[3].gemm = {4096, 4096, 4096, 1};
    ops[3].after = {0};
    program::IterationProgram out;
    out.gpus.emplace_back();
    program::RendezvousTable rendezvous;
    program::OpLowering lowering(out, pricing, rendezvous, program::GroupMembers{}, engine::GpuId{0},
                                 {0, 0, 0});
    lowering.lower(ops, program::StepContext{});
    Lowered r;
    for (const workload::Op& op : ops) {
        r.priced.push_back(to_sim_time(pricing.duration(op, {0, 0, 0})));
    }
    r.durations = out.priced.at(0).durations;
    r.gpu = out.gpus.at(0);
    return r;
}

SimTime slowed(SimTime t, SimTime beside, double factor) {
    return t + SimTime{std::llround(static_cast<double>(std::min(t, beside).ns()) * (factor - 1.0))};
}

TEST(CollectiveContention, GemmBesideAnAllReduceTakesTheFormulasTime) {
    const Lowered r = lower_beside_all_reduce("nccl_channels");
    const SimTime ar = r.priced[0];
    ASSERT_LT(r.priced[1], ar);  // the GEMM runs wholly beside the all-reduce
    EXPECT_EQ(r.durations[0], ar);
    // 24 of A100's 108 SMs hold NCCL's CTAs: the GEMM runs on 84.
    const SimTime gemm = slowed(r.priced[1], ar, 108.0 / 84.0);
    EXPECT_EQ(r.durations[1], gemm);
    // The memory-bound kernel gets what the all-reduce leaves of HBM (2.5 bytes per bus byte).
    const double hbm = 2.5 * static_cast<double>(256 * kMiB) * 1.75 / to_seconds(ar).value / 2039e9;
    const SimTime mb = slowed(r.priced[2], ar - gemm, 1.0 / (1.0 - hbm));
    EXPECT_EQ(r.durations[2], mb);
    EXPECT_EQ(r.durations[3], r.priced[3]);  // waits for the all-reduce: nothing beside it
    // The breakdown's line: what the two kernels lost, as compute.
    EXPECT_EQ(r.gpu.contention_compute, (gemm - r.priced[1]) + (mb - r.priced[2]));
    EXPECT_EQ(r.gpu.contention_recompute, 0_ns);

    // The fixed share (the default) slows both kernels by 1 / (1 − 0.15).
    const Lowered fixed = lower_beside_all_reduce("fixed_share");
    const SimTime gemm_fixed = slowed(fixed.priced[1], ar, 1.0 / 0.85);
    EXPECT_EQ(fixed.durations[1], gemm_fixed);
    EXPECT_EQ(fixed.durations[2], slowed(fixed.priced[2], ar - gemm_fixed, 1.0 / 0.85));
}

TEST(CollectiveContention, BreakdownReportsItAndStillAddsUp) {
    // Korthikanti's 22B (TP 8, no sequence parallelism): the backward's input-gradient all-reduce runs
    // beside the weight-gradient GEMM.
    const cost::CostModel cost = testing::shipped_cost_model();
    const auto run = [&](const std::string& model) {
        const config::Scenario sc =
            testing::shipped_scenario("korthikanti-22b", {{"hardware.collective_contention", model}});
        return experiment::simulate_scenario(sc, cost).report;
    };
    const report::IterationReport fixed = run("fixed_share");
    const report::IterationReport nccl = run("nccl_channels");
    for (const report::IterationReport* r : {&fixed, &nccl}) {
        EXPECT_GT(r->breakdown.overlap_contention.value, 0.0);
        EXPECT_NEAR(r->breakdown.total().value, r->iteration_time.value, 1e-9 * r->iteration_time.value);
    }
    // 24 of 108 SMs (1.29x) slow the GEMM more than the fixed 0.15 share (1.18x).
    EXPECT_GT(nccl.breakdown.overlap_contention.value, fixed.breakdown.overlap_contention.value);
    EXPECT_GT(nccl.iteration_time.value, fixed.iteration_time.value);
}

TEST(CollectiveContention, NcclChannelsNeedTheProfileSection) {
    const config::Scenario sc =
        testing::shipped_scenario("korthikanti-175b", {{"hardware.profile", "h200-141gb-dgx"},
                                                       {"hardware.collective_contention", "nccl_channels"}});
    try {
        (void)experiment::simulate_scenario(sc, cost::CostModel(profile("h200-141gb-dgx")));
        FAIL() << "nccl_channels ran on a profile without network.collective_contention";
    } catch (const InputError& e) {
        EXPECT_NE(
            std::string(e.what()).find("hardware.collective_contention=\"nccl_channels\" needs the "
                                       "network.collective_contention section of profile h200-141gb-dgx"),
            std::string::npos)
            << e.what();
    }
    const testing::CommandResult r =
        testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-175b.json") +
                              " --set hardware.collective_contention=channels");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("hardware.collective_contention"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
}

}  // namespace
}  // namespace trainsim
