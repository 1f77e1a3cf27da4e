#include "calibrate/bench/cuda/memory_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>

#include "calibrate/bench/cuda/cuda_check.h"

namespace trainsim::calibrate::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 32;
constexpr float kKeepProbability = 0.9F;
constexpr float kEpsilon = 1e-5F;
constexpr unsigned kFullMask = 0xffffffffU;

using bf16 = __nv_bfloat16;

// splitmix64: a counter-based hash, so a dropout mask needs no generator state between launches.
__device__ __forceinline__ std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27U)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31U);
}

__device__ __forceinline__ float uniform(std::uint64_t seed, std::int64_t i) {
    return static_cast<float>(mix(seed + static_cast<std::uint64_t>(i)) >> 40U) * (1.0F / 16777216.0F);
}

__device__ __forceinline__ float gelu(float x) {
    constexpr float kSqrt2OverPi = 0.7978845608F;
    return 0.5F * x * (1.0F + tanhf(kSqrt2OverPi * (x + 0.044715F * x * x * x)));
}

__device__ __forceinline__ std::int64_t first_index() {
    return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ std::int64_t stride() {
    return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

// Sum over the block; every thread gets it. Reusable back to back (trailing barrier).
__device__ float block_sum(float v) {
    __shared__ float partial[32];
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_down_sync(kFullMask, v, o);
    }
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int warp = static_cast<int>(threadIdx.x) >> 5;
    if (lane == 0) {
        partial[warp] = v;
    }
    __syncthreads();
    v = static_cast<int>(threadIdx.x) < static_cast<int>(blockDim.x) / 32 ? partial[lane] : 0.0F;
    if (warp == 0) {
        for (int o = 16; o > 0; o >>= 1) {
            v += __shfl_down_sync(kFullMask, v, o);
        }
        if (lane == 0) {
            partial[0] = v;
        }
    }
    __syncthreads();
    const float total = partial[0];
    __syncthreads();
    return total;
}

// Combines two (max, sum of exp(x - max)) pairs of an online softmax.
__device__ __forceinline__ void combine(float& m, float& s, float m2, float s2) {
    const float top = fmaxf(m, m2);
    if (top == -INFINITY) {
        return;
    }
    s = (m == -INFINITY ? 0.0F : s * __expf(m - top)) + (m2 == -INFINITY ? 0.0F : s2 * __expf(m2 - top));
    m = top;
}

__device__ void block_softmax_stats(float& m, float& s) {
    __shared__ float pm[32];
    __shared__ float ps[32];
    for (int o = 16; o > 0; o >>= 1) {
        combine(m, s, __shfl_down_sync(kFullMask, m, o), __shfl_down_sync(kFullMask, s, o));
    }
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int warp = static_cast<int>(threadIdx.x) >> 5;
    if (lane == 0) {
        pm[warp] = m;
        ps[warp] = s;
    }
    __syncthreads();
    const bool holds = static_cast<int>(threadIdx.x) < static_cast<int>(blockDim.x) / 32;
    m = holds ? pm[lane] : -INFINITY;
    s = holds ? ps[lane] : 0.0F;
    if (warp == 0) {
        for (int o = 16; o > 0; o >>= 1) {
            combine(m, s, __shfl_down_sync(kFullMask, m, o), __shfl_down_sync(kFullMask, s, o));
        }
        if (lane == 0) {
            pm[0] = m;
            ps[0] = s;
        }
    }
    __syncthreads();
    m = pm[0];
    s = ps[0];
}

__global__ void empty_kernel() {}

__global__ void copy_kernel(const int4* in, int4* out, std::int64_t vectors, const char* in_tail,
                            char* out_tail, std::int64_t tail) {
    for (std::int64_t i = first_index(); i < vectors; i += stride()) {
        out[i] = in[i];
    }
    if (first_index() < tail) {
        out_tail[first_index()] = in_tail[first_index()];
    }
}

__global__ void layernorm_kernel(const bf16* in, bf16* out, const float* gamma, const float* beta,
                                 std::int64_t row) {
    const bf16* x = in + static_cast<std::int64_t>(blockIdx.x) * row;
    bf16* y = out + static_cast<std::int64_t>(blockIdx.x) * row;
    float sum = 0.0F;
    float square = 0.0F;
    for (std::int64_t i = threadIdx.x; i < row; i += blockDim.x) {
        const float v = __bfloat162float(x[i]);
        sum += v;
        square += v * v;
    }
    const float mean = block_sum(sum) / static_cast<float>(row);
    const float rstd = rsqrtf(block_sum(square) / static_cast<float>(row) - mean * mean + kEpsilon);
    for (std::int64_t i = threadIdx.x; i < row; i += blockDim.x) {
        y[i] = __float2bfloat16((__bfloat162float(x[i]) - mean) * rstd * gamma[i] + beta[i]);
    }
}

__global__ void bias_gelu_kernel(const bf16* in, const bf16* bias, bf16* out, std::int64_t n,
                                 std::int64_t row) {
    for (std::int64_t i = first_index(); i < n; i += stride()) {
        out[i] = __float2bfloat16(gelu(__bfloat162float(in[i]) + __bfloat162float(bias[i % row])));
    }
}

__global__ void bias_dropout_add_kernel(const bf16* in, const bf16* bias, const bf16* residual, bf16* out,
                                        std::uint8_t* mask, std::int64_t n, std::int64_t row,
                                        std::uint64_t seed) {
    for (std::int64_t i = first_index(); i < n; i += stride()) {
        const bool keep = uniform(seed, i) < kKeepProbability;
        mask[i] = keep ? 1 : 0;
        const float v =
            keep ? (__bfloat162float(in[i]) + __bfloat162float(bias[i % row])) / kKeepProbability : 0.0F;
        out[i] = __float2bfloat16(__bfloat162float(residual[i]) + v);
    }
}

__global__ void softmax_kernel(const bf16* in, bf16* out, std::int64_t row, float scale) {
    const std::int64_t r = blockIdx.x;
    const bf16* x = in + r * row;
    bf16* y = out + r * row;
    const std::int64_t visible = r % row + 1;  // causal: row r of a block sees columns 0..r
    float m = -INFINITY;
    float s = 0.0F;
    for (std::int64_t i = threadIdx.x; i < visible; i += blockDim.x) {
        combine(m, s, scale * __bfloat162float(x[i]), 1.0F);
    }
    block_softmax_stats(m, s);
    const float inv = 1.0F / s;
    for (std::int64_t i = threadIdx.x; i < row; i += blockDim.x) {
        y[i] = __float2bfloat16(i < visible ? __expf(scale * __bfloat162float(x[i]) - m) * inv : 0.0F);
    }
}

__global__ void dropout_kernel(const bf16* in, bf16* out, std::uint8_t* mask, std::int64_t n,
                               std::uint64_t seed) {
    for (std::int64_t i = first_index(); i < n; i += stride()) {
        const bool keep = uniform(seed, i) < kKeepProbability;
        mask[i] = keep ? 1 : 0;
        out[i] = __float2bfloat16(keep ? __bfloat162float(in[i]) / kKeepProbability : 0.0F);
    }
}

__global__ void adam_kernel(float* w, const float* g, float* m, float* v, bf16* w16, std::int64_t n) {
    constexpr float kLr = 1e-4F;
    constexpr float kBeta1 = 0.9F;
    constexpr float kBeta2 = 0.95F;
    for (std::int64_t i = first_index(); i < n; i += stride()) {
        const float grad = g[i];
        const float mi = kBeta1 * m[i] + (1.0F - kBeta1) * grad;
        const float vi = kBeta2 * v[i] + (1.0F - kBeta2) * grad * grad;
        const float wi = w[i] - kLr * mi / (sqrtf(vi) + kEpsilon);
        m[i] = mi;
        v[i] = vi;
        w[i] = wi;
        w16[i] = __float2bfloat16(wi);
    }
}

__global__ void fill_bf16_kernel(bf16* out, std::int64_t n, float scale, std::uint64_t seed) {
    for (std::int64_t i = first_index(); i < n; i += stride()) {
        out[i] = __float2bfloat16(scale * (uniform(seed, i) - 0.5F));
    }
}

__global__ void fill_fp8_e4m3_kernel(__nv_fp8_e4m3* out, std::int64_t n, float scale, std::uint64_t seed) {
    for (std::int64_t i = first_index(); i < n; i += stride()) {
        out[i] = __nv_fp8_e4m3(scale * (uniform(seed, i) - 0.5F));
    }
}

__global__ void fill_f32_kernel(float* out, std::int64_t n, float scale, std::uint64_t seed) {
    for (std::int64_t i = first_index(); i < n; i += stride()) {
        out[i] = scale * (uniform(seed, i) - 0.5F);
    }
}

// Enough blocks to fill the GPU, and no more: the grid-stride loops do the rest.
unsigned grid(std::int64_t n, int sms) {
    const std::int64_t needed = (n + kThreads - 1) / kThreads;
    return static_cast<unsigned>(
        std::max<std::int64_t>(1, std::min<std::int64_t>(needed, std::int64_t{sms} * kBlocksPerSm)));
}

void check_launch() {
    TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

int default_sms() {
    int device = 0;
    int sms = 0;
    TRAINSIM_CUDA_CHECK(cudaGetDevice(&device));
    TRAINSIM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
}

}  // namespace

void launch_empty(cudaStream_t stream) {
    empty_kernel<<<1, 1, 0, stream>>>();
    check_launch();
}

void launch_copy(const void* in, void* out, std::int64_t bytes, int sms, cudaStream_t stream) {
    const std::int64_t vectors = bytes / static_cast<std::int64_t>(sizeof(int4));
    const std::int64_t done = vectors * static_cast<std::int64_t>(sizeof(int4));
    copy_kernel<<<grid(vectors, sms), kThreads, 0, stream>>>(
        static_cast<const int4*>(in), static_cast<int4*>(out), vectors, static_cast<const char*>(in) + done,
        static_cast<char*>(out) + done, bytes - done);
    check_launch();
}

void launch_layernorm(const void* in, void* out, const float* gamma, const float* beta, std::int64_t rows,
                      std::int64_t row, cudaStream_t stream) {
    layernorm_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<const bf16*>(in), static_cast<bf16*>(out), gamma, beta, row);
    check_launch();
}

