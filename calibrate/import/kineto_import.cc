#include "calibrate/import/kineto_import.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "calibrate/import/kineto_compressed_input.h"
#include "calibrate/import/kineto_elementwise_call.h"
#include "calibrate/import/kineto_gemm_call.h"
#include "calibrate/import/kineto_launch_join.h"
#include "calibrate/import/kineto_trace_reader.h"
#include "calibrate/measure/source_id.h"
#include "sim/core/input_error.h"
#include "sim/core/units.h"

namespace trainsim::calibrate {

namespace {
// Larger groups than any cluster has are a corrupt trace (and would overflow the node arithmetic).
constexpr int kMaxGroup = 1 << 24;

// "void cutlass::Kernel<cutlass_80_..._nn_align1>(cutlass_80_...::Params)" → "cutlass::Kernel<…_nn_align1>"
std::string short_kernel_name(const std::string& name) {
    std::string s = name.rfind("void ", 0) == 0 ? name.substr(5) : name;
    s = s.substr(0, s.find('('));
    while (!s.empty() && s.back() == ' ') {
        s.pop_back();
    }
    constexpr std::size_t kMax = 100;
    return s.size() > kMax ? s.substr(0, kMax) + "..." : s;
}

// Kineto timestamps as the file shows them: microseconds with three decimals.
std::string microseconds(std::int64_t ns) {
    const std::string frac = std::to_string(1000 + (ns % 1000 + 1000) % 1000).substr(1);
    return std::to_string(ns / 1000) + "." + frac;
}

std::string citation_of(const std::string& id, const kineto::Trace& trace, const kineto::GpuEvent& e) {
    return id + ": kernel '" + short_kernel_name(trace.name(e.name)) + "' at ts=" + microseconds(e.ts_ns) +
           " us (device " + std::to_string(e.device) + ", stream " + std::to_string(e.stream) + ")";
}

// "[0, 1, 8, 9]" → {0, 1, 8, 9}
std::vector<int> parse_ranks(const std::string& text) {
    std::vector<int> ranks;
    int value = 0;
    bool in_number = false;
    for (const char c : text) {
        if (c >= '0' && c <= '9') {
            value = value < 100'000'000 ? value * 10 + (c - '0') : value;  // no rank has 10 digits
            in_number = true;
        } else if (in_number) {
            ranks.push_back(value);
            value = 0;
            in_number = false;
        }
    }
    if (in_number) {
        ranks.push_back(value);
    }
    return ranks;
}

std::string counts_text(const std::map<std::string, int>& counts) {
    std::string s;
    for (const auto& [name, n] : counts) {
        s += (s.empty() ? "" : ", ") + name + " " + std::to_string(n);
    }
    return s;
}

class Importer {
public:
    Importer(const kineto::Trace& trace, const KinetoImportOptions& options)
        : trace_(trace), options_(options), id_(source_id_for_path(trace.path)),
          record_prefix_(std::filesystem::path(trace.path).filename().string() + " "),
          launched_by_(kineto::launching_ops(trace)) {}

    MeasurementSet run() {
        MeasurementSet set;
        set.files.push_back({trace_.path, id_, citation()});
        gemms(set);
        collectives(set);
        copies(set);
        elementwise(set);
        for (const std::string& s : trace_.skipped) {
            set.warnings.push_back(trace_.path + ": skipped " + s + " (the profiles describe NVIDIA GPUs)");
        }
        if (set.empty()) {
            std::string why;
            for (const std::string& w : set.warnings) {
                why += "; " + w.substr(trace_.path.size() + 2);
            }
            throw InputError(trace_.path +
                             ": no GEMM with recorded shapes, NCCL kernel with collective metadata "
                             "or device-to-device copy to import" +
                             why);
        }
        return set;
    }

private:
    std::string citation() const {
        std::string c = "PyTorch profiler trace " + display_path(trace_.path);
        if (trace_.rank && trace_.world_size) {
            c += ", rank " + std::to_string(*trace_.rank) + " of " + std::to_string(*trace_.world_size);
        }
        for (const kineto::Device& d : trace_.devices) {
            if (d.vendor == kineto::Vendor::Nvidia || d.vendor == kineto::Vendor::Unknown) {
                c += ", " + d.name;
                break;
            }
        }
        return c;
    }

