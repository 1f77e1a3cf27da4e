// Writes small PyTorch profiler (Kineto) traces in the PyTorch 2.x shape for tests: a CPU op with its
// External id, Input Dims and Input type; its cudaLaunchKernel with the correlation; the kernel with
// both ids, and NCCL metadata where asked. Times are given in microseconds.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace trainsim::calibrate::testing {

class KinetoTraceBuilder {
public:
    explicit KinetoTraceBuilder(std::string device = "NVIDIA A100-SXM4-80GB");

    /// Kineto's nanosecond mode: "displayTimeUnit": "ns" and every time written in nanoseconds; the CPU
    /// clock starts at `cpu_start_us` (give GPU times near it: one clock domain).
    void use_nanosecond_clock(double cpu_start_us) {
        nanoseconds_ = true;
        cpu_clock_us_ = cpu_start_us;
    }

    /// aten::mm of [m,k]·[k,n] in `torch_type` ("c10::BFloat16") launching one cutlass kernel.
    void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& torch_type, double start_us,
              double dur_us);
    /// An NCCL kernel; the metadata sits on the kernel or, with `on_op`, on its record_param_comms op.
    void nccl(const std::string& collective, std::int64_t in_nelems, std::int64_t out_nelems,
              const std::string& dtype, int group, const std::string& ranks, double start_us, double dur_us,
              bool on_op = false);
    /// A CPU op with no GPU work.
    void cpu_only(const std::string& name, double start_us, double dur_us);

    [[nodiscard]] std::string text() const;

private:
    [[nodiscard]] nlohmann::json time(double us) const;
    void launch(const std::string& op_name, nlohmann::json op_args, const std::string& kernel,
                nlohmann::json kernel_args, double start_us, double dur_us);

    std::string device_;
    bool nanoseconds_ = false;
    nlohmann::json events_ = nlohmann::json::array();
    std::int64_t next_id_ = 1;
    double cpu_clock_us_ = 1000.0;
};

}  // namespace trainsim::calibrate::testing
