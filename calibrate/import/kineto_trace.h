// A PyTorch profiler (Kineto) trace reduced to what calibration and `trainsim check` read: the GPU
// activities (kernels, memcpys, memsets) with their launch's correlation and External id, the CPU ops
// that name a GEMM's shapes or a collective, and the runtime launches that join the two. Times are
// integer nanoseconds whatever clock unit the file used.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainsim::kineto {

enum class GpuActivity : std::uint8_t { Kernel, Memcpy, Memset };

/// NCCL metadata as PyTorch records it on the kernel and on `record_param_comms` (PyTorch ≥ 2.1;
/// older traces have none).
struct CollectiveArgs {
    std::string name;  // "allreduce", "allgather", "_reduce_scatter_base", "send", ...
    std::int64_t in_nelems = -1;
    std::int64_t out_nelems = -1;
    int group_size = 0;
    std::string dtype;        // "Float", "BFloat16", ...
    std::string group_ranks;  // "[0, 1]" as written; empty when not recorded
};

struct GpuEvent {
    GpuActivity activity = GpuActivity::Kernel;
    std::uint32_t name = 0;  // index into Trace::names
    std::int64_t ts_ns = 0;
    std::int64_t dur_ns = 0;
    std::int64_t device = 0;
    std::int64_t stream = 0;
    std::int64_t correlation = -1;
    std::int64_t external_id = -1;
    std::int64_t bytes = -1;        // memcpy and memset
    std::int32_t collective = -1;   // index into Trace::collectives
    std::uint32_t memcpy_kind = 0;  // index into Trace::names: "DtoD", "HtoD", ... (memcpy only)
};

/// A CPU op or user annotation kept because it can describe the kernels it launches.
struct CpuOp {
    std::uint32_t name = 0;
    std::int64_t pid = 0;
    std::int64_t tid = 0;
    std::int64_t ts_ns = 0;
    std::int64_t dur_ns = 0;
    std::int64_t external_id = -1;
    /// One entry per input; empty for an input that is not a tensor of known shape.
    std::vector<std::vector<std::int64_t>> input_dims;
    std::vector<std::string> input_types;  // "float", "c10::BFloat16", "c10::Half", "Scalar", ...
    std::int32_t collective = -1;
};

/// A cudaLaunchKernel (or cuLaunchKernel, cudaMemcpyAsync, ...) call on a CPU thread.
struct RuntimeLaunch {
    std::int64_t pid = 0;
    std::int64_t tid = 0;
    std::int64_t ts_ns = 0;
    std::int64_t correlation = -1;
    std::int64_t external_id = -1;
};

/// A slice of a trace written by `trainsim run --trace`: an op with the labels the simulator gave it.
struct LabelledSlice {
    std::int64_t gpu = 0;
    std::uint32_t name = 0;
    std::uint32_t category = 0;
    std::uint32_t phase = 0;
    std::int32_t layer = -1;
    std::int32_t microbatch = -1;
    std::int32_t chunk = -1;
    std::int64_t ts_ns = 0;
    std::int64_t dur_ns = 0;
};

/// A ProfilerStep#N annotation: one training iteration as the CPU saw it.
struct Step {
    std::int64_t ts_ns = 0;
    std::int64_t dur_ns = 0;
    std::int64_t tid = 0;  // the training loop's thread: the forward's ops run on it, the backward's not
};

enum class Vendor : std::uint8_t { Nvidia, Rocm, Mtia, Unknown };

struct Device {
    std::int64_t id = 0;
    std::string name;
    Vendor vendor = Vendor::Unknown;
};

struct Trace {
    std::string path;
    std::vector<std::string> names;  // interned kernel, op and label names
    std::vector<GpuEvent> gpu;       // NVIDIA (or unnamed) devices only
    std::vector<CpuOp> cpu_ops;
    std::vector<RuntimeLaunch> launches;
    std::vector<CollectiveArgs> collectives;
    std::vector<LabelledSlice> labelled;
    std::vector<Step> steps;
    std::vector<Device> devices;
    std::optional<int> rank;
    std::optional<int> world_size;
    bool nanosecond_clock = false;  // "displayTimeUnit": "ns" (Kineto's nanosecond mode)
    std::int64_t events = 0;        // trace events read
    /// What was named and left out (ROCm and MTIA devices' activities), for the user to see.
    std::vector<std::string> skipped;

    [[nodiscard]] const std::string& name(std::uint32_t index) const { return names[index]; }
};

/// The CPU ops a reader keeps: GEMMs (aten::mm, addmm, bmm, baddbmm, linear, matmul, _scaled_mm), the
/// elementwise ops whose bytes their shapes give (aten::add, add_, mul, mul_, copy_) and those that
/// carry collective metadata (record_param_comms, nccl:*, c10d::*).
[[nodiscard]] bool is_kept_cpu_op(const std::string& name);

/// `text` with control characters replaced by '?' and cut to `limit` characters: trace contents quoted in
/// a one-line message stay one line.
[[nodiscard]] std::string printable(const std::string& text, std::size_t limit = 80);

}  // namespace trainsim::kineto
