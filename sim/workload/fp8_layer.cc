#include "sim/workload/fp8_layer.h"

#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "sim/workload/parameter_count.h"

namespace trainsim::workload {
namespace {

using config::Fp8Recipe;

// The linear layers TE runs in FP8 (te.pytorch LayerNormLinear / Linear in Megatron-core's TE spec).
constexpr std::array<std::string_view, 4> kFp8Linears = {"qkv", "proj", "fc1", "fc2"};
// The linears whose input comes out of a LayerNorm (TE's LayerNormLinear fuses the FP8 cast into it).
constexpr std::array<std::string_view, 2> kLayerNormFed = {"qkv", "fc1"};
// The all-gathers of those inputs under sequence parallelism: forward (transformer_layer.cc) and the
// backward's re-gather for the wgrad (tensor_parallel_linear.cc). TE gathers the FP8 tensor.
constexpr std::array<std::string_view, 6> kFp8Gathers = {"ln1.allgather",       "ln2.allgather",
                                                         "rmsnorm1.allgather",  "rmsnorm2.allgather",
                                                         "qkv.input_allgather", "fc1.input_allgather"};

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

enum class GemmPass { Forward, Dgrad, Wgrad, None };

// "fc1" -> (fc1, Forward), "fc1.dgrad" -> (fc1, Dgrad); anything else -> None.
std::pair<std::string_view, GemmPass> fp8_gemm_of(const Op& op) {
    if (op.kind != OpKind::Gemm || op.role != OpRole::Layer || op.gemm_class != cost::GemmClass::Dense) {
        return {{}, GemmPass::None};
    }
    const std::string_view name = op.name;
    const std::size_t dot = name.find('.');
    const std::string_view base = name.substr(0, dot);
    if (!one_of(kFp8Linears, base)) {
        return {{}, GemmPass::None};
    }
    if (dot == std::string_view::npos) {
        return {base, GemmPass::Forward};
    }
    const std::string_view suffix = name.substr(dot + 1);
    if (suffix == "dgrad") {
        return {base, GemmPass::Dgrad};
    }
    if (suffix == "wgrad") {
        return {base, GemmPass::Wgrad};
    }
    return {{}, GemmPass::None};
}

bool casts_in_layernorm(std::string_view gemm, Fp8Recipe recipe) {
    // TE's fused LayerNorm writes FP8 with a scale known in advance: only delayed scaling has one.
    return recipe == Fp8Recipe::Delayed && one_of(kLayerNormFed, gemm);
}

// Block-scaled recipes cannot transpose FP8 data (the scales run along one axis): their column-wise
// copy is quantized from BF16 in the forward, with the row-wise one.
bool transposes_in_backward(std::string_view gemm, Fp8Recipe recipe) {
    return one_of(kLayerNormFed, gemm) && (recipe == Fp8Recipe::Delayed || recipe == Fp8Recipe::Tensorwise);
}

class Rewriter {
public:
    Rewriter(const OpList& in, const LayerShape& shape, Fp8Recipe recipe)
        : in_(in), shape_(shape), recipe_(recipe), index_(in.size(), -1) {}

    OpList run() {
        for (std::size_t i = 0; i < in_.size(); ++i) {
            Op op = in_[i];
            remap(op.after);
            const auto [gemm, pass] = fp8_gemm_of(op);
            if (pass != GemmPass::None) {
                insert_kernels_before(op, gemm, pass);
                op.gemm_precision = cost::GemmPrecision::Fp8;
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

    void insert_kernels_before(const Op& op, std::string_view gemm, GemmPass pass) {
        const bool amax = recipe_ == Fp8Recipe::Tensorwise;
        // The A operand of each GEMM as transformer_layer.cc shapes it: the input [m, k] in the forward,
        // the output gradient [m, k] in the dgrad, the (gathered) input [k = tokens] in the wgrad.
        const std::int64_t a_elements = op.gemm.m * op.gemm.k;
        switch (pass) {
        case GemmPass::Forward: {
            // With SP the LayerNorm-fed input is cast on the local sequence shard, then gathered in FP8.
            const bool sharded = one_of(kLayerNormFed, gemm) && shape_.sequence_parallel;
            const std::int64_t n = sharded ? a_elements / shape_.tp : a_elements;
            if (amax) {
                kernel(op, gemm, "amax", n * kAmaxBytes);
            }
            if (casts_in_layernorm(gemm, recipe_)) {
                break;
            }
            kernel(op, gemm, transposes_in_backward(gemm, recipe_) ? "cast" : "cast_transpose",
                   n * (transposes_in_backward(gemm, recipe_) ? kCastBytes : kCastTransposeBytes));
            break;
        }
        case GemmPass::Dgrad:
            if (amax) {
                kernel(op, gemm, "grad_amax", a_elements * kAmaxBytes);
            }
            kernel(op, gemm, "grad_cast_transpose", a_elements * kCastTransposeBytes);
            break;
        case GemmPass::Wgrad:
            if (transposes_in_backward(gemm, recipe_)) {
                // wgrad = dYᵀ·X is {m = out, n = in, k = tokens}: its input X has n·k elements.
                kernel(op, gemm, "input_transpose", op.gemm.n * op.gemm.k * kTransposeBytes);
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

OpList fp8_weight_casts(const LayerShape& shape, std::int64_t layers, Fp8Recipe recipe) {
    OpList out;
    const std::int64_t parameters = layer_parameters_per_rank(shape) * layers;
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

std::int64_t fp8_weight_copy_bytes(const LayerShape& shape, std::int64_t layers) {
    constexpr std::int64_t kCopies = 2;  // the FP8 weight and its transpose, one byte each
    return layer_parameters_per_rank(shape) * layers * kCopies;
}

}  // namespace trainsim::workload
