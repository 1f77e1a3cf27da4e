#include "calibrate/bench/cpu/cpu_kernels.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <benchmark/benchmark.h>

namespace trainsim::calibrate {

namespace {

constexpr float kKeepProbability = 0.9F;
constexpr float kEpsilon = 1e-5F;

// A counter-based hash (splitmix64): the same dropout mask for the same element, with no generator state
// to carry between calls, like the Philox streams of the GPU kernels.
inline std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27U)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31U);
}

inline bool keep(std::uint64_t seed, std::size_t i) {
    return static_cast<float>(mix(seed + i) >> 40U) * (1.0F / 16777216.0F) < kKeepProbability;
}

inline float gelu(float x) {
    constexpr float kSqrt2OverPi = 0.7978845608F;
    return 0.5F * x * (1.0F + std::tanh(kSqrt2OverPi * (x + 0.044715F * x * x * x)));
}

std::vector<float> filled(std::size_t n, float scale) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = scale * (static_cast<float>(mix(i) >> 40U) * (1.0F / 16777216.0F) - 0.5F);
    }
    return v;
}

// An out-of-line call the compiler cannot remove: the CPU's "kernel launch".
__attribute__((noinline)) void empty_kernel(std::vector<float>& sink) {
    benchmark::DoNotOptimize(sink.data());
}

class CpuKernel : public TimedOp {
public:
    explicit CpuKernel(const KernelCase& k) : k_(k) {
        const auto n = static_cast<std::size_t>(k.elements);
        const auto row = static_cast<std::size_t>(std::max<std::int64_t>(k.row, 1));
        if (k.kind != KernelKind::Empty && (n == 0 || n % row != 0)) {
            throw std::invalid_argument("kernel elements must be a positive multiple of its row length");
        }
        switch (k.kind) {
        case KernelKind::Empty:
            break;
        case KernelKind::Copy:
        case KernelKind::LayerNorm:
        case KernelKind::BiasGelu:
        case KernelKind::ScaleMaskSoftmax:
            x_ = filled(n, 2.0F);
            y_.assign(n, 0.0F);
            bias_ = filled(row, 0.2F);
            break;
        case KernelKind::BiasDropoutAdd:
        case KernelKind::Dropout:
            x_ = filled(n, 2.0F);
            residual_ = filled(n, 1.0F);
            y_.assign(n, 0.0F);
            mask_.assign(n, 0);
            bias_ = filled(row, 0.2F);
            break;
        case KernelKind::Optimizer:
            x_ = filled(n, 1.0F);         // weight
            residual_ = filled(n, 0.1F);  // gradient
            m_.assign(n, 0.0F);
            v_.assign(n, 0.0F);
            half_.assign(n, 0);
            break;
        default:
            throw std::invalid_argument(std::string("the CPU backend has no ") + to_string(k.kind) +
                                        " kernel");
        }
    }

    double seconds_per_call(int calls) override {
        const auto start = std::chrono::steady_clock::now();
        for (int c = 0; c < calls; ++c) {
            run(static_cast<std::uint64_t>(++seed_) << 32U);
        }
        const auto stop = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(y_.data());
        benchmark::ClobberMemory();
        return std::chrono::duration<double>(stop - start).count() / calls;
    }

private:
    void run(std::uint64_t seed) {
        const std::size_t n = x_.size();
        const auto row = static_cast<std::size_t>(std::max<std::int64_t>(k_.row, 1));
        switch (k_.kind) {
        case KernelKind::Empty:
            empty_kernel(y_);
            break;
        case KernelKind::Copy:
            std::copy(x_.begin(), x_.end(), y_.begin());
            break;
        case KernelKind::LayerNorm:
            for (std::size_t r = 0; r < n; r += row) {
                float mean = 0.0F;
                float square = 0.0F;
                for (std::size_t i = r; i < r + row; ++i) {
                    mean += x_[i];
                    square += x_[i] * x_[i];
                }
                mean /= static_cast<float>(row);
                const float rstd =
                    1.0F / std::sqrt(square / static_cast<float>(row) - mean * mean + kEpsilon);
                for (std::size_t i = r; i < r + row; ++i) {
                    y_[i] = (x_[i] - mean) * rstd * (1.0F + bias_[i - r]) + bias_[i - r];
                }
            }
            break;
        case KernelKind::BiasGelu:
            for (std::size_t i = 0; i < n; ++i) {
                y_[i] = gelu(x_[i] + bias_[i % row]);
            }
            break;
        case KernelKind::BiasDropoutAdd:
            for (std::size_t i = 0; i < n; ++i) {
                const bool k = keep(seed, i);
                mask_[i] = k ? 1 : 0;
                y_[i] = residual_[i] + (k ? (x_[i] + bias_[i % row]) / kKeepProbability : 0.0F);
            }
            break;
        case KernelKind::ScaleMaskSoftmax:
            // Causal mask: row r of a block of `row` rows sees columns 0..r.
            for (std::size_t r = 0; r < n; r += row) {
                const std::size_t visible = (r / row) % row + 1;
                float max = -INFINITY;
                for (std::size_t i = 0; i < visible; ++i) {
                    max = std::max(max, 0.125F * x_[r + i]);
                }
                float sum = 0.0F;
                for (std::size_t i = 0; i < row; ++i) {
                    const float e = i < visible ? std::exp(0.125F * x_[r + i] - max) : 0.0F;
                    y_[r + i] = e;
                    sum += e;
                }
                const float inv = 1.0F / sum;
                for (std::size_t i = 0; i < row; ++i) {
                    y_[r + i] *= inv;
                }
            }
            break;
        case KernelKind::Dropout:
            for (std::size_t i = 0; i < n; ++i) {
                const bool k = keep(seed, i);
                mask_[i] = k ? 1 : 0;
                y_[i] = k ? x_[i] / kKeepProbability : 0.0F;
            }
            break;
        case KernelKind::Optimizer:
            adam();
            break;
        default:
            break;
        }
    }

    // One Adam step over fp32 master weights, writing the 16-bit copy the model computes with.
    void adam() {
        constexpr float kLr = 1e-4F;
        constexpr float kBeta1 = 0.9F;
        constexpr float kBeta2 = 0.95F;
        for (std::size_t i = 0; i < x_.size(); ++i) {
            const float g = residual_[i];
            m_[i] = kBeta1 * m_[i] + (1.0F - kBeta1) * g;
            v_[i] = kBeta2 * v_[i] + (1.0F - kBeta2) * g * g;
            x_[i] -= kLr * m_[i] / (std::sqrt(v_[i]) + kEpsilon);
            std::uint32_t bits = 0;
            static_assert(sizeof(bits) == sizeof(float));
            __builtin_memcpy(&bits, &x_[i], sizeof(bits));
            half_[i] = static_cast<std::uint16_t>(bits >> 16U);  // bf16: the upper half of the fp32
        }
    }

    KernelCase k_;
    std::vector<float> x_, y_, residual_, bias_, m_, v_;
    std::vector<std::uint8_t> mask_;
    std::vector<std::uint16_t> half_;
    std::uint32_t seed_ = 0;
};

}  // namespace

std::unique_ptr<TimedOp> make_cpu_kernel(const KernelCase& kernel) {
    return std::make_unique<CpuKernel>(kernel);
}

}  // namespace trainsim::calibrate
