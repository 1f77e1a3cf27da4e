#include "sim/workload/fp8_layer.h"

#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_layers.h"

namespace trainsim::workload {
namespace {

using config::Fp8Recipe;

// The linear layers TE runs in FP8, by the names the op lists give their GEMMs, as Megatron-Core's TE
// layer specs build them (megatron/core/models/gpt/gpt_layer_specs.py, moe/experts.py TEGroupedMLP,
// moe/shared_experts.py). `norm_fused`: a TE LayerNormLinear, whose norm writes the FP8 input;
// `gathered`: column-parallel, its input all-gathered from the sequence shards under SP.
struct Fp8Linear {
    std::string_view name;
    bool norm_fused;
    bool gathered;
};
constexpr std::array<Fp8Linear, 13> kFp8Linears = {{
    // The GQA layer: LayerNormColumnParallelLinear qkv and fc1, RowParallelLinear proj and fc2.
    {"qkv", true, true},
    {"proj", false, false},
    {"fc1", true, true},
    {"fc2", false, false},
    // MLA (MLASelfAttention): TELinear down projections on the rank's tokens ("duplicated"), the
    // latents' norms fused into their column-parallel up projections, or a TEColumnParallelLinear q_proj
    // without q_lora_rank; its input norm is a separate TENorm.
    {"q_proj", false, true},
    {"q_down_proj", false, false},
    {"kv_down_proj", false, false},
    {"q_up_proj", true, true},
    {"kv_up_proj", true, true},
    // MoE: the shared expert's TEColumnParallelLinear / TERowParallelLinear (the pre-MLP norm is a
    // separate TENorm), and the routed experts' TE GroupedLinear (one batched GEMM per local expert).
    // The router stays out: its GEMM is a plain torch matmul in BF16 (or FP32), moe/router.py gating().
    {"shared_expert.fc1", false, true},
    {"shared_expert.fc2", false, false},
    {"experts.fc1", false, false},
    {"experts.fc2", false, false},
}};
// The SP all-gathers of the FP8 linears' inputs: forward (transformer_layer.cc, mla_attention.cc,
// moe_layer.cc) and the backward's re-gather for the wgrad (tensor_parallel_linear.cc). TE quantizes the
// local shard first and gathers FP8. (MLA's k_pos_emb gather is Megatron's, of a BF16 GEMM output.)
constexpr std::array<std::string_view, 14> kFp8Gathers = {"ln1.allgather",
                                                          "ln2.allgather",
                                                          "rmsnorm1.allgather",
                                                          "rmsnorm2.allgather",
                                                          "qkv.input_allgather",
                                                          "fc1.input_allgather",
                                                          "q_proj.allgather",
                                                          "q_proj.input_allgather",
                                                          "q_up_proj.allgather",
                                                          "kv_up_proj.allgather",
                                                          "q_up_proj.input_allgather",
                                                          "kv_up_proj.input_allgather",
                                                          "shared_expert.fc1.allgather",
                                                          "shared_expert.fc1.input_allgather"};

// Bytes per element of each kernel: reads plus writes.
constexpr std::int64_t kCastTransposeBytes = 2 + 1 + 1;  // read BF16, write FP8 and its transpose
constexpr std::int64_t kCastBytes = 2 + 1;               // read BF16, write FP8
constexpr std::int64_t kTransposeBytes = 1 + 1;          // read FP8, write its transpose
constexpr std::int64_t kAmaxBytes = 2;                   // read BF16 once more (current scaling)

template <std::size_t N> bool one_of(const std::array<std::string_view, N>& names, std::string_view name) {
    for (const std::string_view n : names) {
        if (n == name) {
            return true;
        }
    }
    return false;
}

const Fp8Linear* fp8_linear(std::string_view name) {
    for (const Fp8Linear& l : kFp8Linears) {
        if (l.name == name) {
            return &l;
        }
    }
    return nullptr;
}

enum class GemmPass { Forward, Dgrad, Wgrad, None };

// "fc1" -> (fc1, Forward), "experts.fc1.dgrad" -> (experts.fc1, Dgrad); any other op -> None.
std::pair<const Fp8Linear*, GemmPass> fp8_gemm_of(const Op& op) {
    if (op.kind != OpKind::Gemm || op.role != OpRole::Layer || op.gemm_class != cost::GemmClass::Dense) {
        return {nullptr, GemmPass::None};
    }
    std::string_view name = op.name;
    GemmPass pass = GemmPass::Forward;
    for (const auto& [suffix, p] : {std::pair<std::string_view, GemmPass>{".dgrad", GemmPass::Dgrad},
                                    std::pair<std::string_view, GemmPass>{".wgrad", GemmPass::Wgrad}}) {
        if (name.ends_with(suffix)) {
            name.remove_suffix(suffix.size());
            pass = p;
            break;
        }
    }
    const Fp8Linear* linear = fp8_linear(name);
    return {linear, linear != nullptr ? pass : GemmPass::None};
}

bool casts_in_layernorm(const Fp8Linear& gemm, Fp8Recipe recipe) {
    // TE's fused LayerNorm writes FP8 with a scale known in advance: only delayed scaling has one.
    return recipe == Fp8Recipe::Delayed && gemm.norm_fused;
}

// A LayerNorm-fed or sequence-gathered input is cast without its transpose in the forward; the wgrad
// transposes the (gathered) FP8 copy. Block-scaled recipes cannot transpose FP8 data (the scales run
// along one axis): their column-wise copy is quantized from BF16 in the forward, with the row-wise one.
bool transposes_in_backward(const Fp8Linear& gemm, bool sequence_parallel, Fp8Recipe recipe) {
    return (gemm.norm_fused || (gemm.gathered && sequence_parallel)) &&
           (recipe == Fp8Recipe::Delayed || recipe == Fp8Recipe::Tensorwise);
}

class Rewriter {
public:
    Rewriter(const OpList& in, const LayerShape& shape, Fp8Recipe recipe)
        : in_(in), shape_(shape), recipe_(recipe), index_(in.size(), -1) {}

