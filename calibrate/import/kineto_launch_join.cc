#include "calibrate/import/kineto_launch_join.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

namespace trainsim::kineto {

namespace {

// Kept CPU ops of one thread, by start time, to find the innermost one around a launch.
class ThreadOps {
public:
    void add(std::int32_t op) { ops_.push_back(op); }
    void sort(const Trace& trace) {
        std::sort(ops_.begin(), ops_.end(), [&](std::int32_t a, std::int32_t b) {
            return trace.cpu_ops[a].ts_ns < trace.cpu_ops[b].ts_ns;
        });
    }
    // Nested ops start after their parents, so the latest-starting op that contains t is the innermost.
    [[nodiscard]] std::int32_t innermost(const Trace& trace, std::int64_t t) const {
        auto it = std::upper_bound(ops_.begin(), ops_.end(), t, [&](std::int64_t time, std::int32_t op) {
            return time < trace.cpu_ops[op].ts_ns;
        });
        while (it != ops_.begin()) {
            --it;
            const CpuOp& op = trace.cpu_ops[*it];
            if (op.ts_ns + op.dur_ns >= t) {
                return *it;
            }
        }
        return -1;
    }

private:
    std::vector<std::int32_t> ops_;
};

}  // namespace

std::vector<std::int32_t> launching_ops(const Trace& trace) {
    std::unordered_map<std::int64_t, std::int32_t> by_external;
    std::map<std::pair<std::int64_t, std::int64_t>, ThreadOps> by_thread;
    for (std::size_t i = 0; i < trace.cpu_ops.size(); ++i) {
        const CpuOp& op = trace.cpu_ops[i];
        if (op.external_id >= 0) {
            by_external.emplace(op.external_id, static_cast<std::int32_t>(i));
        }
        by_thread[{op.pid, op.tid}].add(static_cast<std::int32_t>(i));
    }
    for (auto& [thread, ops] : by_thread) {
        ops.sort(trace);
    }
    std::unordered_map<std::int64_t, std::size_t> by_correlation;
    for (std::size_t i = 0; i < trace.launches.size(); ++i) {
        by_correlation.emplace(trace.launches[i].correlation, i);
    }

    std::vector<std::int32_t> result(trace.gpu.size(), -1);
    for (std::size_t g = 0; g < trace.gpu.size(); ++g) {
        const GpuEvent& e = trace.gpu[g];
        if (e.external_id >= 0 && e.external_id != e.correlation) {
            const auto it = by_external.find(e.external_id);
            result[g] = it != by_external.end() ? it->second : -1;
            continue;
        }
        const auto launch = by_correlation.find(e.correlation);
        if (launch == by_correlation.end()) {
            continue;
        }
        const RuntimeLaunch& l = trace.launches[launch->second];
        const auto thread = by_thread.find({l.pid, l.tid});
        if (thread != by_thread.end()) {
            result[g] = thread->second.innermost(trace, l.ts_ns);
        }
    }
    return result;
}

}  // namespace trainsim::kineto