    void gemms(MeasurementSet& set) {
        // A GEMM call's time is the sum of the GEMM kernels its op launched (a split-K GEMM is two).
        std::map<std::int32_t, std::vector<std::size_t>> calls;
        int orphan = 0;
        for (std::size_t g = 0; g < trace_.gpu.size(); ++g) {
            const kineto::GpuEvent& e = trace_.gpu[g];
            if (e.activity != kineto::GpuActivity::Kernel || !kineto::is_gemm_kernel(trace_.name(e.name))) {
                continue;
            }
            const std::int32_t op = launched_by_[g];
            if (op < 0) {
                ++orphan;
                continue;
            }
            calls[op].push_back(g);
        }
        std::vector<std::pair<std::size_t, std::int32_t>> ordered;  // by first kernel
        for (const auto& [op, kernels] : calls) {
            ordered.emplace_back(kernels.front(), op);
        }
        std::sort(ordered.begin(), ordered.end());
        int unshaped = 0;
        for (const auto& [first, op_index] : ordered) {
            const kineto::CpuOp& op = trace_.cpu_ops[op_index];
            const std::optional<kineto::GemmCall> call = kineto::gemm_call(trace_, op);
            if (!call) {
                ++unshaped;
                continue;
            }
            std::int64_t ns = 0;
            for (const std::size_t g : calls[op_index]) {
                ns += trace_.gpu[g].dur_ns;
            }
            if (ns <= 0) {
                continue;
            }
            const kineto::GpuEvent& e = trace_.gpu[first];
            GemmMeasurement m;
            m.shape = {call->m, call->n, call->k, call->batch};
            m.cls = cost::GemmClass::Dense;
            m.dtype = call->dtype;
            m.seconds = static_cast<double>(ns) * kSecondsPerNanosecond;
            m.origin.source_id = id_;
            m.origin.record = record_prefix_ + "gemm-" + std::to_string(set.gemms.size() + 1);
            m.origin.source = citation_of(id_, trace_, e) + ", launched by " + trace_.name(op.name) +
                              (calls[op_index].size() > 1
                                   ? " (" + std::to_string(calls[op_index].size()) + " kernels summed)"
                                   : "");
            m.tags = {"kineto"};
            if (!m.dtype.empty()) {
                m.tags.push_back(m.dtype);
            }
            set.gemms.push_back(std::move(m));
        }
        if (unshaped > 0) {
            set.warnings.push_back(trace_.path + ": " + std::to_string(unshaped) +
                                   " GEMM calls have no Input Dims and were left out (profile with "
                                   "record_shapes=True)");
        }
        if (orphan > 0) {
            set.warnings.push_back(trace_.path + ": " + std::to_string(orphan) +
                                   " GEMM-library kernels launched outside an aten GEMM op (convolutions, "
                                   "torch.compile graphs, fused ops) were left out");
        }
    }

    // The collective metadata of a kernel: its own args, else its launching op's.
    const kineto::CollectiveArgs* metadata(std::size_t g) const {
        const kineto::GpuEvent& e = trace_.gpu[g];
        if (e.collective >= 0) {
            return &trace_.collectives[e.collective];
        }
        const std::int32_t op = launched_by_[g];
        if (op >= 0 && trace_.cpu_ops[op].collective >= 0) {
            return &trace_.collectives[trace_.cpu_ops[op].collective];
        }
        return nullptr;
    }

