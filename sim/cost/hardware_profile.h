// A hardware profile: peak rates and fitted cost curves, each value with where it came from.
// Loaded from scenarios/hardware/<name>.json (format documented in scenarios/hardware/README.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/strict_json.h"
#include "sim/core/units.h"
#include "sim/cost/curve.h"
#include "sim/cost/profile_provenance.h"

namespace trainsim::cost {

/// Collectives inside one node (NVLink through NVSwitch). The busbw curve is a measured nccl-tests
/// all-reduce at `measured_group_size` ranks; its time contains that call's latency, which the cost
/// model takes out before scaling the bandwidth part to other kinds and group sizes (README "Costs").
struct IntraNodeLinks {
    Curve busbw_GBps_vs_bytes;        // nccl-tests all-reduce bus bandwidth against the array size S
    int measured_group_size = 0;      // n of that measurement
    double latency_base_us = 0.0;     // per-collective latency, NCCL's base term
    double latency_per_hop_us = 0.0;  // per ring step over NVLink
    double p2p_GBps = 0.0;            // send/recv bandwidth of one pair
    double p2p_latency_us = 0.0;
    double compute_share_while_overlapped = 0.0;  // of the SMs/HBM a running collective takes from compute

    /// NCCL's ring latency for `steps` steps over NVLink: 2(n-1) for an all-reduce, n-1 for AG and RS.
    [[nodiscard]] double ring_latency_us(int steps) const {
        return latency_base_us + steps * latency_per_hop_us;
    }
    friend bool operator==(const IntraNodeLinks&, const IntraNodeLinks&) = default;
};

/// Collectives across nodes (InfiniBand, one NIC per GPU, rail-aligned).
struct InterNodeLinks {
    double nic_GBps = 0.0;  // effective bandwidth of one NIC (one rail) for large messages
    int nics_per_node = 0;
    Curve busbw_efficiency_vs_bytes;  // fraction of the rails' bandwidth reached at array size S
    double latency_base_us = 0.0;
    double ring_hop_latency_us = 0.0;  // per network step of a ring (all-gather, reduce-scatter)
    double tree_hop_latency_us = 0.0;  // per tree level across nodes (all-reduce)
    double p2p_latency_us = 0.0;       // send/recv over one rail; bandwidth is nic_GBps
    double compute_share_while_overlapped = 0.0;
    friend bool operator==(const InterNodeLinks&, const InterNodeLinks&) = default;
};

/// What an NCCL collective holds on each GPU while it runs (optional section network.collective_contention,
/// README "Contention"; used by hardware.collective_contention=nccl_channels,
/// sim/cost/collective_contention.h).
struct CollectiveContention {
    int intra_node_channels = 0;  // NCCL channels (one CTA, one SM each) of a collective on NVLink
    int inter_node_channels = 0;  // the same for a collective across nodes
    // HBM bytes read and written on a GPU per byte of its bus traffic, in a ring step that reduces what it
    // receives (reduce-scatter, the first half of an all-reduce) and in one that only copies it on
    // (all-gather, the second half of an all-reduce; all-to-all and send/recv).
    double hbm_bytes_per_reduced_byte = 0.0;
    double hbm_bytes_per_copied_byte = 0.0;
    friend bool operator==(const CollectiveContention&, const CollectiveContention&) = default;
};

/// The CPU side of running a training step (README "Host"): what the GPU waits for when the CPU cannot
/// run ahead of it, e.g. after Megatron's torch.cuda.synchronize() behind each pipeline transfer.
struct HostCosts {
    double kernel_launch_us = 0.0;        // from the CPU's launch call to the kernel starting on an idle GPU
    double op_dispatch_us = 0.0;          // CPU time per compute op (Python, PyTorch dispatch, launch call)
    double collective_dispatch_us = 0.0;  // CPU time per torch.distributed collective
    friend bool operator==(const HostCosts&, const HostCosts&) = default;
};

/// Spread of GPU speed between GPUs of one SKU (README "Variability"; DESIGN.md §8).
struct GpuVariability {
    double gpu_slowdown_stddev = 0.0;  // standard deviation of a GPU's kernel-time factor around 1
    // Standard deviation of one kernel launch's time around its GPU's typical time for that kernel
    // (run-to-run jitter); absent: the profile gives none (variability.kernel_jitter then fails).
    std::optional<double> kernel_jitter_stddev;
    friend bool operator==(const GpuVariability&, const GpuVariability&) = default;
};

struct HardwareProfile {
    std::string name;
    std::string description;
    double peak_tflops = 0.0;         // dense 16-bit tensor-core peak, the MFU denominator
    double fp8_peak_tflops = 0.0;     // dense FP8 tensor-core peak; 0: the GPU has no FP8 tensor cores
    double compute_capability = 0.0;  // CUDA compute capability (8.0, 9.0, 10.0); 0: not given
    double hbm_GBps = 0.0;
    Bytes memory_visible{0};   // what CUDA reports as total global memory
    Bytes memory_reserved{0};  // CUDA context, NCCL buffers, fragmentation
    int gpus_per_node = 8;