    OpList run() {
        for (std::size_t i = 0; i < in_.size(); ++i) {
            Op op = in_[i];
            remap(op.after);
            if (op.host_waits_for >= 0) {
                op.host_waits_for = index_[static_cast<std::size_t>(op.host_waits_for)];
            }
            const auto [gemm, pass] = fp8_gemm_of(op);
            if (pass != GemmPass::None) {
                const std::size_t first = out_.size();
                insert_kernels_before(op, *gemm, pass);
                if (out_.size() > first) {
                    // The CPU waits before it issues the GEMM's first quantize kernel.
                    std::swap(out_[first].host_waits_for, op.host_waits_for);
                }
                op.gemm_precision = split_accumulator(pass) ? cost::GemmPrecision::Fp8SplitAccumulator
                                                            : cost::GemmPrecision::Fp8;
                if (pass == GemmPass::Forward) {
                    op.saved_bytes = Bytes{op.saved_bytes.value / 2};  // the wgrad's input, kept in FP8
                }
            }
            if (op.kind == OpKind::Collective && one_of(kFp8Gathers, op.name)) {
                op.collective_bytes = Bytes{op.collective_bytes.value / 2};
            }
            index_[i] = static_cast<std::int32_t>(out_.size());
            out_.push_back(std::move(op));
        }
        return std::move(out_);
    }

private:
    // Which GEMMs TE runs with its split accumulator (partial sums promoted to FP32, cuBLASLt
    // FAST_ACCUM off): dgrad and wgrad always (pytorch/module/base.py _2X_ACC_DGRAD = _2X_ACC_WGRAD =
    // True, _2X_ACC_FPROP = False, TE v1.8 and today; Float8CurrentScaling's fp8_gemm_* MMParams say the
    // same), the forward too under blockwise (common/recipe/__init__.py Float8BlockScaling asserts
    // use_split_accumulator on all three).
    [[nodiscard]] bool split_accumulator(GemmPass pass) const {
        if (!shape_.fp8_split_accumulator) {
            return false;
        }
        return pass != GemmPass::Forward || recipe_ == Fp8Recipe::Blockwise;
    }

    void remap(std::vector<std::int32_t>& after) const {
        for (std::int32_t& a : after) {
            a = index_[static_cast<std::size_t>(a)];
        }
    }

    // A memory-bound kernel run just before `before`, waiting for what it waits for.
    void kernel(const Op& before, std::string_view gemm, const char* what, std::int64_t bytes) {
        if (bytes <= 0) {
            return;
        }
        Op k;
        k.name = "fp8." + std::string(gemm) + "." + what;
        k.kind = OpKind::MemoryBound;
        k.stream = OpStream::Compute;
        k.role = before.role;
        k.is_recompute = before.is_recompute;
        k.memory_kind = cost::MemoryBoundKind::Generic;
        k.bytes_moved = Bytes{bytes};
        k.after = before.after;
        out_.push_back(std::move(k));
    }

