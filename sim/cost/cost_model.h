// The cost model: op → seconds, collective over a group → seconds, from a hardware profile.
// It knows hardware, not transformers: callers describe a GEMM by its shape and a kernel by its bytes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/units.h"
#include "sim/cost/curve.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::cost {

/// One GEMM call C[m,n] = A[m,k]·B[k,n], repeated `batch` times (a batched GEMM, as in core attention).
struct GemmShape {
    std::int64_t m = 0;
    std::int64_t n = 0;
    std::int64_t k = 0;
    std::int64_t batch = 1;
    [[nodiscard]] Flops flops() const {
        return Flops{2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
                     static_cast<double>(batch)};
    }
    friend bool operator==(const GemmShape&, const GemmShape&) = default;
};

/// Which dimension of a grouped GEMM's per-expert shape carries the expert's tokens: m in the forward
/// and the data gradient, k in the weight gradient.
enum class TokenDim : std::uint8_t { M, K };

/// `count` experts of a grouped GEMM that each run `tokens` rows.
struct ExpertGemms {
    std::int64_t tokens = 0;
    std::int64_t count = 0;
    friend bool operator==(const ExpertGemms&, const ExpertGemms&) = default;
};

/// A grouped GEMM (Transformer Engine's GroupedLinear under Megatron's moe_grouped_gemm): one GEMM per
/// local expert, each on its own tokens. TE's general_grouped_gemm launches one cuBLAS GEMM per expert
/// (transformer_engine/common/gemm/cublaslt_gemm.cu, multi_stream_cublas_gemm; the CUTLASS grouped
/// kernel is Hopper-only and opt-in, NVTE_USE_CUTLASS_GROUPED_GEMM), so each expert's GEMM reads the
/// efficiency of its own FLOPs. Empty `experts`: not a grouped GEMM.
struct GroupedGemm {
    TokenDim tokens_in = TokenDim::M;
    std::vector<ExpertGemms> experts;
    [[nodiscard]] bool empty() const { return experts.empty(); }
    /// `like` (one expert's shape; its batch ignored) with `tokens` in the token dimension.
    [[nodiscard]] GemmShape expert_shape(const GemmShape& like, std::int64_t tokens) const {
        GemmShape s = like;
        (tokens_in == TokenDim::M ? s.m : s.k) = tokens;
        s.batch = 1;
        return s;
    }
    /// The FLOPs of every expert's GEMM together.
    [[nodiscard]] Flops flops(const GemmShape& like) const {
        double total = 0.0;
        for (const ExpertGemms& e : experts) {
            total += static_cast<double>(e.count) * expert_shape(like, e.tokens).flops().value;
        }
        return Flops{total};
    }
    friend bool operator==(const GroupedGemm&, const GroupedGemm&) = default;
};

/// Which efficiency curve a GEMM reads: dense projections, or core attention's batched GEMMs
/// (QKᵀ has a small k = head dim and reads far below the dense curve; see the profile's sources).
/// FlashForward/FlashBackward are whole causal FlashAttention kernels described as a batched GEMM
/// {m = n = s, k = head dim, batch = passes × b·heads} whose FLOPs are the non-causal count (FA2 §4.1:
/// 4·s²·d per head forward, 2.5 × that backward); the kernel skips the masked half, and its time
/// reads the profile's causal FlashAttention efficiency against s (= m).
enum class GemmClass { Dense, AttentionScore, AttentionOverValue, FlashForward, FlashBackward };

/// The input precision of a dense GEMM: BF16/FP16, or FP8 (Transformer Engine, Hopper and later), which
/// reads the profile's FP8 peak and curve. Fp8SplitAccumulator is an FP8 GEMM whose partial sums are
/// promoted to FP32 at intervals (cuBLASLt CUBLASLT_MATMUL_DESC_FAST_ACCUM = 0, TE's
/// use_split_accumulator): the profile's FP8 curve is fast accumulation's, and this takes
/// compute.gemm_fp8.split_accumulator_slowdown times as long.
enum class GemmPrecision : std::uint8_t { Bf16, Fp8, Fp8SplitAccumulator };

/// True for both FP8 precisions.
[[nodiscard]] constexpr bool is_fp8(GemmPrecision p) {
    return p == GemmPrecision::Fp8 || p == GemmPrecision::Fp8SplitAccumulator;
}

/// Memory-bound kernels of a Megatron layer; each may have its own achieved-bandwidth factor. Rope is
/// Transformer Engine's fused RoPE kernel; CrossEntropy and CrossEntropyFused are Megatron-Core's
/// vocab-parallel cross-entropy passes, eager and torch.compile'd (cross_entropy_passes.h): framework
/// kernels whose measured speed differs from a streaming kernel's at the same bytes.
enum class MemoryBoundKind {
    LayerNorm,
    BiasGelu,
    BiasDropoutAdd,
    ScaleMaskSoftmax,
    Dropout,
    Optimizer,
    Rope,
    CrossEntropy,
    CrossEntropyFused,
    Generic
};

