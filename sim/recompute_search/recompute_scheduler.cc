#include "sim/recompute_search/recompute_scheduler.h"

#include <chrono>
#include <cmath>

#include "sim/core/input_error.h"

namespace trainsim::recompute_search {

using recompute::LayerRecompute;
using recompute::RecomputePlan;

namespace {

struct Search {
    PlanEvaluations& plans;
    const SearchOptions& options;
    SearchResult result;
    bool have = false;

    const PlanEvaluation& consider(const RecomputePlan& plan, bool record = false) {
        PlanEvaluation e = plans.evaluate(plan, options.memory_budget);
        ++result.evaluations;
        if (record) {
            result.candidates.push_back({e.plan.describe(), e.iteration_time, e.peak_memory, e.fits});
        }
        if (!have || better(e, result.best)) {
            result.best = std::move(e);
            have = true;
        }
        return result.best;
    }
};

}  // namespace

config::Scenario overlapped_scenario(const config::Scenario& scenario) {
    config::Scenario sc = scenario;
    sc.training.recompute_granularity = config::RecomputeGranularity::Overlapped;
    sc.training.recompute_modules.reset();  // the plans' selective layers recompute core attention
    sc.training.recompute_method.reset();
    sc.training.recompute_num_layers.reset();
    sc.training.num_microbatches_with_partial_activation_checkpoints.reset();
    return sc;
}

SearchResult heuristic_schedule(const config::Scenario& sc, const cost::CostModel& cost,
                                const SearchOptions& options) {
    PlanEvaluations plans(sc, cost, options.fold);
    return heuristic_schedule(plans, options);
}

SearchResult heuristic_schedule(PlanEvaluations& plans, const SearchOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    const config::Scenario& sc = plans.scenario();
    Search search{plans, options, {}, false};
    search.result.scheduler = "heuristic";
    const std::int64_t p = sc.parallelism.pipeline_model_parallel_size;
    const std::vector<std::int64_t> split = sc.pipeline_split();
    // 1. Uniform plans; remember each one's per-stage cost and memory.
    struct Uniform {
        RecomputePlan plan;
        std::vector<report::StageReport> stages;
    };
    std::vector<Uniform> uniform;
    for (const LayerRecompute r : recompute::kAllLayerRecomputes) {
        for (const std::int64_t lookahead : {0, 1, 2}) {
            if (!recompute::is_overlapped(r) && lookahead != 1) {
                continue;
            }
            const RecomputePlan plan = RecomputePlan::uniform(split, r, lookahead);
            PlanEvaluation e = plans.evaluate(plan, options.memory_budget);
            ++search.result.evaluations;
            search.result.candidates.push_back({e.plan.describe(), e.iteration_time, e.peak_memory, e.fits});
            uniform.push_back({plan, e.report.stages});
            if (!search.have || better(e, search.result.best)) {
                search.result.best = std::move(e);
                search.have = true;
            }
        }
    }
    // 2. Per stage, the policy whose stage time (its busy, exposed-recompute and exposed-communication
    // time: what the stage adds to the pipeline) was lowest among those that fit that stage's memory.
    if (p > 1) {
        RecomputePlan mix = RecomputePlan::uniform(split, LayerRecompute::FullOnDemand, 1);
        for (std::int64_t s = 0; s < p; ++s) {
            const Uniform* pick = nullptr;
            double pick_time = 0;
            for (const Uniform& u : uniform) {
                const report::StageReport& st = u.stages[static_cast<std::size_t>(s)];
                const double time = (st.time.busy() + st.time.exposed_comm()).value;
                if (st.peak_memory_bytes <= options.memory_budget && (pick == nullptr || time < pick_time)) {
                    pick = &u;
                    pick_time = time;
                }
            }
            if (pick != nullptr) {
                mix.layers[static_cast<std::size_t>(s)] = pick->plan.layers[static_cast<std::size_t>(s)];
                if (recompute::is_overlapped(pick->plan.layers[static_cast<std::size_t>(s)][0])) {
                    mix.lookahead = pick->plan.lookahead;  // the last overlapped stage's choice
                }
            }
        }
        search.consider(mix, /*record=*/true);
    }
    search.result.search_time = elapsed_since(start);
    return search.result;
}

SearchResult optimal_schedule(const config::Scenario& sc, const cost::CostModel& cost,
                              const SearchOptions& options) {
    PlanEvaluations plans(sc, cost, options.fold);
    return optimal_schedule(plans, options);
}

SearchResult optimal_schedule(PlanEvaluations& plans, const SearchOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<std::int64_t> split = plans.scenario().pipeline_split();
    // Every (stage, layer) slot, in order.
    std::vector<std::pair<std::size_t, std::size_t>> slot_of;
    for (std::size_t s = 0; s < split.size(); ++s) {
        for (std::int64_t j = 0; j < split[s]; ++j) {
            slot_of.emplace_back(s, static_cast<std::size_t>(j));
        }
    }
    const auto slots = static_cast<std::int64_t>(slot_of.size());
    constexpr std::int64_t kChoices = std::size(recompute::kAllLayerRecomputes);
    const double plan_count = std::pow(static_cast<double>(kChoices), static_cast<double>(slots)) * 3.0;
    if (plan_count > static_cast<double>(options.max_evaluations)) {
        throw InputError("training.recompute_scheduler=optimal: " + std::to_string(kChoices) + "^" +
                         std::to_string(slots) + " x 3 plans exceed the limit of " +
                         std::to_string(options.max_evaluations) + " simulations; use \"heuristic\"");
    }
    Search search{plans, options, {}, false};
    search.result.scheduler = "optimal";
    std::vector<std::int64_t> digits(static_cast<std::size_t>(slots), 0);
    for (const std::int64_t lookahead : {0, 1, 2}) {
        std::fill(digits.begin(), digits.end(), 0);
        while (true) {
            RecomputePlan plan = RecomputePlan::uniform(split, LayerRecompute::Keep, lookahead);
            for (std::size_t i = 0; i < slot_of.size(); ++i) {
                plan.layers[slot_of[i].first][slot_of[i].second] = recompute::kAllLayerRecomputes[digits[i]];
            }
            // A lookahead only matters for plans that overlap something.
            if (lookahead == 1 || plan.has_overlap()) {
                search.consider(plan);
            }
            std::size_t i = 0;
            while (i < digits.size() && ++digits[i] == kChoices) {
                digits[i++] = 0;
            }
            if (i == digits.size()) {
                break;
            }
        }
    }
    search.result.search_time = elapsed_since(start);
    return search.result;
}

SearchResult schedule_recompute(const config::Scenario& sc, const cost::CostModel& cost,
                                const program::Fold& fold) {
    SearchOptions options;
    options.fold = fold;
    options.memory_budget = sc.training.recompute_memory_budget
                                ? Bytes{*sc.training.recompute_memory_budget}
                                : cost.profile().memory_visible - cost.profile().memory_reserved;
    if (sc.training.recompute_scheduler == config::RecomputeScheduler::Optimal) {
        return optimal_schedule(sc, cost, options);
    }
    return heuristic_schedule(sc, cost, options);
}

}  // namespace trainsim::recompute_search
