#include "sim/recompute_search/stage_partition.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <set>

namespace trainsim::recompute_search {

namespace {

// What a stage adds to the pipeline: the same measure the heuristic scheduler ranks stages by.
double stage_load(const report::StageReport& stage) {
    return (stage.time.busy() + stage.time.exposed_comm()).value;
}

// Stage indices ordered by `key`, ascending (ties by index, so the search is deterministic).
template <class Key> std::vector<std::size_t> order_by(std::size_t n, Key key) {
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
    return order;
}

}  // namespace

PartitionResult partition_stages(const config::Scenario& scenario, const cost::CostModel& cost,
                                 const PartitionOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    const config::Scenario sc = overlapped_scenario(scenario);
    const std::int64_t p = sc.parallelism.pipeline_model_parallel_size;
    const std::int64_t unit = sc.parallelism.virtual_pipeline_model_parallel_size;
    const std::int64_t rounds = options.max_rounds > 0 ? options.max_rounds : 2 * p;

    PartitionResult result;
    std::set<std::vector<std::int64_t>> seen;
    auto evaluate = [&](const std::vector<std::int64_t>& split) {
        config::Scenario at = sc;
        at.parallelism.layers_per_pipeline_stage = split;
        at.parallelism.layers_per_virtual_stage.clear();  // the partition moves whole ranks' layers
        SplitOutcome outcome{split, heuristic_schedule(at, cost, options.search)};
        ++result.splits_evaluated;
        result.simulations += outcome.search.evaluations;
        seen.insert(split);
        return outcome;
    };
    result.start = evaluate(sc.pipeline_split());
    result.best = result.start;
    for (std::int64_t round = 0; round < rounds && p > 1; ++round) {
        const std::vector<report::StageReport>& stages = result.best.search.best.report.stages;
        const auto n = static_cast<std::size_t>(p);
        const auto by_load = order_by(n, [&](std::size_t s) { return stage_load(stages[s]); });
        const auto by_memory = order_by(n, [&](std::size_t s) { return stages[s].peak_memory_bytes.value; });
        // Donors: the most loaded and the fullest stage; receivers: the least loaded and the emptiest.
        const std::set<std::size_t> donors{by_load.back(), by_memory.back()};
        const std::set<std::size_t> receivers{by_load.front(), by_memory.front()};
        std::vector<SplitOutcome> candidates;
        for (const std::size_t from : donors) {
            for (const std::size_t to : receivers) {
                std::vector<std::int64_t> split = result.best.split;
                if (from == to || split[from] <= unit) {
                    continue;
                }
                split[from] -= unit;
                split[to] += unit;
                if (!seen.contains(split)) {
                    candidates.push_back(evaluate(split));
                }
            }
        }
        const SplitOutcome* pick = nullptr;
        for (const SplitOutcome& c : candidates) {
            if (better(c.search.best, (pick != nullptr ? pick : &result.best)->search.best)) {
                pick = &c;
            }
        }
        if (pick == nullptr) {
            break;
        }
        result.best = *pick;
    }
    result.search_time = elapsed_since(start);
    return result;
}

}  // namespace trainsim::recompute_search
