// Measurement records: what a benchmark run, an nccl-tests log or a file of published numbers says about
// one GEMM, one memory-bound kernel or one collective. The fits read only these, whatever the input format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/cost/cost_model.h"

namespace trainsim::calibrate {

/// Where a record came from, so that every fitted number can name its data.
struct Origin {
    std::string source_id;  // the input file's id in the fitted profile's sources table, e.g. S-RUN-CPU
    std::string record;     // the record's id or benchmark name inside that file, e.g. "azure-1024"
    std::string source;     // the record's own citation text ("S-AZURE: ..."), may be empty
};

/// The dtype of an FP8 GEMM timed with the split accumulator (partial sums promoted to FP32, cuBLASLt's
/// CUBLASLT_MATMUL_DESC_FAST_ACCUM 0, Transformer Engine's dgrad and wgrad); plain "fp8" is fast
/// accumulation, as TE's forward and the published cuBLASLt benchmarks run it.
inline constexpr const char* kFp8SplitAccumulatorDtype = "fp8_split_accumulator";

struct GemmMeasurement {
    Origin origin;
    cost::GemmShape shape;
    cost::GemmClass cls = cost::GemmClass::Dense;
    std::string dtype;             // "bf16", "fp16", "fp32"; empty when the source does not say
    double seconds = 0.0;          // one call
    std::optional<double> tflops;  // the rate as published, when the source gave a rate rather than a time
    std::vector<std::string> tags;

    /// The rate achieved: the published rate when there is one (no round trip through a time), else F / t.
    [[nodiscard]] double achieved_tflops() const;
};

/// The kernels the benchmarks time. The stream kernels are BabelStream's (published measurements use
/// them); Empty is a launch with no work, which is how the launch floor is measured. Rope, CrossEntropy
/// and CrossEntropyFused are framework kernels (Transformer Engine's fused RoPE, Megatron-Core's eager and
/// torch.compile'd vocab-parallel cross-entropy): the harness has none, their records come from published
/// or framework timings in measurement files.
enum class KernelKind {
    Empty,
    Copy,
    Mul,
    Add,
    Triad,
    Dot,
    LayerNorm,
    BiasGelu,
    BiasDropoutAdd,
    ScaleMaskSoftmax,
    Dropout,
    Optimizer,
    Rope,
    CrossEntropy,
    CrossEntropyFused,
};

struct KernelMeasurement {
    Origin origin;
    KernelKind kind = KernelKind::Copy;
    std::int64_t bytes_moved = 0;  // bytes read plus bytes written, as the simulator counts them
    double seconds = 0.0;
    std::optional<double> GBps;  // the bandwidth as published
    std::vector<std::string> tags;

    /// Bytes per second in GB/s: the published value when there is one, else bytes / t.
    [[nodiscard]] double achieved_GBps() const;
};

/// nccl-tests reports each size twice: output buffer apart from the input, and in place.
enum class Placement { OutOfPlace, InPlace };

struct CollectiveMeasurement {
    Origin origin;
    cost::CollectiveKind op = cost::CollectiveKind::AllReduce;
    int ranks = 0;           // n, the group size
    int nodes = 1;           // nodes the group spans
    std::int64_t bytes = 0;  // nccl-tests' S
    Placement placement = Placement::OutOfPlace;
    std::optional<double> seconds;
    std::optional<double> busbw_GBps;
    /// A bus bandwidth relative to an unstated peak (simulator tables such as SimAI's ratio files).
    std::optional<double> busbw_fraction;
    std::vector<std::string> tags;

    [[nodiscard]] cost::Scope scope() const {
        return nodes > 1 ? cost::Scope::InterNode : cost::Scope::IntraNode;
    }
    /// The bus bandwidth in GB/s: as given, or S·f(op, n) / t. Empty for a relative record.
    [[nodiscard]] std::optional<double> bus_bandwidth_GBps() const;
    /// The time of one call: as given, or S·f(op, n) / busbw. Empty for a relative record.
    [[nodiscard]] std::optional<double> time_seconds() const;
};

/// A fact about the measured device, with how it was obtained ("measured" or "derived" and a text).
struct DeviceFact {
    double value = 0.0;
    std::string kind;  // a profile value kind: measured or derived
    std::string how;   // e.g. "cudaMemGetInfo total", "1593 MHz x 2 x 5120 bit / 8"
};

/// What `run` recorded about the device (Google Benchmark context). Rates the device does not state
/// (a CPU's peak) are flagged to be taken as the best measured rate instead.
struct DeviceFacts {
    std::string backend;  // "cpu" or "cuda"
    std::string name;     // e.g. "NVIDIA A100-SXM4-80GB"
    std::optional<DeviceFact> peak_tflops;
    std::optional<DeviceFact> hbm_GBps;
    std::optional<DeviceFact> memory_bytes;
    std::optional<DeviceFact> num_sms;
    std::optional<DeviceFact> gpus_per_node;
    std::optional<DeviceFact>
        compute_capability;              // CUDA major.minor (8.0 Ampere, 9.0 Hopper, 10.0 Blackwell)
    bool peak_is_best_measured = false;  // CPU: no datasheet peak; the best GEMM rate is the peak
    bool hbm_is_best_measured = false;   // CPU: the best streaming rate is the memory bandwidth
    std::string source_id;               // the run file that recorded these
};

/// An input file: its id in the sources table of the fitted profile and its citation there.
struct InputFile {
    std::string path;
    std::string source_id;
    std::string citation;
};

struct MeasurementSet {
    std::vector<InputFile> files;
    /// Source ids that records cite, with their citations (from measurement files' own tables).
    std::vector<std::pair<std::string, std::string>> sources;
    std::vector<GemmMeasurement> gemms;
    std::vector<KernelMeasurement> kernels;
    std::vector<CollectiveMeasurement> collectives;
    std::optional<DeviceFacts> device;
    /// Things an importer skipped (a benchmark that reported an error), for the user to see.
    std::vector<std::string> warnings;

    /// Adds `other`'s files, sources and records. Throws InputError when both define the same source id
    /// with different citations, or both carry device facts (one run per fitted device).
    void append(MeasurementSet other);
    [[nodiscard]] bool empty() const { return gemms.empty() && kernels.empty() && collectives.empty(); }
};

[[nodiscard]] const char* to_string(KernelKind kind);
[[nodiscard]] std::optional<KernelKind> kernel_kind_from(std::string_view name);
/// Every kernel name, for error messages.
[[nodiscard]] std::vector<std::string> kernel_kind_names();
/// The profile's memory_bound.kind_factors key a kernel measures, if any.
[[nodiscard]] std::optional<cost::MemoryBoundKind> memory_bound_kind_of(KernelKind kind);
/// The kernel whose records fit a kind factor: the one memory_bound_kind_of maps to it, and for the generic
/// factor the streaming kernel's own (the copy).
[[nodiscard]] KernelKind kernel_measuring(cost::MemoryBoundKind kind);

[[nodiscard]] const char* to_string(cost::GemmClass cls);
[[nodiscard]] std::optional<cost::GemmClass> gemm_class_from(std::string_view name);
[[nodiscard]] std::optional<cost::CollectiveKind> collective_kind_from(std::string_view name);
[[nodiscard]] const char* to_string(Placement placement);

/// nccl-tests' bus-bandwidth factor: 2(n-1)/n for all-reduce, (n-1)/n for all-gather and
/// reduce-scatter, 1 for send/recv (DESIGN.md §6); the cost model's own.
using cost::busbw_factor;

}  // namespace trainsim::calibrate