void launch_bias_gelu(const void* in, const void* bias, void* out, std::int64_t elements, std::int64_t row,
                      int sms, cudaStream_t stream) {
    bias_gelu_kernel<<<grid(elements, sms), kThreads, 0, stream>>>(
        static_cast<const bf16*>(in), static_cast<const bf16*>(bias), static_cast<bf16*>(out), elements, row);
    check_launch();
}

void launch_bias_dropout_add(const void* in, const void* bias, const void* residual, void* out,
                             std::uint8_t* mask, std::int64_t elements, std::int64_t row, std::uint64_t seed,
                             int sms, cudaStream_t stream) {
    bias_dropout_add_kernel<<<grid(elements, sms), kThreads, 0, stream>>>(
        static_cast<const bf16*>(in), static_cast<const bf16*>(bias), static_cast<const bf16*>(residual),
        static_cast<bf16*>(out), mask, elements, row, seed);
    check_launch();
}

void launch_scale_mask_softmax(const void* in, void* out, std::int64_t rows, std::int64_t row, float scale,
                               cudaStream_t stream) {
    softmax_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(static_cast<const bf16*>(in),
                                                                         static_cast<bf16*>(out), row, scale);
    check_launch();
}

void launch_dropout(const void* in, void* out, std::uint8_t* mask, std::int64_t elements, std::uint64_t seed,
                    int sms, cudaStream_t stream) {
    dropout_kernel<<<grid(elements, sms), kThreads, 0, stream>>>(
        static_cast<const bf16*>(in), static_cast<bf16*>(out), mask, elements, seed);
    check_launch();
}

