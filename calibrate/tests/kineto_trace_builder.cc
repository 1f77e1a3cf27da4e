#include "calibrate/tests/kineto_trace_builder.h"

#include <cmath>
#include <utility>

namespace trainsim::calibrate::testing {

using nlohmann::json;

namespace {

constexpr std::int64_t kPid = 4242;
constexpr std::int64_t kThread = 4243;
constexpr std::int64_t kStream = 7;

}  // namespace

KinetoTraceBuilder::KinetoTraceBuilder(std::string device) : device_(std::move(device)) {}

json KinetoTraceBuilder::time(double us) const {
    // Written the way Kineto writes them: microseconds with three decimals, or integer nanoseconds.
    return nanoseconds_ ? json(static_cast<std::int64_t>(std::llround(us * 1000.0)))
                        : json(std::round(us * 1000.0) / 1000.0);
}

void KinetoTraceBuilder::launch(const std::string& op_name, json op_args, const std::string& kernel,
                                json kernel_args, double start_us, double dur_us) {
    const std::int64_t external = next_id_++;
    const std::int64_t correlation = 100000 + next_id_++;
    op_args["External id"] = external;
    const double cpu = cpu_clock_us_;
    cpu_clock_us_ += 20.0;
    events_.push_back({{"ph", "X"},
                       {"cat", "cpu_op"},
                       {"name", op_name},
                       {"pid", kPid},
                       {"tid", kThread},
                       {"ts", time(cpu)},
                       {"dur", time(10.0)},
                       {"args", op_args}});
    events_.push_back({{"ph", "X"},
                       {"cat", "cuda_runtime"},
                       {"name", "cudaLaunchKernel"},
                       {"pid", kPid},
                       {"tid", kThread},
                       {"ts", time(cpu + 2.0)},
                       {"dur", time(3.0)},
                       {"args", {{"External id", external}, {"cbid", 211}, {"correlation", correlation}}}});
    kernel_args["External id"] = external;
    kernel_args["correlation"] = correlation;
    kernel_args["device"] = 0;
    kernel_args["stream"] = kStream;
    events_.push_back({{"ph", "X"},
                       {"cat", "kernel"},
                       {"name", kernel},
                       {"pid", 0},
                       {"tid", kStream},
                       {"ts", time(start_us)},
                       {"dur", time(dur_us)},
                       {"args", kernel_args}});
}

void KinetoTraceBuilder::gemm(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& torch_type,
                              double start_us, double dur_us) {
    launch("aten::mm", {{"Input Dims", {{m, k}, {k, n}}}, {"Input type", {torch_type, torch_type}}},
           "void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_nn_align8>("
           "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_nn_align8::Params)",
           json::object(), start_us, dur_us);
}

void KinetoTraceBuilder::nccl(const std::string& collective, std::int64_t in_nelems, std::int64_t out_nelems,
                              const std::string& dtype, int group, const std::string& ranks, double start_us,
                              double dur_us, bool on_op) {
    const json meta = {{"Collective name", collective},
                       {"In msg nelems", in_nelems},
                       {"Out msg nelems", out_nelems},
                       {"Group size", group},
                       {"dtype", dtype},
                       {"Process Group Ranks", ranks}};
    launch("record_param_comms", on_op ? meta : json::object(),
           "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
           on_op ? json::object() : meta, start_us, dur_us);
}

void KinetoTraceBuilder::cpu_only(const std::string& name, double start_us, double dur_us) {
    events_.push_back({{"ph", "X"},
                       {"cat", "cpu_op"},
                       {"name", name},
                       {"pid", kPid},
                       {"tid", kThread},
                       {"ts", time(start_us)},
                       {"dur", time(dur_us)},
                       {"args", {{"External id", next_id_++}}}});
}

std::string KinetoTraceBuilder::text() const {
    // In Kineto's member order: displayTimeUnit comes after the events, so a reader learns the clock unit
    // last.
    const json devices = json::array({{{"id", 0}, {"name", device_}, {"numSms", 108}}});
    const json distributed = {{"backend", "nccl"}, {"rank", 0}, {"world_size", 8}};
    return "{\"schemaVersion\": 1, \"deviceProperties\": " + devices.dump() +
           ", \"distributedInfo\": " + distributed.dump() + ", \"traceEvents\": " + events_.dump() +
           ", \"traceName\": \"test\", \"displayTimeUnit\": \"" + (nanoseconds_ ? "ns" : "ms") + "\"}";
}

}  // namespace trainsim::calibrate::testing
