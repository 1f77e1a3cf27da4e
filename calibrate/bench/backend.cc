#include "calibrate/bench/backend.h"

#include <stdexcept>
#include <string>

namespace trainsim::calibrate {

std::int64_t kernel_bytes_moved(KernelKind kind, std::int64_t elements, std::int64_t element_bytes) {
    constexpr std::int64_t kMaskBytes = 1;
    // Adam over fp32 master weights: read gradient, weight, both moments; write weight and both moments;
    // write the 16-bit copy of the weight.
    constexpr std::int64_t kAdamBytesPerParameter = 4 * 4 + 3 * 4 + 2;
    const std::int64_t e = elements;
    switch (kind) {
    case KernelKind::Empty:
        return 0;
    case KernelKind::Copy:
    case KernelKind::Mul:
    case KernelKind::Dot:
    case KernelKind::LayerNorm:
    case KernelKind::BiasGelu:
    case KernelKind::ScaleMaskSoftmax:
        return 2 * e * element_bytes;
    case KernelKind::Add:
    case KernelKind::Triad:
        return 3 * e * element_bytes;
    case KernelKind::BiasDropoutAdd:
        return 3 * e * element_bytes + e * kMaskBytes;
    case KernelKind::Dropout:
        return 2 * e * element_bytes + e * kMaskBytes;
    case KernelKind::Optimizer:
        return kAdamBytesPerParameter * e;
    case KernelKind::Rope:
    case KernelKind::CrossEntropy:
    case KernelKind::CrossEntropyFused:
        throw std::invalid_argument(std::string("the harness has no ") + to_string(kind) +
                                    " kernel: its records come from framework timings");
    }
    return 0;
}

}  // namespace trainsim::calibrate