/// Every kind in enum order: the order of a profile's memory_bound.kind_factors and of
/// HardwareProfile::memory_bound_kind_factor.
inline constexpr std::array<MemoryBoundKind, 10> kMemoryBoundKinds = {MemoryBoundKind::LayerNorm,
                                                                      MemoryBoundKind::BiasGelu,
                                                                      MemoryBoundKind::BiasDropoutAdd,
                                                                      MemoryBoundKind::ScaleMaskSoftmax,
                                                                      MemoryBoundKind::Dropout,
                                                                      MemoryBoundKind::Optimizer,
                                                                      MemoryBoundKind::Rope,
                                                                      MemoryBoundKind::CrossEntropy,
                                                                      MemoryBoundKind::CrossEntropyFused,
                                                                      MemoryBoundKind::Generic};

/// NCCL collectives, with nccl-tests' bus-bandwidth factors (DESIGN.md §6). AllToAll is the expert
/// dispatch/combine exchange (each rank sends 1/n of its buffer to every rank), priced from the same
/// curves by the rule at CostModel::collective.
enum class CollectiveKind { AllReduce, AllGather, ReduceScatter, SendRecv, AllToAll };

/// Where a group's traffic goes: all members inside one node (NVLink), or across nodes (InfiniBand).
enum class Scope { IntraNode, InterNode };

[[nodiscard]] const char* to_string(CollectiveKind k);
/// nccl-tests' bus-bandwidth factor of `kind` over n ranks (DESIGN.md §6): busbw = algbw · factor, and a
/// rank's bus traffic is S · factor.
[[nodiscard]] double busbw_factor(CollectiveKind kind, int n);
/// The collective a NCCL or profiler name means ("allreduce", "all_reduce", "AllGather_RING_LL",
/// "reduce_scatter", "send"/"recv"), case and underscores ignored; nullopt for any other.
[[nodiscard]] std::optional<CollectiveKind> collective_kind_from_name(const std::string& name);
[[nodiscard]] const char* to_string(Scope s);
[[nodiscard]] const char* to_string(MemoryBoundKind k);

class CostModel {
public:
    explicit CostModel(HardwareProfile profile);

    /// Time of one (batched) GEMM, 16-bit unless `precision` says FP8 (dense GEMMs only; the profile
    /// must have FP8, HardwareProfile::has_fp8).
    [[nodiscard]] Seconds gemm(const GemmShape& shape, GemmClass cls = GemmClass::Dense,
                               GemmPrecision precision = GemmPrecision::Bf16) const;

    /// Time of a grouped GEMM: the sum of its experts' GEMMs, each priced by gemm() on its own shape
    /// (`like` with the expert's tokens), so each reads the curve at its FLOPs, its own wave quantization
    /// and the kernel floor; an expert without tokens launches nothing.
    [[nodiscard]] Seconds grouped_gemm(const GemmShape& like, const GroupedGemm& grouped,
                                       GemmPrecision precision = GemmPrecision::Bf16) const;

    /// Time of a causal FlashAttention kernel (GemmClass::FlashForward/FlashBackward). Throws InputError
    /// when the profile has no FlashAttention curve.
    [[nodiscard]] Seconds flash_attention(const GemmShape& shape, bool backward) const;

    /// Time of a memory-bound kernel that reads and writes `bytes_moved` bytes in total.
    [[nodiscard]] Seconds memory_bound(Bytes bytes_moved, MemoryBoundKind kind) const;

    /// Time of a collective. `bytes` is nccl-tests' S: the total array size (for all-gather the
    /// gathered output, for reduce-scatter the input, for send/recv the message, for all-to-all each
    /// rank's send buffer, S/n to every rank). `group_size` is n;
    /// `nodes` is how many nodes the group spans (1 for IntraNode). `busy_ranks_per_node` is how many
    /// GPUs of each node drive the network at the same time, this group's and other groups' (0: only
    /// this group's): beyond the node's NICs they share them.
    [[nodiscard]] Seconds collective(CollectiveKind kind, Bytes bytes, int group_size, Scope scope,
                                     int nodes = 1, int busy_ranks_per_node = 0) const;

    /// How much longer a compute kernel takes while a collective of `scope` runs beside it: NCCL's
    /// kernels occupy SMs and memory bandwidth, 1 / (1 − the profile's compute share).
    [[nodiscard]] double compute_slowdown_while_overlapped(Scope scope) const;
    /// The same for a collective that holds `sms` of the GPU's SMs (wave_quantization.num_sms): compute
    /// runs on the rest.
    [[nodiscard]] double compute_slowdown_beside_sms(int sms) const;

    [[nodiscard]] const HardwareProfile& profile() const { return profile_; }

    /// Warnings raised so far (e.g. a read outside a curve's measured range). Each once per key (a curve
    /// and a direction), naming the first op that raised it.
    [[nodiscard]] const std::vector<std::string>& warnings() const { return warnings_; }

private:
    void warn(const std::string& key, const std::string& message) const;
    /// collective()'s all-to-all across `nodes` nodes; `busbw` the group's network bytes/s at S.
    [[nodiscard]] double inter_node_all_to_all_s(double s, int n, int nodes, double busbw,
                                                 const CurveRead& eff) const;

    HardwareProfile profile_;
    mutable std::vector<std::string> warnings_;
    mutable std::vector<std::string> warning_keys_;
};

}  // namespace trainsim::cost
