#include "sim/cost/cost_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include "sim/core/input_error.h"
#include "sim/cost/format_number.h"

namespace trainsim::cost {

namespace {

// Unit conversions only; every rate and latency comes from the profile.
constexpr double kSecondsPerMicrosecond = 1e-6;
constexpr double kBytesPerGB = 1e9;
constexpr double kFlopsPerTflop = 1e12;

// One message per curve and direction, without the value read, so that the text does not depend on
// which op happened to read first and the list stays short.
// Below a collective curve's smallest message the time is latency-bound: a clamped bandwidth read
// there is worth a warning only when the bandwidth part still carries weight in the result.
constexpr double kNegligibleShare = 0.05;
bool matters(CurveRange range, double bandwidth_s, double total_s) {
    return range == CurveRange::AboveLast || bandwidth_s > kNegligibleShare * total_s;
}

// Names the curve and the end it was clamped to, then the first op that read past it, at what x and how
// far out, so that a user can tell whether the read matters ("all_reduce of 2048 bytes over 8 ranks").
std::string clamp_warning(const char* what, const char* unit, const Curve& curve, CurveRange range,
                          double read, const std::string& op) {
    const bool below = range == CurveRange::BelowFirst;
    const double x = below ? curve.x.front() : curve.x.back();
    const double y = below ? curve.y.front() : curve.y.back();
    return std::string("cost: ") + what + " read " +
           (below ? "below the profile's smallest" : "above the profile's largest") + " point " +
           format_number(x) + " " + unit + "; clamped to " + format_number(y) + " (first by " + op + ", " +
           format_number(read) + " " + unit + ", " + format_number(below ? x / read : read / x) + "x " +
           (below ? "below" : "above") + " it)";
}

std::string warning_key(const char* what, CurveRange range) {
    return std::string(what) + (range == CurveRange::BelowFirst ? " below" : " above");
}

std::string collective_text(CollectiveKind kind, double bytes, int n) {
    return std::string(to_string(kind)) + " of " + format_number(bytes) + " bytes over " + std::to_string(n) +
           " ranks";
}

double ceil_div(std::int64_t a, std::int64_t b) {
    return static_cast<double>((a + b - 1) / b);
}

// Wave quantization, as a correction to the efficiency curve (README "GEMM"). A GEMM whose output tiles
// are fewer than the SMs leaves SMs idle for its whole run; with more than one wave cuBLAS's choice among
// tile sizes and split-K smooths the tail, and the curve's measured points (5 to 119 waves) already carry
// that average loss, so multi-wave shapes get no correction. The curve's small points are cubes (Azure
// m=n=k), which are themselves single partial waves; the fill is therefore taken relative to a cube of
// the same FLOPs, so a measured cube is not penalised twice. Capped at 1: never faster than the curve.
double wave_factor(const GemmShape& s, double flops, const HardwareProfile& p) {
    const double sms = p.num_sms;
    const double tiles = ceil_div(s.m, p.tile_m) * ceil_div(s.n, p.tile_n) * static_cast<double>(s.batch);
    const double cube_tiles = std::pow(flops / 2.0, 2.0 / 3.0) / (static_cast<double>(p.tile_m) * p.tile_n);
    const double fill = std::min(1.0, tiles / sms);
    const double cube_fill = std::min(1.0, cube_tiles / sms);
    return std::min(1.0, fill / cube_fill);
}

// Ring steps of NCCL's latency model: 2(n-1) for all-reduce, n-1 for all-gather and reduce-scatter.
int ring_steps(CollectiveKind kind, int n) {
    return kind == CollectiveKind::AllReduce ? 2 * (n - 1) : n - 1;
}

// Seconds for one GPU to send `bytes` over its NVLinks at the profile's point-to-point rate.
double nvlink_send_s(double bytes, const IntraNodeLinks& l) {
    return bytes / (l.p2p_GBps * kBytesPerGB);
}

int ceil_log2(int v) {
    int levels = 0;
    while ((1 << levels) < v) {
        ++levels;
    }
    return levels;
}

}  // namespace

double busbw_factor(CollectiveKind kind, int n) {
    switch (kind) {
    case CollectiveKind::AllReduce:
        return 2.0 * (n - 1) / n;
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllToAll:  // nccl-tests' alltoall: each rank sends (n−1)/n of S
        return static_cast<double>(n - 1) / n;
    case CollectiveKind::SendRecv:
        return 1.0;
    }
    throw std::invalid_argument("cost: unknown collective kind");
}

const char* to_string(CollectiveKind k) {
    switch (k) {
    case CollectiveKind::AllReduce:
        return "all_reduce";
    case CollectiveKind::AllGather:
        return "all_gather";
    case CollectiveKind::ReduceScatter:
        return "reduce_scatter";
    case CollectiveKind::SendRecv:
        return "send_recv";
    case CollectiveKind::AllToAll:
        return "all_to_all";
    }
    return "unknown";
}

std::optional<CollectiveKind> collective_kind_from_name(const std::string& name) {
    std::string n;
    for (const char c : name) {
        if (c != '_') {
            n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
    }
    if (n.rfind("allreduce", 0) == 0) {
        return CollectiveKind::AllReduce;
    }
    if (n.rfind("allgather", 0) == 0) {
        return CollectiveKind::AllGather;
    }
    if (n.rfind("reducescatter", 0) == 0) {
        return CollectiveKind::ReduceScatter;
    }
    if (n == "send" || n == "recv" || n == "sendrecv") {
        return CollectiveKind::SendRecv;
    }
    return std::nullopt;
}

const char* to_string(Scope s) {
    switch (s) {
    case Scope::IntraNode:
        return "intra_node";
    case Scope::InterNode:
        return "inter_node";
    }
    return "unknown";
}

// These spellings are also the keys of the profile's memory_bound.kind_factors.
const char* to_string(MemoryBoundKind k) {
    switch (k) {
    case MemoryBoundKind::LayerNorm:
        return "layernorm";
    case MemoryBoundKind::BiasGelu:
        return "bias_gelu";
    case MemoryBoundKind::BiasDropoutAdd:
        return "bias_dropout_add";
    case MemoryBoundKind::ScaleMaskSoftmax:
        return "scale_mask_softmax";
    case MemoryBoundKind::Dropout:
        return "dropout";
    case MemoryBoundKind::Optimizer:
        return "optimizer";
    case MemoryBoundKind::Rope:
        return "rope";
    case MemoryBoundKind::CrossEntropy:
        return "cross_entropy";
    case MemoryBoundKind::CrossEntropyFused:
        return "cross_entropy_fused";
    case MemoryBoundKind::Generic:
        return "generic";
    }
    return "unknown";
}

CostModel::CostModel(HardwareProfile profile) : profile_(std::move(profile)) {
    if (profile_.memory_bound_kind_factor.size() != static_cast<std::size_t>(MemoryBoundKind::Generic) + 1) {
        throw std::invalid_argument(
            "CostModel: memory_bound_kind_factor needs one factor per MemoryBoundKind");
    }
}

void CostModel::warn(const std::string& key, const std::string& message) const {
    if (std::find(warning_keys_.begin(), warning_keys_.end(), key) == warning_keys_.end()) {
        warning_keys_.push_back(key);
        warnings_.push_back(message);
    }
}

Seconds CostModel::gemm(const GemmShape& shape, GemmClass cls, GemmPrecision precision) const {
    if (shape.m < 0 || shape.n < 0 || shape.k < 0 || shape.batch < 1) {
        throw std::invalid_argument("CostModel::gemm: dimensions must be >= 0 and batch >= 1");
    }
    const double flops = shape.flops().value;
    if (flops == 0.0) {
        return Seconds{0.0};  // no work, no kernel
    }
    if (is_fp8(precision)) {
        if (cls != GemmClass::Dense || !profile_.has_fp8()) {
            throw std::invalid_argument("CostModel::gemm: FP8 is for dense GEMMs on a profile with FP8");
        }
        const Curve& curve = profile_.fp8_gemm_efficiency_vs_flops;
        const CurveRead eff = read_curve(curve, flops);
        if (eff.range != CurveRange::Inside) {
            warn(warning_key("fp8 gemm efficiency", eff.range),
                 clamp_warning("fp8 gemm efficiency", "FLOPs", curve, eff.range, flops,
                               "fp8 gemm " + std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" +
                                   std::to_string(shape.k) + " batch " + std::to_string(shape.batch)));
        }
        const double rate =
            profile_.fp8_peak_tflops * kFlopsPerTflop * eff.y * wave_factor(shape, flops, profile_);
        const double fast = std::max(profile_.gemm_min_kernel_us * kSecondsPerMicrosecond, flops / rate);
        // The whole kernel at the slower rate: the promotions run inside its main loop.
        return Seconds{precision == GemmPrecision::Fp8SplitAccumulator
                           ? fast * profile_.fp8_split_accumulator_slowdown
                           : fast};
    }
    const double peak = profile_.peak_tflops * kFlopsPerTflop;
    double rate = 0.0;
    switch (cls) {
    case GemmClass::Dense: {
        const CurveRead eff = read_curve(profile_.gemm_efficiency_vs_flops, flops);
        if (eff.range != CurveRange::Inside) {
            warn(warning_key("gemm efficiency", eff.range),
                 clamp_warning("gemm efficiency", "FLOPs", profile_.gemm_efficiency_vs_flops, eff.range,
                               flops,
                               "gemm " + std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" +
                                   std::to_string(shape.k) + " batch " + std::to_string(shape.batch)));
        }
        rate = peak * eff.y * wave_factor(shape, flops, profile_);
        break;
    }
    case GemmClass::AttentionScore:
        rate = peak * profile_.attention_score_efficiency;
        break;
    case GemmClass::AttentionOverValue:
        rate = peak * profile_.attention_over_value_efficiency;
        break;
    case GemmClass::FlashForward:
    case GemmClass::FlashBackward:
        return flash_attention(shape, cls == GemmClass::FlashBackward);
    }
    return Seconds{std::max(profile_.gemm_min_kernel_us * kSecondsPerMicrosecond, flops / rate)};
}

Seconds CostModel::grouped_gemm(const GemmShape& like, const GroupedGemm& grouped,
                                GemmPrecision precision) const {
    double total = 0.0;
    for (const ExpertGemms& e : grouped.experts) {
        total += static_cast<double>(e.count) *
                 gemm(grouped.expert_shape(like, e.tokens), GemmClass::Dense, precision).value;
    }
    return Seconds{total};
}

Seconds CostModel::flash_attention(const GemmShape& shape, bool backward) const {
    const Curve& curve = backward ? profile_.flash_backward_efficiency_vs_seq_length
                                  : profile_.flash_forward_efficiency_vs_seq_length;
    const char* key =
        backward ? "flash_backward_efficiency_vs_seq_length" : "flash_forward_efficiency_vs_seq_length";
    if (curve.x.empty()) {
        throw InputError("profile " + profile_.name + " has no compute.attention." + key +
                         " curve, which training.attention_backend=flash or fused needs");
    }
    const auto seq = static_cast<double>(shape.m);
    const std::string what_op =
        std::string(backward ? "flash attention backward" : "flash attention forward") +
        " at sequence length " + std::to_string(shape.m);
    const auto read = [&](const Curve& c) {
        const CurveRead eff = read_curve(c, seq);
        if (eff.range != CurveRange::Inside) {
            const char* what =
                backward ? "FlashAttention backward efficiency" : "FlashAttention forward efficiency";
            warn(warning_key(what, eff.range), clamp_warning(what, "tokens", c, eff.range, seq, what_op));
        }
        return eff.y;
    };
    double efficiency = read(curve);
    // The main curves are measured at head dimension 128 (k is the head dimension). With a head-dim-64
    // pair, smaller heads interpolate linearly between the two and clamp at 64: FA3's Fig. 5 shows the
    // kernel's fraction of peak falling with the head dimension (less work per K/V tile loaded).
    const Curve& small = backward ? profile_.flash_backward_efficiency_vs_seq_length_head_dim_64
                                  : profile_.flash_forward_efficiency_vs_seq_length_head_dim_64;
    constexpr double kLargeHeadDim = 128.0;
    constexpr double kSmallHeadDim = 64.0;
    const auto head_dim = static_cast<double>(shape.k);
    if (!small.x.empty() && head_dim < kLargeHeadDim) {
        const double at_64 = read(small);
        const double t = std::max(0.0, (head_dim - kSmallHeadDim) / (kLargeHeadDim - kSmallHeadDim));
        efficiency = at_64 + t * (efficiency - at_64);
    }
    // Causal: only the blocks on and below the diagonal run, half the FLOPs (FA2 §4.1's convention for
    // the causal throughputs the curve holds).
    constexpr double kCausalShare = 0.5;
    const double rate = profile_.peak_tflops * kFlopsPerTflop * efficiency;
    return Seconds{std::max(profile_.gemm_min_kernel_us * kSecondsPerMicrosecond,
                            kCausalShare * shape.flops().value / rate)};
}

Seconds CostModel::memory_bound(Bytes bytes_moved, MemoryBoundKind kind) const {
    if (bytes_moved.value < 0) {
        throw std::invalid_argument("CostModel::memory_bound: bytes_moved must be >= 0");
    }
    if (bytes_moved.value == 0) {
        return Seconds{0.0};
    }
    const auto bytes = static_cast<double>(bytes_moved.value);
    const CurveRead eff = read_curve(profile_.memory_bound_efficiency_vs_bytes, bytes);
    if (eff.range != CurveRange::Inside) {
        warn(warning_key("memory-bound efficiency", eff.range),
             clamp_warning("memory-bound efficiency", "bytes", profile_.memory_bound_efficiency_vs_bytes,
                           eff.range, bytes, to_string(kind)));
    }
    const double factor = profile_.memory_bound_kind_factor[static_cast<std::size_t>(kind)];
    return Seconds{profile_.memory_bound_launch_us * kSecondsPerMicrosecond +
                   bytes / (profile_.hbm_GBps * kBytesPerGB * eff.y * factor)};
}

Seconds CostModel::collective(CollectiveKind kind, Bytes bytes, int group_size, Scope scope, int nodes,
                              int busy_ranks_per_node) const {
    if (group_size < 1 || bytes.value < 0) {
        throw std::invalid_argument("CostModel::collective: group_size must be >= 1 and bytes >= 0");
    }
    if (group_size == 1 || bytes.value == 0) {
        return Seconds{0.0};  // nothing leaves the GPU
    }
    if (kind == CollectiveKind::SendRecv && group_size != 2) {
        throw std::invalid_argument("CostModel::collective: send_recv is between one pair (group_size 2)");
    }
    const int n = group_size;
    const auto s = static_cast<double>(bytes.value);
    const double factor = busbw_factor(kind, n);

    if (scope == Scope::IntraNode) {
        if (nodes != 1 || n > profile_.gpus_per_node) {
            throw std::invalid_argument("CostModel::collective: an intra_node group spans 1 node and at most "
                                        "gpus_per_node ranks");
        }
        const IntraNodeLinks& l = profile_.intra_node;
        if (kind == CollectiveKind::SendRecv) {
            return Seconds{l.p2p_latency_us * kSecondsPerMicrosecond + s / (l.p2p_GBps * kBytesPerGB)};
        }
        // The curve is a measured all-reduce at n0 ranks: its time t0 = S·f0/busbw(S) contains that
        // call's latency. Take the latency out, then scale the bandwidth part by the factor ratio: the
        // per-GPU busbw through NVSwitch is the same for any group inside the node.
        const CurveRead busbw = read_curve(l.busbw_GBps_vs_bytes, s);
        const int n0 = l.measured_group_size;
        const double f0 = busbw_factor(CollectiveKind::AllReduce, n0);
        const double latency0_us = l.ring_latency_us(ring_steps(CollectiveKind::AllReduce, n0));
        // Clamped at 0: below the smallest point a clamped busbw can give t0 under the latency.
        const double bandwidth0 =
            std::max(0.0, s * f0 / (busbw.y * kBytesPerGB) - latency0_us * kSecondsPerMicrosecond);
        // All-to-all: every rank sends (n−1)/n of S through NVSwitch at once, the same per-GPU traffic
        // as an all-gather of S, so the same bandwidth part; NCCL issues its n−1 sends and receives as
        // one group, so it pays one point-to-point latency rather than a ring of n−1 steps.
        const double latency_us =
            kind == CollectiveKind::AllToAll ? l.p2p_latency_us : l.ring_latency_us(ring_steps(kind, n));
        // An all-to-all's (n−1)/n of S leaves each rank over its own NVLinks (NCCL's grouped sends):
        // never faster than the GPU's point-to-point rate. NVLS all-reduce curves (H100, B200) read
        // above it, the switch reducing in-network: 478.9 GB/s busbw against 370.8 on H100.
        const double bandwidth_s = kind == CollectiveKind::AllToAll
                                       ? std::max(bandwidth0 * factor / f0, nvlink_send_s(s * factor, l))
                                       : bandwidth0 * factor / f0;
        const double total_s = latency_us * kSecondsPerMicrosecond + bandwidth_s;
        if (busbw.range != CurveRange::Inside && matters(busbw.range, bandwidth_s, total_s)) {
            warn(warning_key("intra-node busbw", busbw.range),
                 clamp_warning("intra-node busbw", "bytes", l.busbw_GBps_vs_bytes, busbw.range, s,
                               collective_text(kind, s, n)));
        }
        return Seconds{total_s};
    }

    if (nodes < 2 || nodes > n) {
        throw std::invalid_argument("CostModel::collective: an inter_node group spans 2..group_size nodes");
    }
    const InterNodeLinks& l = profile_.inter_node;
    // Rail-aligned NICs: a node's GPUs each drive their own NIC while there are enough; more busy GPUs
    // than NICs share them evenly (e.g. 8 GPUs in data-parallel reductions on a 4-NIC node).
    const double nic_share = busy_ranks_per_node > l.nics_per_node
                                 ? static_cast<double>(l.nics_per_node) / busy_ranks_per_node
                                 : 1.0;
    if (kind == CollectiveKind::SendRecv) {
        return Seconds{l.p2p_latency_us * kSecondsPerMicrosecond +
                       s / (l.nic_GBps * nic_share * kBytesPerGB)};
    }
    // Rail-aligned NICs: each of the group's ranks on a node drives its own NIC, so a group with one rank
    // per node (a data-parallel group beside TP=8) gets one rail, and a full-node group gets all of them.
    const int ranks_per_node = (n + nodes - 1) / nodes;
    const int rails = std::min(ranks_per_node, l.nics_per_node);
    const CurveRead eff = read_curve(l.busbw_efficiency_vs_bytes, s);
    const double busbw = rails * l.nic_GBps * nic_share * kBytesPerGB * eff.y;
    if (kind == CollectiveKind::AllToAll) {
        return Seconds{inter_node_all_to_all_s(s, n, nodes, busbw, eff)};
    }
    // NCCL's latency model: all-reduce takes the tree when latency matters (log2 of the nodes), all-gather
    // and reduce-scatter only have the ring (every rank one step); intra-node hops run over NVLink.
    const double hop_us = profile_.intra_node.latency_per_hop_us;
    const double latency_us =
        kind == CollectiveKind::AllReduce
            ? l.latency_base_us +
                  2.0 * ((ranks_per_node - 1) * hop_us + ceil_log2(nodes) * l.tree_hop_latency_us)
            : l.latency_base_us + (n - nodes) * hop_us + (nodes - 1) * l.ring_hop_latency_us;
    const double bandwidth_s = s * factor / busbw;
    const double total_s = latency_us * kSecondsPerMicrosecond + bandwidth_s;
    if (eff.range != CurveRange::Inside && matters(eff.range, bandwidth_s, total_s)) {
        warn(warning_key("inter-node busbw efficiency", eff.range),
             clamp_warning("inter-node busbw efficiency", "bytes", l.busbw_efficiency_vs_bytes, eff.range, s,
                           collective_text(kind, s, n) + " on " + std::to_string(nodes) + " nodes"));
    }
    return Seconds{total_s};
}

// All-to-all across nodes (the expert dispatch and combine): with r = ⌈n / nodes⌉ ranks a node, each
// rank's S splits into S·(r−1)/n for its node's other ranks (NVLink) and S·(n−r)/n for other nodes.
// The node's r ranks push r·S·(n−r)/n through its rails together (`busbw`: the rails the group drives,
// their share of the NICs and the profile's efficiency at S; PXN routes off-rail traffic over NVLink to
// the matching rail first), while the NVLink part runs beside it at the intra-node all-gather's per-GPU
// rate (collective()'s intra-node rule with factor (r−1)/n). The two run concurrently, so the slower
// one is the bandwidth time; one network point-to-point latency on top (one group of sends).
double CostModel::inter_node_all_to_all_s(double s, int n, int nodes, double busbw,
                                          const CurveRead& eff) const {
    const InterNodeLinks& l = profile_.inter_node;
    const int r = (n + nodes - 1) / nodes;
    const double network_s = static_cast<double>(r) * s * static_cast<double>(n - r) / n / busbw;
    const double nvlink_s = r > 1 ? collective(CollectiveKind::AllGather, Bytes{static_cast<std::int64_t>(s)},
                                               r, Scope::IntraNode)
                                            .value -
                                        profile_.intra_node.ring_latency_us(r - 1) * kSecondsPerMicrosecond
                                  : 0.0;
    // The intra-node all-gather of S over r ranks moves (r−1)/r of S; the all-to-all moves (r−1)/n,
    // bound as inside a node by the GPU's point-to-point NVLink rate.
    const double nvlink_part_s =
        std::max(nvlink_s * static_cast<double>(r) / n,
                 nvlink_send_s(s * static_cast<double>(r - 1) / n, profile_.intra_node));
    const double bandwidth_s = std::max(network_s, nvlink_part_s);
    const double total_s = l.p2p_latency_us * kSecondsPerMicrosecond + bandwidth_s;
    if (eff.range != CurveRange::Inside && matters(eff.range, network_s, total_s)) {
        warn(warning_key("inter-node busbw efficiency", eff.range),
             clamp_warning("inter-node busbw efficiency", "bytes", l.busbw_efficiency_vs_bytes, eff.range, s,
                           collective_text(CollectiveKind::AllToAll, s, n) + " on " + std::to_string(nodes) +
                               " nodes"));
    }
    return total_s;
}

double CostModel::compute_slowdown_while_overlapped(Scope scope) const {
    const double share = scope == Scope::IntraNode ? profile_.intra_node.compute_share_while_overlapped
                                                   : profile_.inter_node.compute_share_while_overlapped;
    return 1.0 / (1.0 - share);
}

double CostModel::compute_slowdown_beside_sms(int sms) const {
    if (sms < 0 || sms >= profile_.num_sms) {
        throw std::invalid_argument("CostModel::compute_slowdown_beside_sms: needs 0 <= sms < num_sms");
    }
    return static_cast<double>(profile_.num_sms) / static_cast<double>(profile_.num_sms - sms);
}

}  // namespace trainsim::cost