    // Whether TE gathers the linear's input itself under SP: not the shared expert's fc1 under
    // moe_shared_expert_overlap, whose TE Linear has parallel_mode None and reads the tokens Megatron
    // gathered in BF16 (shared_experts.py pre_forward_comm): it quantizes them whole.
    [[nodiscard]] bool te_gathers(const Fp8Linear& linear) const {
        return linear.gathered && shape_.sequence_parallel &&
               !(shape_.shared_expert_overlap && linear.name == "shared_expert.fc1");
    }

    void insert_kernels_before(const Op& op, const Fp8Linear& linear, GemmPass pass) {
        const std::string_view gemm = linear.name;
        const bool amax = recipe_ == Fp8Recipe::Tensorwise;
        const bool transposes_later =
            transposes_in_backward(linear, te_gathers(linear) && shape_.tp > 1, recipe_);
        // The A operand of each GEMM as the op lists shape it: the input [m, k] in the forward, the output
        // gradient [m, k] in the dgrad, the (gathered) input [k = tokens] in the wgrad; a grouped GEMM
        // (the routed experts) has one per local expert, quantized together by TE's multi-tensor kernels.
        const std::int64_t a_elements = op.gemm.m * op.gemm.k * op.gemm.batch;
        switch (pass) {
        case GemmPass::Forward: {
            // With SP a gathered input is cast on the local sequence shard, then gathered in FP8.
            const bool sharded = te_gathers(linear);
            const std::int64_t n = sharded ? a_elements / shape_.tp : a_elements;
            if (amax) {
                kernel(op, gemm, "amax", n * kAmaxBytes);
            }
            if (casts_in_layernorm(linear, recipe_)) {
                break;
            }
            kernel(op, gemm, transposes_later ? "cast" : "cast_transpose",
                   n * (transposes_later ? kCastBytes : kCastTransposeBytes));
            break;
        }
        case GemmPass::Dgrad:
            if (amax) {
                kernel(op, gemm, "grad_amax", a_elements * kAmaxBytes);
            }
            kernel(op, gemm, "grad_cast_transpose", a_elements * kCastTransposeBytes);
            break;
        case GemmPass::Wgrad:
            if (transposes_later) {
                // wgrad = dYᵀ·X is {m = out, n = in, k = tokens}: its input X has n·k elements.
                kernel(op, gemm, "input_transpose", op.gemm.n * op.gemm.k * op.gemm.batch * kTransposeBytes);
            }
            break;
        case GemmPass::None:
            break;
        }
    }

    const OpList& in_;
    const LayerShape& shape_;
    Fp8Recipe recipe_;
    std::vector<std::int32_t> index_;  // old op index -> new
    OpList out_;
};

}  // namespace

OpList fp8_layer_ops(const OpList& ops, const LayerShape& shape, Fp8Recipe recipe) {
    return Rewriter(ops, shape, recipe).run();
}

std::int64_t fp8_weight_parameters(const config::Scenario& sc, std::int64_t pipeline_rank) {
    std::int64_t parameters = 0;
    // Layer by layer: with moe_layer_freq a stage may hold dense layers, MoE layers or both.
    for (const std::int64_t layer : stage_layers(sc, pipeline_rank)) {
        const LayerShape x = layer_shape_of(sc, layer);
        // The router's h·N weights are a torch parameter its BF16/FP32 GEMM reads (moe/router.py), no
        // TE module: no FP8 copy. The norms' few weights are counted in, as for the dense layers.
        parameters += layer_parameters_per_rank(x) - (x.moe() ? x.hidden * x.experts : 0);
    }
    return parameters;
}

OpList fp8_weight_casts(std::int64_t parameters, Fp8Recipe recipe) {
    OpList out;
    if (parameters <= 0) {
        return out;
    }
    auto add = [&](const char* name, std::int64_t bytes_per_parameter) {
        Op op;
        op.name = name;
        op.kind = OpKind::MemoryBound;
        op.role = OpRole::Layer;  // compute time, as TE's first forward of the iteration runs it
        op.memory_kind = cost::MemoryBoundKind::Generic;
        op.bytes_moved = Bytes{parameters * bytes_per_parameter};
        out.push_back(std::move(op));
    };
    if (recipe == Fp8Recipe::Tensorwise) {
        add("fp8.weights.amax", kAmaxBytes);
    }
    add("fp8.weights.cast_transpose", kCastTransposeBytes);
    return out;
}

std::int64_t fp8_weight_copy_bytes(std::int64_t parameters) {
    constexpr std::int64_t kCopies = 2;  // the FP8 weight and its transpose, one byte each
    return parameters * kCopies;
}

}  // namespace trainsim::workload