void launch_adam(float* weight, const float* grad, float* m, float* v, void* weight_bf16,
                 std::int64_t elements, int sms, cudaStream_t stream) {
    adam_kernel<<<grid(elements, sms), kThreads, 0, stream>>>(weight, grad, m, v,
                                                              static_cast<bf16*>(weight_bf16), elements);
    check_launch();
}

void fill_bf16(void* out, std::int64_t elements, float scale, std::uint64_t seed, cudaStream_t stream) {
    fill_bf16_kernel<<<grid(elements, default_sms()), kThreads, 0, stream>>>(static_cast<bf16*>(out),
                                                                             elements, scale, seed);
    check_launch();
}

void fill_fp8_e4m3(void* out, std::int64_t elements, float scale, std::uint64_t seed, cudaStream_t stream) {
    fill_fp8_e4m3_kernel<<<grid(elements, default_sms()), kThreads, 0, stream>>>(
        static_cast<__nv_fp8_e4m3*>(out), elements, scale, seed);
    check_launch();
}

void fill_f32(float* out, std::int64_t elements, float scale, std::uint64_t seed, cudaStream_t stream) {
    fill_f32_kernel<<<grid(elements, default_sms()), kThreads, 0, stream>>>(out, elements, scale, seed);
    check_launch();
}

}  // namespace trainsim::calibrate::cuda