    Curve gemm_efficiency_vs_flops;  // fraction of peak against 2mnk·batch
    double gemm_min_kernel_us = 0.0;
    int num_sms = 0;  // for wave quantization
    int tile_m = 0;
    int tile_n = 0;
    Curve fp8_gemm_efficiency_vs_flops;  // fraction of fp8_peak_tflops; read only when has_fp8()
    // Time of an FP8 GEMM that promotes its accumulator to FP32 at intervals (fast accumulation off, as
    // Transformer Engine runs dgrad and wgrad) over the curve's fast-accumulation time; 1: no difference
    // (or not measured: the optional compute.gemm_fp8.split_accumulator_slowdown is absent).
    double fp8_split_accumulator_slowdown = 1.0;
    double attention_score_efficiency = 0.0;  // QKᵀ batched GEMM, fraction of peak_tflops
    double attention_over_value_efficiency = 0.0;
    // Causal FlashAttention efficiency (fraction of peak_tflops on the causal FLOPs) against the sequence
    // length, forward and backward; empty when the profile has none (then attention_backend=flash fails).
    // These are measured at head dimension 128 (FA2 and FA3 benchmark 64, 128 and 256); the optional
    // head-dimension-64 pair lets the cost model interpolate for smaller heads. Empty: 128's used for all.
    Curve flash_forward_efficiency_vs_seq_length;
    Curve flash_backward_efficiency_vs_seq_length;
    Curve flash_forward_efficiency_vs_seq_length_head_dim_64;
    Curve flash_backward_efficiency_vs_seq_length_head_dim_64;

    Curve memory_bound_efficiency_vs_bytes;  // fraction of hbm_GBps
    double memory_bound_launch_us = 0.0;
    // Per-kernel factors applied on top of the curve (1.0 = streaming ceiling), indexed by MemoryBoundKind.
    std::vector<double> memory_bound_kind_factor;

    IntraNodeLinks intra_node;
    InterNodeLinks inter_node;

    std::optional<CollectiveContention>
        collective_contention;                  // optional section network.collective_contention
    std::optional<HostCosts> host;              // optional section: needed by parallelism.batch_p2p_sync
    std::optional<GpuVariability> variability;  // optional section: needed by variability.mode

    ProfileProvenance provenance;  // where each number came from, as the file says (for writing it back)

    [[nodiscard]] bool has_fp8() const { return fp8_peak_tflops > 0.0; }
    friend bool operator==(const HardwareProfile&, const HardwareProfile&) = default;
};

/// The profile in `root`, a parsed profile document, validated. `name` is the file's stem, which the
/// document's "name" must equal. Throws trainsim::InputError naming the field and the rule.
[[nodiscard]] HardwareProfile profile_from_json(const std::string& name, const Json& root);

/// Loads and validates a profile. A name without '/' or ".json" is looked up in `search_dir`.
/// Throws trainsim::InputError naming the field and the rule on any problem.
[[nodiscard]] HardwareProfile load_hardware_profile(const std::string& name_or_path,
                                                    const std::string& search_dir);

}  // namespace trainsim::cost
