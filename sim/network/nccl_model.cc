#include "sim/network/nccl_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>

namespace trainsim::network {

namespace {

// All constants: NVIDIA/nccl @5067397 src/graph/tuning.cc, ncclTunerConstantsDefaults (µs and GB/s).
// baseLatencies[algorithm][protocol], algorithms Tree, Ring; protocols LL, LL128, Simple.
constexpr double kBaseLatency[2][3] = {{6.6, 14.0, 8.4}, {6.8, 14.0, 8.4}};  // [Ring, Tree]
// hwLatencies[NVLINK] and [NET] for Ring and Tree.
constexpr double kNvlinkLatency[2][3] = {{0.6, 1.9, 3.4}, {0.6, 1.25, 4.0}};  // [Ring, Tree]
constexpr double kNetLatency[2][3] = {{2.7, 4.0, 14.0}, {5.0, 8.5, 14.0}};    // [Ring, Tree]
// llMaxBws[index1][index2]: on one node index1 is the GPU generation; across nodes it is the CPU vendor
// (0 Intel, 1 AMD).
constexpr double kLlMaxBw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
// perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws [generation][N1, N2, N>=4].
constexpr double kRingLL128PerChannel[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
constexpr double kTreeLL128PerChannel[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double kTreePerChannel[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
// treeCorrectionFactor[protocol][log2(bytes / 64)] for tree all-reduce.
constexpr double kTreeCorrection[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
// NVLS rows: baseLatencies 0; hwLatencies[NVLINK][NVLS and NVLS tree][Simple] 25; hwLatencies[NET][NVLS]
// [Simple] 18 and [NVLS tree][Simple] 20.9 (an IB NIC adds no latencyInter: net_ib sets latency 0).
constexpr double kNvlsNvlinkLatencyUs = 25.0;
constexpr double kNvlsNetLatencyUs = 18.0;
constexpr double kNvlsTreeNetLatencyUs = 20.9;
// nvlsEfficiency[generation]: Volta and Ampere 0, Hopper 0.85, Blackwell 0.74.
constexpr double kNvlsEfficiency[4] = {0.0, 0.0, 0.85, 0.74};
// perChMaxNVLSTreeBws[generation][N1, N2, N>=4].
constexpr double kNvlsTreePerChannel[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
// search.cc's speed steps, GB/s per channel: sm90SpeedArrayIntra/Inter (Hopper), sm100SpeedArrayIntra/
// Inter (Blackwell), fastest first.
constexpr double kSm90SpeedIntra[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
constexpr double kSm90SpeedInter[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                      15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr double kSm100SpeedIntra[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                       40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
constexpr double kSm100SpeedInter[] = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                       20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
// NCCL_MAX_NVLS_ARITY (device.h): at most 32 NVLS channels.
constexpr std::int64_t kMaxNvlsArity = 32;

// getNetOverhead: 1 µs on Intel hosts, 2 µs on AMD hosts (×3 for Simple).
constexpr double kNetOverheadIntelUs = 1.0;
constexpr double kNetOverheadAmdUs = 2.0;

int log2i(std::int64_t v) {
    int l = -1;
    while (v > 0) {
        v >>= 1;
        ++l;
    }
    return l;
}

// The index of the fastest step no faster than `limit` (the slowest step when none is).
std::size_t step_within(std::span<const double> steps, double limit) {
    std::size_t i = 0;
    while (i + 1 < steps.size() && steps[i] > limit) {
        ++i;
    }
    return i;
}

// NVLS and NVLS tree (tuning.cc ncclTopoTuneModel, the NVLS branches).
AlgorithmChoice nvls_estimate(cost::CollectiveKind kind, const Communicator& comm, Algorithm a, Protocol p,
                              Bytes bytes) {
    AlgorithmChoice c{a, p, 0.0, 0.0};
    const bool all_reduce = kind == cost::CollectiveKind::AllReduce;
    const bool gather_scatter =
        kind == cost::CollectiveKind::AllGather || kind == cost::CollectiveKind::ReduceScatter;
    const std::int64_t nodes = comm.nodes;
    // NVLS runs Simple only and needs >= 2 channels; NVLS tree is all-reduce across nodes only; NVLS
    // across nodes needs CollNet, and its all-gather / reduce-scatter a CollNet plugin that has them.
    if (p != Protocol::Simple || comm.nvls_channels < 2 || (a == Algorithm::NvlsTree && nodes == 1) ||
        (a == Algorithm::NvlsTree && !all_reduce) || (a == Algorithm::Nvls && nodes > 1 && !comm.collnet) ||
        (a == Algorithm::Nvls && !all_reduce && (!gather_scatter || nodes > 1))) {
        return c;
    }
    const auto gi = static_cast<std::size_t>(comm.generation);
    const std::size_t index2 = nodes <= 2 ? static_cast<std::size_t>(nodes - 1) : 2;
    const double ch = static_cast<double>(comm.nvls_channels);
    const double ppn = static_cast<double>(comm.ranks) / static_cast<double>(nodes);
    double intra = comm.nvls_bw_intra_GBps * kNvlsEfficiency[gi] * (ch - 1.0) / ch;
    intra *= all_reduce ? 2.0 : (ppn - 1.0) / ppn;  // all-reduce pipelines two operations
    const double inter = comm.nvls_bw_inter_GBps * (nodes <= 2 && a == Algorithm::NvlsTree ? 2.0 : 1.0);
    double bw = std::min(intra, inter);
    if (a == Algorithm::NvlsTree) {
        bw = std::min(bw, kNvlsTreePerChannel[gi][index2]);
    }
    double bus = ch * bw;
    if (all_reduce) {  // bus to algorithm bandwidth as the ring: × nRanks / nsteps
        bus *= static_cast<double>(comm.ranks) / static_cast<double>(2 * (comm.ranks - 1));
    }
    c.algbw_GBps = bus;
    if (a == Algorithm::Nvls) {
        c.latency_us = kNvlsNvlinkLatencyUs + (nodes > 1 ? kNvlsNetLatencyUs : 0.0);
    } else {
        c.latency_us = kNvlsNvlinkLatencyUs + 2.0 * log2i(nodes) * kNvlsTreeNetLatencyUs;
        // ncclTopoGetAlgoTime corrects NVLS tree by size on Blackwell x86 hosts only.
        const int log_size = log2i(bytes.value >> 6);
        if (comm.generation == GpuGeneration::Blackwell && log_size >= 0 && log_size < 24) {
            c.algbw_GBps *= kTreeCorrection[2][static_cast<std::size_t>(log_size)];
        }
    }
    return c;
}

}  // namespace

NvlsGraph nvls_graph(GpuGeneration generation, bool nvswitch_sharp, std::int64_t gpus_per_node,
                     std::int64_t nodes, std::int64_t nics, double nvlink_GBps, double nic_GBps) {
    NvlsGraph g;
    const bool hopper_or_later =
        generation == GpuGeneration::Hopper || generation == GpuGeneration::Blackwell;
    if (!nvswitch_sharp || !hopper_or_later || gpus_per_node < 2) {
        return g;
    }
    const bool blackwell = generation == GpuGeneration::Blackwell;
    const std::span<const double> intra_steps =
        blackwell ? std::span<const double>(kSm100SpeedIntra) : std::span<const double>(kSm90SpeedIntra);
    const std::span<const double> inter_steps =
        blackwell ? std::span<const double>(kSm100SpeedInter) : std::span<const double>(kSm90SpeedInter);
    g.channels = std::min(kMaxNvlsArity, nodes > 1 ? std::min(gpus_per_node, nics) : gpus_per_node);
    const std::size_t i = step_within(intra_steps, nvlink_GBps / static_cast<double>(g.channels + 1));
    g.bw_intra_GBps = intra_steps[i];
    if (nodes > 1) {
        g.bw_inter_GBps = inter_steps[step_within(inter_steps, nic_GBps)];
    } else {
        std::size_t j = i;
        while (j > 0 && intra_steps[j] < 2.0 * g.bw_intra_GBps) {
            --j;
        }
        g.bw_inter_GBps = intra_steps[j];
    }
    return g;
}

const char* to_string(Algorithm a) {
    switch (a) {
    case Algorithm::Ring:
        return "ring";
    case Algorithm::Tree:
        return "tree";
    case Algorithm::Nvls:
        return "nvls";
    case Algorithm::NvlsTree:
        return "nvls_tree";
    }
    return "?";
}

const char* to_string(Protocol p) {
    switch (p) {
    case Protocol::LL:
        return "LL";
    case Protocol::LL128:
        return "LL128";
    case Protocol::Simple:
        return "Simple";
    }
    return "?";
}

AlgorithmChoice nccl_estimate(cost::CollectiveKind kind, const Communicator& comm, Algorithm a, Protocol p,
                              Bytes bytes) {
    if (comm.ranks < 2 || comm.nodes < 1 || comm.channels < 1 || !(comm.bw_per_channel_GBps > 0.0)) {
        throw std::invalid_argument(
            "nccl_estimate: a communicator of >= 2 ranks, >= 1 channel and bandwidth > 0");
    }
    if (a == Algorithm::Nvls || a == Algorithm::NvlsTree) {
        return nvls_estimate(kind, comm, a, p, bytes);
    }
    const auto ai = static_cast<std::size_t>(a);  // Ring 0, Tree 1
    const auto pi = static_cast<std::size_t>(p);
    const auto gi = static_cast<std::size_t>(comm.generation);
    AlgorithmChoice c{a, p, 0.0, 0.0};
    const bool all_reduce = kind == cost::CollectiveKind::AllReduce;
    // Trees exist for all-reduce only; all-gather and reduce-scatter run as rings (PAT and NVLS aside).
    if (a == Algorithm::Tree && !all_reduce) {
        return c;
    }
    const std::int64_t n = comm.ranks;
    const std::int64_t nodes = comm.nodes;
    const std::int64_t nsteps = all_reduce ? 2 * (n - 1) : n - 1;
    const std::size_t index2 = nodes <= 2 ? static_cast<std::size_t>(nodes - 1) : 2;
    const std::size_t index1 = nodes == 1 ? gi : (comm.amd_host ? 1 : 0);
    const double ll_max = kLlMaxBw[index1][index2];
    const auto ch = static_cast<double>(comm.channels);

    double bus = ch * comm.bw_per_channel_GBps;
    if (a == Algorithm::Ring && p == Protocol::LL)
        bus = std::min(ll_max, bus * 0.5);
    if (a == Algorithm::Ring && p == Protocol::LL128)
        bus = std::min(bus * 0.92, ch * kRingLL128PerChannel[gi][index2]);
    if (a == Algorithm::Tree)
        bus = std::min(bus * 0.92, ch * kTreePerChannel[gi][index2]);
    if (a == Algorithm::Tree && p == Protocol::LL)
        bus = std::min(bus / 3.8, ll_max);
    if (a == Algorithm::Tree && p == Protocol::LL128) {
        bus = std::min(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * kTreeLL128PerChannel[gi][index2]);
    }
    // From bus bandwidth to the algorithm bandwidth the time divides by.
    c.algbw_GBps =
        a == Algorithm::Ring ? bus * static_cast<double>(n) / static_cast<double>(nsteps) : bus * 0.5;

    double latency = kBaseLatency[ai][pi];
    const double intra = kNvlinkLatency[ai][pi];
    const double ppn = static_cast<double>(n) / static_cast<double>(nodes);
    const double inter = ppn == 1.0 ? kNetLatency[1][pi] : kNetLatency[ai][pi];
    if (a == Algorithm::Ring) {
        const double net_overhead = comm.amd_host ? kNetOverheadAmdUs : kNetOverheadIntelUs;
        const double overhead = nodes > 1 ? net_overhead * (p == Protocol::Simple ? 3.0 : 1.0) : 0.0;
        const std::int64_t inter_steps = nodes == 1 ? 0 : all_reduce ? 2 * (nodes - 1) : nodes - 1;
        latency += static_cast<double>(nsteps - inter_steps) * std::max(intra, overhead) +
                   static_cast<double>(inter_steps) * inter;
        // ncclTopoGetAlgoTime: the ring's "plateau effect" on multi-node Simple all-reduce (sm80+).
        if (p == Protocol::Simple && nodes > 1 && all_reduce && bytes.value / (comm.channels * n) >= 64) {
            latency *= 1.4;
        }
    } else {
        latency += 2.0 * ((static_cast<double>(n / nodes) - 1.0) * intra + log2i(nodes) * inter);
        const int log_size = log2i(bytes.value >> 6);
        if (log_size >= 0 && log_size < 23) {
            c.algbw_GBps *= kTreeCorrection[pi][static_cast<std::size_t>(log_size)];
        }
    }
    c.latency_us = latency;
    return c;
}

AlgorithmChoice nccl_choose(cost::CollectiveKind kind, const Communicator& comm, Bytes bytes) {
    AlgorithmChoice best;
    double best_us = std::numeric_limits<double>::infinity();
    // NCCL's algorithm order (NCCL_ALGO_*): tree, ring, (CollNet direct, chain,) NVLS, NVLS tree.
    for (const Algorithm a : {Algorithm::Tree, Algorithm::Ring, Algorithm::Nvls, Algorithm::NvlsTree}) {
        for (const Protocol p : {Protocol::LL, Protocol::LL128, Protocol::Simple}) {
            const AlgorithmChoice c = nccl_estimate(kind, comm, a, p, bytes);
            if (c.algbw_GBps <= 0.0) {
                continue;
            }
            const double us = c.time(bytes).value * 1e6;
            if (us < best_us) {
                best_us = us;
                best = c;
            }
        }
    }
    return best;
}

}  // namespace trainsim::network
