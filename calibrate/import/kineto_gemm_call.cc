#include "calibrate/import/kineto_gemm_call.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace trainsim::kineto {

namespace {

using Dims = std::vector<std::int64_t>;

std::optional<GemmCall> product(const Dims& a, const Dims& b) {
    GemmCall g;
    if (a.size() == 2 && b.size() == 2) {
        g.m = a[0];
        g.k = a[1];
        g.n = b[1];
        if (b[0] != g.k) {
            return std::nullopt;
        }
    } else if (a.size() == 3 && b.size() == 3) {
        g.batch = a[0];
        g.m = a[1];
        g.k = a[2];
        g.n = b[2];
        if (b[0] != g.batch || b[1] != g.k) {
            return std::nullopt;
        }
    } else if (a.size() == 3 && b.size() == 2) {  // matmul folds the batch of A into its rows
        if (__builtin_mul_overflow(a[0], a[1], &g.m)) {
            return std::nullopt;
        }
        g.k = a[2];
        g.n = b[1];
        if (b[0] != g.k) {
            return std::nullopt;
        }
    } else {
        return std::nullopt;
    }
    if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.batch <= 0) {
        return std::nullopt;
    }
    return g;
}

// F.linear(x, W) = x·Wᵀ: x [..., k], W [n, k].
std::optional<GemmCall> linear(const Dims& x, const Dims& w) {
    if (x.empty() || w.size() != 2 || x.back() != w[1]) {
        return std::nullopt;
    }
    GemmCall g;
    g.m = 1;
    for (std::size_t i = 0; i + 1 < x.size(); ++i) {
        if (__builtin_mul_overflow(g.m, x[i], &g.m)) {
            return std::nullopt;
        }
    }
    g.k = w[1];
    g.n = w[0];
    if (g.m <= 0 || g.n <= 0 || g.k <= 0) {
        return std::nullopt;
    }
    return g;
}

std::string ascii_lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

}  // namespace

std::string dtype_name(std::string_view t) {
    const std::string s = ascii_lower(t);
    if (s.find("bfloat16") != std::string::npos) {
        return "bf16";
    }
    if (s.find("half") != std::string::npos || s == "float16") {
        return "fp16";
    }
    if (s.find("float8") != std::string::npos) {
        return "fp8";
    }
    if (s == "float" || s == "float32") {
        return "fp32";
    }
    if (s == "double" || s == "float64") {
        return "fp64";
    }
    return "";
}

int element_bytes(std::string_view dtype) {
    const std::string s = ascii_lower(dtype);
    if (s == "double" || s == "long" || s == "int64" || s == "float64") {
        return 8;
    }
    if (s == "float" || s == "int" || s == "int32" || s == "float32") {
        return 4;
    }
    if (s == "bfloat16" || s == "half" || s == "short" || s == "float16" || s == "int16") {
        return 2;
    }
    if (s == "byte" || s == "char" || s == "bool" || s == "int8" || s == "uint8" ||
        s.rfind("float8", 0) == 0) {
        return 1;
    }
    return 0;
}

bool is_gemm_kernel(std::string_view kernel_name) {
    std::string s = ascii_lower(kernel_name);
    // FBGEMM's embedding and sparse kernels (fbgemm_gpu::permute_2D_*, split_embedding_*) are not GEMMs.
    for (std::size_t at = s.find("fbgemm"); at != std::string::npos; at = s.find("fbgemm", at)) {
        s.erase(at, 6);
    }
    // "nvjet": cuBLAS 12.8 and later's own GEMM kernels (nvjet_sm90_tst_192x192_..._TNN in PyTorch 2.11's
    // CUDA 13 traces, tests/data/kineto/h200-torch2.11-gemms.pt.trace.json.gz).
    for (const char* marker : {"gemm", "gemv", "cutlass", "xmma", "splitkreduce", "cublas", "nvjet"}) {
        if (s.find(marker) != std::string::npos) {
            return true;
        }
    }
    return false;
}

std::optional<GemmCall> gemm_call(const Trace& trace, const CpuOp& op) {
    const std::string& name = trace.name(op.name);
    const auto& d = op.input_dims;
    auto dim = [&](std::size_t i) -> const Dims& {
        static const Dims kNone;
        return i < d.size() ? d[i] : kNone;
    };
    std::optional<GemmCall> g;
    std::size_t a_input = 0;
    if (name == "aten::mm" || name == "aten::_scaled_mm") {
        if (dim(0).size() == 2) {
            g = product(dim(0), dim(1));
        }
    } else if (name == "aten::bmm") {
        if (dim(0).size() == 3) {
            g = product(dim(0), dim(1));
        }
    } else if (name == "aten::addmm") {
        a_input = 1;
        if (dim(1).size() == 2) {
            g = product(dim(1), dim(2));
        }
    } else if (name == "aten::baddbmm") {
        a_input = 1;
        if (dim(1).size() == 3) {
            g = product(dim(1), dim(2));
        }
    } else if (name == "aten::matmul") {
        g = product(dim(0), dim(1));
    } else if (name == "aten::linear") {
        g = linear(dim(0), dim(1));
    }
    if (g && a_input < op.input_types.size()) {
        g->dtype = dtype_name(op.input_types[a_input]);
    }
    return g;
}

}  // namespace trainsim::kineto
