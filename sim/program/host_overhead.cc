#include "sim/program/host_overhead.h"

#include <algorithm>
#include <vector>

#include "sim/core/units.h"

namespace trainsim::program {

HostBound host_bound_idle(const workload::OpList& ops, std::span<const SimTime> durations,
                          const cost::HostCosts& host, SimTime lead) {
    const SimTime launch = to_sim_time(Seconds{host.kernel_launch_us * kSecondsPerMicrosecond});
    const SimTime op_cpu = to_sim_time(Seconds{host.op_dispatch_us * kSecondsPerMicrosecond});
    const SimTime collective_cpu = to_sim_time(Seconds{host.collective_dispatch_us * kSecondsPerMicrosecond});
    SimTime cpu = -lead;   // when the CPU has issued the ops so far
    SimTime gpu_free{};    // when the compute stream is next free
    SimTime idle{};
    // An asynchronous expert exchange (the all-to-alls beside the shared expert under
    // moe_shared_expert_overlap) runs from its issue, and the routed op that joins it starts after it.
    const auto async_exchange = [](const workload::Op& op) {
        return op.kind == workload::OpKind::Collective && !op.blocking &&
               workload::is_expert_token_group(op.group);
    };
    // When each op finished on the GPU, kept only for lists whose CPU waits for one or that join an exchange.
    const bool waits =
        std::any_of(ops.begin(), ops.end(), [](const workload::Op& op) { return op.host_waits_for >= 0; });
    const bool exchanges = std::any_of(ops.begin(), ops.end(), async_exchange);
    std::vector<SimTime> end(waits || exchanges ? ops.size() : 0, SimTime{});
    for (std::size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].host_waits_for >= 0) {
            cpu = std::max(cpu, end[static_cast<std::size_t>(ops[i].host_waits_for)]);
        }
        const bool collective = ops[i].kind == workload::OpKind::Collective;
        cpu += collective ? collective_cpu : op_cpu;
        if (async_exchange(ops[i])) {
            end[i] = std::max(gpu_free, cpu + launch) + durations[i];
            continue;
        }
        if (collective && !ops[i].blocking) {
            if (!end.empty()) {
                end[i] = gpu_free;  // not modelled on the compute stream: as far as it has got
            }
            continue;
        }
        // Ready once the stream is free and the exchanges it joins have ended; idle is what the CPU adds.
        SimTime ready = gpu_free;
        if (exchanges) {
            for (const std::int32_t a : ops[i].after) {
                if (async_exchange(ops[static_cast<std::size_t>(a)])) {
                    ready = std::max(ready, end[static_cast<std::size_t>(a)]);
                }
            }
        }
        const SimTime start = std::max(ready, cpu + launch);
        idle += start - ready;
        gpu_free = start + durations[i];
        if (!end.empty()) {
            end[i] = gpu_free;
        }
    }
    return {idle, std::clamp(gpu_free - cpu, SimTime{}, kUnboundedLead)};
}

}  // namespace trainsim::program
