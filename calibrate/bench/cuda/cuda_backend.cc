#include "calibrate/bench/cuda/cuda_backend.h"

#include <cuda_runtime.h>

#include <string>

#include "calibrate/bench/cuda/cublaslt_gemm.h"
#include "calibrate/bench/cuda/cuda_check.h"
#include "calibrate/bench/cuda/cuda_kernels.h"
#include "calibrate/bench/cuda/nccl_collectives.h"
#include "sim/core/input_error.h"

namespace trainsim::calibrate {

namespace {

int device_count() {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        throw InputError(std::string("--backend=cuda: no CUDA device (") +
                         (e != cudaSuccess ? cudaGetErrorString(e) : "none visible") + ")");
    }
    return count;
}

// The generation a compute capability belongs to, as NVIDIA names it (CUDA programming guide, compute
// capabilities table): what a fitted profile says it describes.
const char* generation(int major, int minor) {
    switch (major) {
    case 7:
        return minor >= 5 ? "Turing" : "Volta";
    case 8:
        return minor == 9 ? "Ada" : "Ampere";
    case 9:
        return "Hopper";
    case 10:
    case 11:
    case 12:
        return "Blackwell";
    default:
        return "unknown generation";
    }
}

int attribute(cudaDeviceAttr what, int device) {
    int v = 0;
    TRAINSIM_CUDA_CHECK(cudaDeviceGetAttribute(&v, what, device));
    return v;
}

class CudaBackend : public Backend {
public:
    explicit CudaBackend(const CudaOptions& options)
        : count_(device_count()), process_(cuda::process_rank_from_environment()), nodes_(options.nodes) {
        if (process_.world > 1) {
            if (process_.world % nodes_ != 0) {
                throw InputError("--nodes=" + std::to_string(nodes_) + " must divide the " +
                                 std::to_string(process_.world) + " processes");
            }
            if (options.bootstrap_file.empty()) {
                throw InputError("--bootstrap-file is required for a run of " +
                                 std::to_string(process_.world) + " processes (a path every node sees)");
            }
            device_ = process_.local_rank;
            if (device_ >= count_) {
                throw InputError("local rank " + std::to_string(device_) + " has no GPU (" +
                                 std::to_string(count_) + " visible)");
            }
        } else if (nodes_ != 1) {
            throw InputError("--nodes=" + std::to_string(nodes_) +
                             " needs one process per GPU, launched by mpirun or srun");
        }
        TRAINSIM_CUDA_CHECK(cudaSetDevice(device_));
        lt_ = std::make_unique<cuda::CublasLt>();
        groups_ = process_.world > 1 ? std::make_unique<cuda::NcclGroups>(process_, options.bootstrap_file)
                                     : std::make_unique<cuda::NcclGroups>(count_);
        TRAINSIM_CUDA_CHECK(cudaSetDevice(device_));
        sms_ = attribute(cudaDevAttrMultiProcessorCount, device_);
        major_ = attribute(cudaDevAttrComputeCapabilityMajor, device_);
        minor_ = attribute(cudaDevAttrComputeCapabilityMinor, device_);
    }

    std::string name() const override { return "cuda"; }
    std::string dtype() const override { return "bf16"; }
    bool supports_fp8() const override {
        // FP8 tensor cores: Ada (8.9), Hopper (9.0) and later.
        constexpr int kFirstFp8 = 89;
        return major_ * 10 + minor_ >= kFirstFp8;
    }
    bool writes_output() const override { return process_.rank == 0; }
    int nodes() const override { return nodes_; }

    DeviceFacts facts() const override {
        DeviceFacts f;
        f.backend = name();
        cudaDeviceProp prop{};
        TRAINSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
        const std::string arch = "sm_" + std::to_string(prop.major * 10 + prop.minor);
        f.name = std::string(prop.name) + " (" + arch + ", " + generation(prop.major, prop.minor) + ")";
        f.compute_capability = DeviceFact{prop.major + prop.minor / 10.0, "measured",
                                          "cudaDeviceProp major.minor " + std::to_string(prop.major) + "." +
                                              std::to_string(prop.minor) + " (" + arch + ", " +
                                              generation(prop.major, prop.minor) + ")"};
        std::size_t free = 0;
        std::size_t total = 0;
        TRAINSIM_CUDA_CHECK(cudaSetDevice(device_));
        TRAINSIM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
        f.memory_bytes = DeviceFact{static_cast<double>(total), "measured", "cudaMemGetInfo total"};
        f.num_sms = DeviceFact{static_cast<double>(sms_), "measured", "cudaDevAttrMultiProcessorCount"};
        // The datasheet formula on the clocks the device reports: memory clock x 2 (double data rate) x bus.
        const int clock_khz = attribute(cudaDevAttrMemoryClockRate, device_);
        const int bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, device_);
        if (clock_khz > 0 && bus_bits > 0) {
            const double GBps = clock_khz * 1e3 * 2.0 * bus_bits / 8.0 / 1e9;
            f.hbm_GBps =
                DeviceFact{GBps, "derived",
                           std::to_string(clock_khz / 1000) + " MHz x 2 x " + std::to_string(bus_bits) +
                               "-bit bus / 8 (cudaDevAttrMemoryClockRate, cudaDevAttrGlobalMemoryBusWidth)"};
        }
        const int per_node = process_.world > 1 ? process_.world / nodes_ : count_;
        f.gpus_per_node = DeviceFact{static_cast<double>(per_node), "measured",
                                     process_.world > 1 ? "processes per node of the launched group"
                                                        : "cudaGetDeviceCount"};
        // No peak: the clock the device reports is not the one the datasheet's peak uses (H100 SXM reports
        // 1980 MHz, its 989 TFLOP/s use 1830); fit takes it from --base or --peak-tflops.
        return f;
    }

    std::int64_t bytes_moved(const KernelCase& kernel) const override {
        return kernel_bytes_moved(kernel.kind, kernel.elements, cuda::kElementBytes);
    }

    std::unique_ptr<TimedOp> gemm(const GemmCase& gemm) override {
        TRAINSIM_CUDA_CHECK(cudaSetDevice(device_));
        return cuda::make_cublaslt_gemm(*lt_, gemm);
    }

    std::unique_ptr<TimedOp> kernel(const KernelCase& kernel) override {
        TRAINSIM_CUDA_CHECK(cudaSetDevice(device_));
        return cuda::make_cuda_kernel(kernel, sms_);
    }

    std::unique_ptr<TimedOp> collective(const CollectiveCase& c) override { return groups_->collective(c); }

private:
    int count_ = 0;
    cuda::ProcessRank process_;
    int nodes_ = 1;
    int device_ = 0;
    int sms_ = 0;
    int major_ = 0;
    int minor_ = 0;
    std::unique_ptr<cuda::CublasLt> lt_;
    std::unique_ptr<cuda::NcclGroups> groups_;
};

}  // namespace

bool cuda_device_available() {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

std::unique_ptr<Backend> make_cuda_backend(const CudaOptions& options) {
    return std::make_unique<CudaBackend>(options);
}

}  // namespace trainsim::calibrate