    void collectives(MeasurementSet& set) {
        int bare = 0;
        std::map<std::string, int> unmodelled;
        for (std::size_t g = 0; g < trace_.gpu.size(); ++g) {
            const kineto::GpuEvent& e = trace_.gpu[g];
            if (e.activity != kineto::GpuActivity::Kernel || trace_.name(e.name).rfind("nccl", 0) != 0) {
                continue;
            }
            const kineto::CollectiveArgs* c = metadata(g);
            if (c == nullptr) {
                ++bare;
                continue;
            }
            const std::optional<cost::CollectiveKind> kind = cost::collective_kind_from_name(c->name);
            const int bytes_per_element = kineto::element_bytes(c->dtype);
            const std::vector<int> ranks = parse_ranks(c->group_ranks);
            const int group = c->group_size > 0 ? c->group_size : static_cast<int>(ranks.size());
            const std::int64_t elements = std::max(c->in_nelems, c->out_nelems);
            std::int64_t bytes = 0;
            if (!kind) {
                ++unmodelled[kineto::printable(c->name)];
                continue;
            }
            if (bytes_per_element == 0 || group < 2 || group > kMaxGroup || elements <= 0 || e.dur_ns <= 0 ||
                __builtin_mul_overflow(elements, bytes_per_element, &bytes)) {
                ++unmodelled[kineto::printable(c->name) + " (dtype '" + kineto::printable(c->dtype) +
                             "', group " + std::to_string(group) + ")"];
                continue;
            }
            CollectiveMeasurement m;
            m.op = *kind;
            m.ranks = group;
            m.bytes = bytes;  // nccl-tests' S: the larger of input and output
            m.seconds = static_cast<double>(e.dur_ns) * kSecondsPerNanosecond;
            m.tags = {"kineto"};
            std::string nodes_how;
            if (!ranks.empty()) {
                std::set<int> nodes;
                for (const int r : ranks) {
                    nodes.insert(r / options_.gpus_per_node);
                }
                m.nodes = static_cast<int>(nodes.size());
                nodes_how = "nodes from the group's ranks at " + std::to_string(options_.gpus_per_node) +
                            " GPUs per node";
            } else {
                m.nodes = static_cast<int>((static_cast<std::int64_t>(group) + options_.gpus_per_node - 1) /
                                           options_.gpus_per_node);
                m.tags.push_back("nodes-assumed");
                nodes_how = "ranks not recorded: nodes assumed ceil(group / " +
                            std::to_string(options_.gpus_per_node) + ")";
            }
            m.origin.source_id = id_;
            m.origin.record = record_prefix_ + "nccl-" + std::to_string(set.collectives.size() + 1);
            m.origin.source = citation_of(id_, trace_, e) + ", " + c->name + " of " +
                              std::to_string(elements) + " x " + c->dtype + " over " + std::to_string(group) +
                              " ranks " + (c->group_ranks.empty() ? "" : c->group_ranks + " ") + "(" +
                              nodes_how + ")";
            set.collectives.push_back(std::move(m));
        }
        if (bare > 0) {
            set.warnings.push_back(trace_.path + ": " + std::to_string(bare) +
                                   " NCCL kernels carry no collective metadata and were left out (PyTorch "
                                   "records it from 2.1 on)");
        }
        if (!unmodelled.empty()) {
            set.warnings.push_back(trace_.path +
                                   ": NCCL kernels of collectives the simulator does not price "
                                   "were left out: " +
                                   counts_text(unmodelled));
        }
    }

    // A device-to-device memcpy reads and writes its bytes: the copy kernel's bytes_moved is twice them.
    void copies(MeasurementSet& set) {
        for (const kineto::GpuEvent& e : trace_.gpu) {
            if (e.activity != kineto::GpuActivity::Memcpy || trace_.name(e.memcpy_kind) != "DtoD" ||
                e.bytes <= 0 || e.bytes > std::numeric_limits<std::int64_t>::max() / 2 || e.dur_ns <= 0) {
                continue;
            }
            KernelMeasurement m;
            m.kind = KernelKind::Copy;
            m.bytes_moved = 2 * e.bytes;
            m.seconds = static_cast<double>(e.dur_ns) * kSecondsPerNanosecond;
            m.tags = {"kineto", "memcpy"};
            m.origin.source_id = id_;
            m.origin.record = record_prefix_ + "copy-" + std::to_string(set.kernels.size() + 1);
            m.origin.source = citation_of(id_, trace_, e) + ", " + std::to_string(e.bytes) + " bytes";
            set.kernels.push_back(std::move(m));
        }
    }

