#include "calibrate/bench/cuda/cublaslt_gemm.h"

#include <cublasLt.h>

#include <cstdint>

#include "calibrate/bench/cuda/device_memory.h"
#include "calibrate/bench/cuda/memory_kernels.h"

namespace trainsim::calibrate::cuda {

namespace {

constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20U;
constexpr std::int64_t kBf16Bytes = 2;
constexpr std::int64_t kFp8Bytes = 1;

cublasLtHandle_t as_handle(void* h) {
    return static_cast<cublasLtHandle_t>(h);
}

// Owned cuBLASLt descriptors.
struct Layout {
    cublasLtMatrixLayout_t desc = nullptr;
    Layout(std::uint64_t rows, std::uint64_t cols, std::int64_t ld, std::int64_t batch,
           cudaDataType_t type = CUDA_R_16BF) {
        TRAINSIM_CUDA_CHECK(cublasLtMatrixLayoutCreate(&desc, type, rows, cols, ld));
        if (batch > 1) {
            const auto count = static_cast<std::int32_t>(batch);
            const auto offset = static_cast<std::int64_t>(rows * cols);
            TRAINSIM_CUDA_CHECK(cublasLtMatrixLayoutSetAttribute(desc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                                 &count, sizeof(count)));
            TRAINSIM_CUDA_CHECK(cublasLtMatrixLayoutSetAttribute(
                desc, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &offset, sizeof(offset)));
        }
    }
    Layout(const Layout&) = delete;
    Layout& operator=(const Layout&) = delete;
    ~Layout() { cublasLtMatrixLayoutDestroy(desc); }
};

struct MatmulDesc {
    cublasLtMatmulDesc_t desc = nullptr;
    MatmulDesc() { TRAINSIM_CUDA_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F)); }
    MatmulDesc(const MatmulDesc&) = delete;
    MatmulDesc& operator=(const MatmulDesc&) = delete;
    ~MatmulDesc() { cublasLtMatmulDescDestroy(desc); }
};

struct Preference {
    cublasLtMatmulPreference_t pref = nullptr;
    Preference() {
        TRAINSIM_CUDA_CHECK(cublasLtMatmulPreferenceCreate(&pref));
        const std::uint64_t workspace = kWorkspaceBytes;
        TRAINSIM_CUDA_CHECK(cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)));
    }
    Preference(const Preference&) = delete;
    Preference& operator=(const Preference&) = delete;
    ~Preference() { cublasLtMatmulPreferenceDestroy(pref); }
};

// Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: cuBLASLt multiplies B's buffer (n×k, ld n) by A's
// (k×m, ld k) into C's (n×m, ld n), with no transposes. FP8 GEMMs must be "TN" (cuBLASLt's FP8 rule, as
// Transformer Engine calls them): B's buffer is stored k×n (ld k) and transposed, D is BF16.
class LtGemm : public TimedOp {
public:
    LtGemm(const CublasLt& lt, const GemmCase& g)
        : lt_(lt), shape_(g.shape),
          first_(static_cast<std::uint64_t>(g.fp8 ? g.shape.k : g.shape.n),
                 static_cast<std::uint64_t>(g.fp8 ? g.shape.n : g.shape.k), g.fp8 ? g.shape.k : g.shape.n,
                 g.shape.batch, g.fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF),
          second_(static_cast<std::uint64_t>(g.shape.k), static_cast<std::uint64_t>(g.shape.m), g.shape.k,
                  g.shape.batch, g.fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF),
          out_(static_cast<std::uint64_t>(g.shape.n), static_cast<std::uint64_t>(g.shape.m), g.shape.n,
               g.shape.batch),
          a_(static_cast<std::size_t>(g.shape.m * g.shape.k * g.shape.batch *
                                      (g.fp8 ? kFp8Bytes : kBf16Bytes))),
          b_(static_cast<std::size_t>(g.shape.k * g.shape.n * g.shape.batch *
                                      (g.fp8 ? kFp8Bytes : kBf16Bytes))),
          c_(static_cast<std::size_t>(g.shape.m * g.shape.n * g.shape.batch * kBf16Bytes)),
          workspace_(kWorkspaceBytes) {
        if (g.fp8) {
            const cublasOperation_t transpose = CUBLAS_OP_T;
            TRAINSIM_CUDA_CHECK(cublasLtMatmulDescSetAttribute(op_.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                               &transpose, sizeof(transpose)));
            // Transformer Engine's fprop turns fast accumulation on, its dgrad and wgrad leave it off
            // (use_split_accumulator); cuBLASLt's default is off.
            const std::int8_t fast = g.split_accumulator ? 0 : 1;
            TRAINSIM_CUDA_CHECK(cublasLtMatmulDescSetAttribute(op_.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                                               &fast, sizeof(fast)));
            fill_fp8_e4m3(a_.get(), g.shape.m * g.shape.k * g.shape.batch, 1.0F, 11, stream_.get());
            fill_fp8_e4m3(b_.get(), g.shape.k * g.shape.n * g.shape.batch, 1.0F, 12, stream_.get());
        } else {
            fill_bf16(a_.get(), g.shape.m * g.shape.k * g.shape.batch, 1.0F, 11, stream_.get());
            fill_bf16(b_.get(), g.shape.k * g.shape.n * g.shape.batch, 1.0F, 12, stream_.get());
        }
        int returned = 0;
        TRAINSIM_CUDA_CHECK(cublasLtMatmulAlgoGetHeuristic(as_handle(lt_.handle()), op_.desc, first_.desc,
                                                           second_.desc, out_.desc, out_.desc,
                                                           preference_.pref, 1, &heuristic_, &returned));
        if (returned == 0) {
            throw std::runtime_error("cuBLASLt has no algorithm for this shape");
        }
        TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    }

    double seconds_per_call(int calls) override {
        run();  // warm
        timer_.start(stream_.get());
        for (int c = 0; c < calls; ++c) {
            run();
        }
        timer_.stop(stream_.get());
        return timer_.seconds() / calls;
    }

private:
    void run() {
        const float alpha = 1.0F;
        const float beta = 0.0F;
        TRAINSIM_CUDA_CHECK(cublasLtMatmul(as_handle(lt_.handle()), op_.desc, &alpha, b_.get(), first_.desc,
                                           a_.get(), second_.desc, &beta, c_.get(), out_.desc, c_.get(),
                                           out_.desc, &heuristic_.algo, workspace_.get(), kWorkspaceBytes,
                                           stream_.get()));
    }

    const CublasLt& lt_;
    cost::GemmShape shape_;
    MatmulDesc op_;
    Layout first_;
    Layout second_;
    Layout out_;
    Preference preference_;
    DeviceBuffer a_, b_, c_, workspace_;
    Stream stream_;
    EventTimer timer_;
    cublasLtMatmulHeuristicResult_t heuristic_{};
};

}  // namespace

CublasLt::CublasLt() {
    cublasLtHandle_t h = nullptr;
    TRAINSIM_CUDA_CHECK(cublasLtCreate(&h));
    handle_ = h;
}

CublasLt::~CublasLt() {
    cublasLtDestroy(as_handle(handle_));
}

std::unique_ptr<TimedOp> make_cublaslt_gemm(const CublasLt& lt, const GemmCase& gemm) {
    return std::make_unique<LtGemm>(lt, gemm);
}

}  // namespace trainsim::calibrate::cuda
