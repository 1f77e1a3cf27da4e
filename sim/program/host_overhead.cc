#include "sim/program/host_overhead.h"

#include <algorithm>

#include "sim/core/units.h"

namespace trainsim::program {

HostBound host_bound_idle(const workload::OpList& ops, std::span<const SimTime> durations,
                          const cost::HostCosts& host, SimTime lead) {
    const SimTime launch = to_sim_time(Seconds{host.kernel_launch_us * kSecondsPerMicrosecond});
    const SimTime op_cpu = to_sim_time(Seconds{host.op_dispatch_us * kSecondsPerMicrosecond});
    const SimTime collective_cpu = to_sim_time(Seconds{host.collective_dispatch_us * kSecondsPerMicrosecond});
    SimTime cpu = -lead;   // when the CPU has issued the ops so far
    SimTime gpu_free = 0;  // when the compute stream is next free
    SimTime idle = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const bool collective = ops[i].kind == workload::OpKind::Collective;
        cpu += collective ? collective_cpu : op_cpu;
        if (collective && !ops[i].blocking) {
            continue;
        }
        const SimTime start = std::max(gpu_free, cpu + launch);
        idle += start - gpu_free;
        gpu_free = start + durations[i];
    }
    return {idle, std::max<SimTime>(0, gpu_free - cpu)};
}

}  // namespace trainsim::program
