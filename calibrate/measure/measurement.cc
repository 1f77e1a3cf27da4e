#include "calibrate/measure/measurement.h"

#include <algorithm>
#include <array>
#include <iterator>

#include "sim/core/input_error.h"
#include "sim/core/units.h"

namespace trainsim::calibrate {

namespace {

struct KernelName {
    KernelKind kind;
    const char* name;
};

// The spellings of the measurement files and benchmark names; the memory-bound ones are the profile's
// kind_factors keys.
constexpr std::array<KernelName, 15> kKernelNames = {{
    {KernelKind::Empty, "empty"},
    {KernelKind::Copy, "copy"},
    {KernelKind::Mul, "mul"},
    {KernelKind::Add, "add"},
    {KernelKind::Triad, "triad"},
    {KernelKind::Dot, "dot"},
    {KernelKind::LayerNorm, "layernorm"},
    {KernelKind::BiasGelu, "bias_gelu"},
    {KernelKind::BiasDropoutAdd, "bias_dropout_add"},
    {KernelKind::ScaleMaskSoftmax, "scale_mask_softmax"},
    {KernelKind::Dropout, "dropout"},
    {KernelKind::Optimizer, "optimizer"},
    {KernelKind::Rope, "rope"},
    {KernelKind::CrossEntropy, "cross_entropy"},
    {KernelKind::CrossEntropyFused, "cross_entropy_fused"},
}};

}  // namespace

double GemmMeasurement::achieved_tflops() const {
    return tflops ? *tflops : shape.flops().value / seconds / kFlopsPerTflop;
}

double KernelMeasurement::achieved_GBps() const {
    return GBps ? *GBps : static_cast<double>(bytes_moved) / seconds / kBytesPerGB;
}

std::optional<double> CollectiveMeasurement::bus_bandwidth_GBps() const {
    if (busbw_GBps) {
        return busbw_GBps;
    }
    if (seconds) {
        return static_cast<double>(bytes) * busbw_factor(op, ranks) / *seconds / kBytesPerGB;
    }
    return std::nullopt;
}

std::optional<double> CollectiveMeasurement::time_seconds() const {
    if (seconds) {
        return seconds;
    }
    if (busbw_GBps) {
        return static_cast<double>(bytes) * busbw_factor(op, ranks) / (*busbw_GBps * kBytesPerGB);
    }
    return std::nullopt;
}

void MeasurementSet::append(MeasurementSet other) {
    // Not a structured binding: clang 14 (the fuzzers' compiler) cannot capture one in a lambda.
    for (auto& source : other.sources) {
        const std::string& id = source.first;
        std::string& citation = source.second;
        const auto same =
            std::find_if(sources.begin(), sources.end(), [&](const auto& s) { return s.first == id; });
        if (same == sources.end()) {
            sources.emplace_back(id, std::move(citation));
        } else if (same->second != citation) {
            throw InputError("sources." + id + ": two inputs cite it differently ('" + same->second +
                             "' and '" + citation + "')");
        }
    }
    for (auto& f : other.files) {
        const auto same = std::find_if(files.begin(), files.end(),
                                       [&](const InputFile& g) { return g.source_id == f.source_id; });
        if (same != files.end()) {
            throw InputError(f.path + ": its source id " + f.source_id + " is also the id of " + same->path +
                             " (rename one of the files)");
        }
        files.push_back(std::move(f));
    }
    if (other.device) {
        if (device) {
            throw InputError(other.device->source_id + ": a second benchmark run with device facts (" +
                             device->source_id + " has them already); fit one device at a time");
        }
        device = std::move(other.device);
    }
    std::move(other.warnings.begin(), other.warnings.end(), std::back_inserter(warnings));
    std::move(other.gemms.begin(), other.gemms.end(), std::back_inserter(gemms));
    std::move(other.kernels.begin(), other.kernels.end(), std::back_inserter(kernels));
    std::move(other.collectives.begin(), other.collectives.end(), std::back_inserter(collectives));
}

const char* to_string(KernelKind kind) {
    for (const KernelName& k : kKernelNames) {
        if (k.kind == kind) {
            return k.name;
        }
    }
    return "unknown";
}

std::optional<KernelKind> kernel_kind_from(std::string_view name) {
    for (const KernelName& k : kKernelNames) {
        if (name == k.name) {
            return k.kind;
        }
    }
    return std::nullopt;
}

std::vector<std::string> kernel_kind_names() {
    std::vector<std::string> names;
    for (const KernelName& k : kKernelNames) {
        names.emplace_back(k.name);
    }
    return names;
}

std::optional<cost::MemoryBoundKind> memory_bound_kind_of(KernelKind kind) {
    switch (kind) {
    case KernelKind::LayerNorm:
        return cost::MemoryBoundKind::LayerNorm;
    case KernelKind::BiasGelu:
        return cost::MemoryBoundKind::BiasGelu;
    case KernelKind::BiasDropoutAdd:
        return cost::MemoryBoundKind::BiasDropoutAdd;
    case KernelKind::ScaleMaskSoftmax:
        return cost::MemoryBoundKind::ScaleMaskSoftmax;
    case KernelKind::Dropout:
        return cost::MemoryBoundKind::Dropout;
    case KernelKind::Optimizer:
        return cost::MemoryBoundKind::Optimizer;
    case KernelKind::Rope:
        return cost::MemoryBoundKind::Rope;
    case KernelKind::CrossEntropy:
        return cost::MemoryBoundKind::CrossEntropy;
    case KernelKind::CrossEntropyFused:
        return cost::MemoryBoundKind::CrossEntropyFused;
    default:
        return std::nullopt;
    }
}

KernelKind kernel_measuring(cost::MemoryBoundKind kind) {
    for (const KernelName& k : kKernelNames) {
        if (memory_bound_kind_of(k.kind) == kind) {
            return k.kind;
        }
    }
    return KernelKind::Copy;
}

const char* to_string(cost::GemmClass cls) {
    switch (cls) {
    case cost::GemmClass::Dense:
        return "dense";
    case cost::GemmClass::AttentionScore:
        return "attention_score";
    case cost::GemmClass::AttentionOverValue:
        return "attention_over_value";
    case cost::GemmClass::FlashForward:
        return "flash_forward";
    case cost::GemmClass::FlashBackward:
        return "flash_backward";
    }
    return "unknown";
}

std::optional<cost::GemmClass> gemm_class_from(std::string_view name) {
    for (const auto cls :
         {cost::GemmClass::Dense, cost::GemmClass::AttentionScore, cost::GemmClass::AttentionOverValue}) {
        if (name == to_string(cls)) {
            return cls;
        }
    }
    return std::nullopt;
}

std::optional<cost::CollectiveKind> collective_kind_from(std::string_view name) {
    for (const auto op : {cost::CollectiveKind::AllReduce, cost::CollectiveKind::AllGather,
                          cost::CollectiveKind::ReduceScatter, cost::CollectiveKind::SendRecv}) {
        if (name == cost::to_string(op)) {
            return op;
        }
    }
    return std::nullopt;
}

const char* to_string(Placement placement) {
    return placement == Placement::OutOfPlace ? "out_of_place" : "in_place";
}

}  // namespace trainsim::calibrate
