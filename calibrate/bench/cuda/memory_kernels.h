// Launchers of the memory-bound kernels of a Megatron layer, in bf16 like Megatron's fused kernels:
// LayerNorm (one block per row), bias-GeLU (tanh), bias-dropout-add, causal scaled masked softmax (one
// block per row, online max and sum), dropout, the Adam step over fp32 state, a vectorised copy, an empty
// kernel; and a fill for GEMM operands. Each launch is asynchronous on `stream`.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace trainsim::calibrate::cuda {

void launch_empty(cudaStream_t stream);
void launch_copy(const void* in, void* out, std::int64_t bytes, int sms, cudaStream_t stream);
/// rows × row elements; gamma, beta: `row` floats.
void launch_layernorm(const void* in, void* out, const float* gamma, const float* beta, std::int64_t rows,
                      std::int64_t row, cudaStream_t stream);
void launch_bias_gelu(const void* in, const void* bias, void* out, std::int64_t elements, std::int64_t row,
                      int sms, cudaStream_t stream);
void launch_bias_dropout_add(const void* in, const void* bias, const void* residual, void* out,
                             std::uint8_t* mask, std::int64_t elements, std::int64_t row, std::uint64_t seed,
                             int sms, cudaStream_t stream);
/// rows × row scores; row r of each row×row block sees columns 0..r (a causal mask).
void launch_scale_mask_softmax(const void* in, void* out, std::int64_t rows, std::int64_t row, float scale,
                               cudaStream_t stream);
void launch_dropout(const void* in, void* out, std::uint8_t* mask, std::int64_t elements, std::uint64_t seed,
                    int sms, cudaStream_t stream);
/// fp32 weight, gradient and moments; writes the bf16 weight.
void launch_adam(float* weight, const float* grad, float* m, float* v, void* weight_bf16,
                 std::int64_t elements, int sms, cudaStream_t stream);
/// Deterministic values in [-scale/2, scale/2): bf16, FP8 (E4M3) and fp32 buffers. GEMM operands are
/// never constant: a matrix unit fed constant or zero data draws less power and clocks higher than on
/// real activations, which would overstate the efficiency the fit learns.
void fill_bf16(void* out, std::int64_t elements, float scale, std::uint64_t seed, cudaStream_t stream);
void fill_fp8_e4m3(void* out, std::int64_t elements, float scale, std::uint64_t seed, cudaStream_t stream);
void fill_f32(float* out, std::int64_t elements, float scale, std::uint64_t seed, cudaStream_t stream);

}  // namespace trainsim::calibrate::cuda
