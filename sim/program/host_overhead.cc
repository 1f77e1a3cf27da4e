#include "sim/program/host_overhead.h"

#include <algorithm>

namespace trainsim::program {

SimTime host_bound_idle(const workload::OpList& ops, std::span<const SimTime> durations,
                        const cost::HostCosts& host) {
    constexpr double kSecondsPerMicrosecond = 1e-6;
    const SimTime launch = to_sim_time(Seconds{host.kernel_launch_us * kSecondsPerMicrosecond});
    const SimTime op_cpu = to_sim_time(Seconds{host.op_dispatch_us * kSecondsPerMicrosecond});
    const SimTime collective_cpu = to_sim_time(Seconds{host.collective_dispatch_us * kSecondsPerMicrosecond});
    SimTime cpu = 0;       // when the CPU has issued the ops so far
    SimTime gpu_free = 0;  // when the compute stream's last kernel ends
    SimTime idle = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].kind == workload::OpKind::Collective) {
            cpu += collective_cpu;
            continue;
        }
        cpu += op_cpu;
        const SimTime start = std::max(gpu_free, cpu + launch);
        idle += start - gpu_free;
        gpu_free = start + durations[i];
    }
    return idle;
}

}  // namespace trainsim::program