    // An elementwise op that launched exactly one kernel, with the bytes its recorded shapes give.
    void elementwise(MeasurementSet& set) {
        std::map<std::int32_t, std::vector<std::size_t>> launched;
        for (std::size_t g = 0; g < trace_.gpu.size(); ++g) {
            if (trace_.gpu[g].activity == kineto::GpuActivity::Kernel && launched_by_[g] >= 0) {
                launched[launched_by_[g]].push_back(g);
            }
        }
        for (const auto& [op_index, kernels] : launched) {
            const kineto::CpuOp& op = trace_.cpu_ops[op_index];
            const std::optional<kineto::ElementwiseCall> call = kineto::elementwise_call(trace_, op);
            const kineto::GpuEvent& e = trace_.gpu[kernels.front()];
            if (!call || kernels.size() != 1 || e.dur_ns <= 0) {
                continue;
            }
            KernelMeasurement m;
            m.kind = call->pattern == kineto::StreamPattern::Add     ? KernelKind::Add
                     : call->pattern == kineto::StreamPattern::Scale ? KernelKind::Mul
                                                                     : KernelKind::Copy;
            m.bytes_moved = call->bytes_moved;
            m.seconds = static_cast<double>(e.dur_ns) * kSecondsPerNanosecond;
            m.tags = {"kineto", "elementwise"};
            m.origin.source_id = id_;
            m.origin.record = record_prefix_ + "elementwise-" + std::to_string(set.kernels.size() + 1);
            m.origin.source = citation_of(id_, trace_, e) + ", launched by " + trace_.name(op.name) + ", " +
                              std::to_string(call->bytes_moved) + " bytes read and written";
            set.kernels.push_back(std::move(m));
        }
    }

    const kineto::Trace& trace_;
    KinetoImportOptions options_;
    std::string id_;
    std::string record_prefix_;  // record ids stay unique when several traces go into one file
    std::vector<std::int32_t> launched_by_;
};

}  // namespace

bool looks_like_kineto_trace(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
        return false;  // the format's own reader reports the error
    }
    unsigned char magic[2] = {0, 0};
    const std::size_t n = std::fread(magic, 1, 2, f);
    std::fclose(f);
    if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        return true;  // gzip: no other input format is compressed
    }
    kineto::CompressedInput input(path);
    std::string head(64 * 1024, '\0');
    head.resize(
        static_cast<std::size_t>(input.sgetn(head.data(), static_cast<std::streamsize>(head.size()))));
    const std::size_t first = head.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || head[first] != '{') {
        return false;
    }
    for (const char* key : {"\"traceEvents\"", "\"schemaVersion\"", "\"deviceProperties\""}) {
        if (head.find(key) != std::string::npos) {
            return true;
        }
    }
    return false;
}

MeasurementSet import_kineto_trace(const std::string& path, const KinetoImportOptions& options) {
    if (options.gpus_per_node < 1) {
        throw InputError("--gpus-per-node=" + std::to_string(options.gpus_per_node) + " must be ≥ 1");
    }
    const kineto::Trace trace = kineto::read_trace(path);
    if (trace.gpu.empty()) {
        if (!trace.skipped.empty()) {
            std::string what;
            for (const std::string& s : trace.skipped) {
                what += (what.empty() ? "" : "; ") + s;
            }
            throw InputError(path + ": no NVIDIA GPU activity to import (skipped " + what + ")");
        }
        if (!trace.labelled.empty()) {
            throw InputError(path + ": a trace written by 'trainsim run --trace' holds simulated times, not "
                                    "measurements (compare it with 'trainsim check')");
        }
        throw InputError(path + ": no GPU kernels in the trace (a CPU-only trace? profile with "
                                "ProfilerActivity.CUDA)");
    }
    return Importer(trace, options).run();
}

}  // namespace trainsim::calibrate
