#include "sim/plan/planner.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "sim/core/input_error.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/hardware_profile.h"
#include "sim/plan/memory_bound.h"
#include "sim/plan/time_bound.h"
#include "sim/sweep/point_runner.h"
#include "sim/sweep/worker_pool.h"

namespace trainsim::plan {

PlanResult run_plan(const PlanRequest& request, const PlanOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    PlanResult result;
    const cost::HardwareProfile profile =
        cost::load_hardware_profile(request.base.hardware.profile, options.profile_directory);
    result.capacity = profile.memory_visible - profile.memory_reserved;
    if (!(options.memory_headroom >= 0.0 && options.memory_headroom < 1.0)) {
        throw InputError("memory headroom " + std::to_string(options.memory_headroom) +
                         " must be in [0, 1) (a share of the usable memory)");
    }
    result.memory_headroom = options.memory_headroom;
    result.budget = Bytes{static_cast<std::int64_t>(static_cast<double>(result.capacity.value) *
                                                    (1.0 - options.memory_headroom))};

    PlanRequest searched = request;
    // FP8 beside BF16 wherever the GPU has FP8 tensor cores and the base scenario chose no precision
    // (dense, MoE and MLA layers all run in FP8: sim/workload/fp8_layer.h), but not with MTP depths, which
    // are simulated in BF16 only (layer_shape_of refuses them and would stop the whole search).
    searched.search_fp8 =
        profile.has_fp8() && !request.base.training.fp8_format && request.base.model.mtp_num_layers == 0;
    LayoutSpace space = enumerate_layouts(searched);
    result.considered = space.considered;
    result.valid = space.valid.size();
    std::vector<config::Scenario> candidates;
    for (config::Scenario& sc : space.valid) {
        if (memory_lower_bound(sc) > result.budget) {
            ++result.pruned_by_memory;
        } else {
            candidates.push_back(std::move(sc));
        }
    }
    // Each candidate's time bound, computed in parallel (each worker with its own cost model).
    const unsigned jobs = std::max(1u, options.jobs);
    std::vector<Seconds> bound(candidates.size());
    if (!options.exhaustive) {
        sweep::parallel_for(candidates.size(), jobs, [&](std::size_t i, unsigned) {
            try {
                bound[i] = iteration_time_lower_bound(candidates[i], cost::CostModel(profile));
            } catch (const std::exception&) {
                bound[i] = Seconds{0.0};  // simulated first, so that its error is reported
            }
        });
    }
    std::vector<std::size_t> order(candidates.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return bound[a] < bound[b]; });

    std::vector<sweep::PointRunner> runners(jobs, sweep::PointRunner(options.profile_directory, {}));
    // Times of the fitting layouts simulated so far, to know the top-th best.
    std::vector<Seconds> fitting_times;
    const std::size_t batch = std::max<std::size_t>(jobs * 2, 4);
    std::size_t next = 0;
    while (next < order.size()) {
        if (!options.exhaustive && fitting_times.size() >= options.top) {
            std::nth_element(fitting_times.begin(),
                             fitting_times.begin() + static_cast<std::ptrdiff_t>(options.top - 1),
                             fitting_times.end());
            if (bound[order[next]] > fitting_times[options.top - 1]) {
                break;  // sorted by bound: no layout left can beat the top
            }
        }
        const std::size_t count = std::min(batch, order.size() - next);
        std::vector<sweep::PointOutcome> outcomes(count);
        sweep::parallel_for(count, jobs, [&](std::size_t i, unsigned worker) {
            outcomes[i] = runners[worker].simulate(candidates[order[next + i]]);
        });
        for (std::size_t i = 0; i < count; ++i) {
            config::Scenario& sc = candidates[order[next + i]];
            if (!outcomes[i].report) {
                ++result.failed;
                result.errors.push_back(sc.name + ": " + outcomes[i].error);
            } else if (outcomes[i].report->fits_in_memory &&
                       outcomes[i].report->peak_memory_bytes <= result.budget) {
                fitting_times.push_back(outcomes[i].report->iteration_time);
                result.ranked.push_back({std::move(sc), std::move(*outcomes[i].report)});
            }
        }
        next += count;
        result.simulated += count;
    }
    result.skipped_by_time = order.size() - next;
    result.fit = result.ranked.size();
    // Fastest first; ties (equal simulated times) keep enumeration order, so the ranking is deterministic.
    std::stable_sort(result.ranked.begin(), result.ranked.end(),
                     [](const RankedLayout& a, const RankedLayout& b) {
                         return a.report.iteration_time < b.report.iteration_time;
                     });
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace trainsim::plan
