#include "calibrate/bench/cpu/cpu_backend.h"

#include <fstream>
#include <string>
#include <unistd.h>

#include "calibrate/bench/cpu/cpu_gemm.h"
#include "calibrate/bench/cpu/cpu_kernels.h"
#include "calibrate/bench/cpu/thread_collectives.h"

namespace trainsim::calibrate {

namespace {

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos && colon + 2 <= line.size()) {
                return line.substr(colon + 2);
            }
        }
    }
    return "CPU";
}

class CpuBackend : public Backend {
public:
    explicit CpuBackend(int ranks) : ranks_(ranks) {}

    std::string name() const override { return "cpu"; }
    std::string dtype() const override { return "fp32"; }

    DeviceFacts facts() const override {
        DeviceFacts f;
        f.backend = name();
        f.name = cpu_model() + ", one core per rank";
        const long pages = ::sysconf(_SC_PHYS_PAGES);
        const long page_size = ::sysconf(_SC_PAGE_SIZE);
        if (pages > 0 && page_size > 0) {
            f.memory_bytes = DeviceFact{static_cast<double>(pages) * static_cast<double>(page_size),
                                        "measured", "sysconf physical pages x page size"};
        }
        // One core runs one GEMM at a time: no waves of thread blocks to quantize.
        f.num_sms = DeviceFact{1.0, "derived", "one core per simulated GPU, so no wave quantization"};
        f.gpus_per_node = DeviceFact{static_cast<double>(ranks_), "derived", "threads (ranks) of the run"};
        f.peak_is_best_measured = true;
        f.hbm_is_best_measured = true;
        return f;
    }

    std::int64_t bytes_moved(const KernelCase& kernel) const override {
        return kernel_bytes_moved(kernel.kind, kernel.elements, kCpuElementBytes);
    }

    std::unique_ptr<TimedOp> gemm(const GemmCase& gemm) override { return make_cpu_gemm(gemm); }
    std::unique_ptr<TimedOp> kernel(const KernelCase& kernel) override { return make_cpu_kernel(kernel); }
    std::unique_ptr<TimedOp> collective(const CollectiveCase& c) override {
        return make_thread_collective(c);
    }

private:
    int ranks_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int ranks) {
    return std::make_unique<CpuBackend>(ranks);
}

}  // namespace trainsim::calibrate
