#include "sim/recompute_search/policy_comparison.h"

#include <cstdio>

#include "sim/core/units.h"
#include "sim/report/report_json.h"

namespace trainsim::recompute_search {

namespace {

PolicyRow row_of(const std::string& policy, const PlanEvaluation& e) {
    return PolicyRow{policy,
                     e.iteration_time,
                     e.peak_memory,
                     e.fits,
                     e.report.breakdown.recompute,
                     e.report.breakdown.hidden_recompute,
                     e.report.breakdown.hidden_in,
                     e.plan.describe()};
}

// Milliseconds per stage (the mean over stages), by the kind of wait.
std::string hidden_text(const report::HiddenRecompute& h) {
    char text[300];
    std::snprintf(
        text, sizeof text,
        "pipeline warm-up %.1f ms, steady state %.1f ms, cool-down %.1f ms; TP collectives %.1f ms; "
        "DP reduction %.1f ms (mean per stage)",
        h.pipeline_warmup.value * 1e3, h.pipeline_steady.value * 1e3, h.pipeline_cooldown.value * 1e3,
        h.tensor_parallel.value * 1e3, h.data_parallel.value * 1e3);
    return text;
}

}  // namespace

PolicyComparison compare_policies(const config::Scenario& scenario, const cost::CostModel& cost,
                                  bool partition) {
    const config::Scenario sc = overlapped_scenario(scenario);
    const SearchResult search = schedule_recompute(sc, cost);
    const Bytes budget = search.best.report.memory_capacity_bytes;
    const Bytes used_budget =
        sc.training.recompute_memory_budget ? Bytes{*sc.training.recompute_memory_budget} : budget;
    const std::vector<std::int64_t> split = sc.pipeline_split();
    using recompute::LayerRecompute;
    using recompute::RecomputePlan;
    PolicyComparison c;
    c.name = scenario.name;
    c.budget = used_budget;
    // Megatron's policies are the uniform plans (full: uniform, one layer per checkpoint).
    const std::pair<const char*, LayerRecompute> megatron[] = {
        {"none", LayerRecompute::Keep},
        {"selective", LayerRecompute::SelectiveOnDemand},
        {"full", LayerRecompute::FullOnDemand}};
    for (const auto& [name, r] : megatron) {
        c.rows.push_back(
            row_of(name, evaluate_plan(sc, cost, RecomputePlan::uniform(split, r), used_budget)));
    }
    c.rows.push_back(row_of("overlapped", search.best));
    c.rows.push_back(row_of("overlapped plan on demand",
                            evaluate_plan(sc, cost, on_demand_version(search.best.plan), used_budget)));
    c.scheduler = search.scheduler;
    c.candidates = search.candidates;
    c.plans_simulated = search.evaluations;
    c.search_time = search.search_time;
    if (partition) {
        PartitionOptions options;
        options.search.memory_budget = used_budget;
        const PartitionResult r = partition_stages(sc, cost, options);
        PolicyRow row = row_of("overlapped, partitioned", r.best.search.best);
        row.plan = "layers per stage " + config::split_text(r.best.split) + "; " + row.plan;
        c.rows.push_back(std::move(row));
        c.partition =
            PartitionSummary{r.start.split, r.best.split, r.splits_evaluated, r.simulations, r.search_time};
    }
    return c;
}

void write_text(std::ostream& out, const std::vector<PolicyComparison>& comparisons) {
    for (const PolicyComparison& c : comparisons) {
        char head[200];
        std::snprintf(head, sizeof head, "%s  (memory budget %.2f GiB per GPU)\n", c.name.c_str(),
                      to_gib(c.budget));
        out << head;
        out << "    policy                       iteration s   peak GiB  fits   exposed recompute ms  hidden "
               "ms\n";
        for (const PolicyRow& r : c.rows) {
            char line[240];
            std::snprintf(line, sizeof line, "    %-27s %12.4f %10.2f  %-5s %21.1f %10.1f\n",
                          r.policy.c_str(), r.iteration_time.value, to_gib(r.peak_memory),
                          r.fits ? "yes" : "no", r.exposed_recompute.value * 1e3,
                          r.hidden_recompute.value * 1e3);
            out << line;
        }
        char tail[200];
        std::snprintf(tail, sizeof tail,
                      "    %s scheduler: %lld plans simulated in %.2f s; chose: ", c.scheduler.c_str(),
                      static_cast<long long>(c.plans_simulated), c.search_time.value);
        out << tail << c.rows[3].plan << "\n";
        out << "    overlapped: hidden in " << hidden_text(c.rows[3].hidden_in) << "\n";
        if (c.partition) {
            char line[300];
            std::snprintf(line, sizeof line,
                          "    partitioner: %lld splits (%lld plans) simulated in %.2f s; layers per stage ",
                          static_cast<long long>(c.partition->splits_evaluated),
                          static_cast<long long>(c.partition->simulations), c.partition->search_time.value);
            out << line << config::split_text(c.partition->start_split) << " -> "
                << config::split_text(c.partition->best_split) << "; chose: " << c.rows.back().plan << "\n";
            out << "    overlapped, partitioned: hidden in " << hidden_text(c.rows.back().hidden_in) << "\n";
        }
        for (const Candidate& k : c.candidates) {
            char line[300];
            std::snprintf(line, sizeof line, "      tried %-70s %9.4f s %8.2f GiB %s\n", k.plan.c_str(),
                          k.iteration_time.value, to_gib(k.peak_memory), k.fits ? "fits" : "over budget");
            out << line;
        }
    }
}

nlohmann::ordered_json to_json(const std::vector<PolicyComparison>& comparisons) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const PolicyComparison& c : comparisons) {
        nlohmann::ordered_json rows = nlohmann::ordered_json::array();
        for (const PolicyRow& r : c.rows) {
            rows.push_back({{"policy", r.policy},
                            {"iteration_time_s", r.iteration_time.value},
                            {"peak_memory_bytes", r.peak_memory.value},
                            {"fits_in_memory", r.fits},
                            {"recompute_s", r.exposed_recompute.value},
                            {"hidden_recompute_s", r.hidden_recompute.value},
                            {"hidden_recompute_in", report::to_json(r.hidden_in)},
                            {"plan", r.plan}});
        }
        out.push_back({{"name", c.name},
                       {"budget_bytes", c.budget.value},
                       {"rows", rows},
                       {"scheduler", c.scheduler},
                       {"candidates",
                        [&] {
                            nlohmann::ordered_json list = nlohmann::ordered_json::array();
                            for (const Candidate& k : c.candidates) {
                                list.push_back({{"plan", k.plan},
                                                {"iteration_time_s", k.iteration_time.value},
                                                {"peak_memory_bytes", k.peak_memory.value},
                                                {"fits", k.fits}});
                            }
                            return list;
                        }()},
                       {"plans_simulated", c.plans_simulated},
                       {"search_time_s", c.search_time.value}});
        if (c.partition) {
            out.back()["partition"] = {{"start_layers_per_stage", c.partition->start_split},
                                       {"layers_per_stage", c.partition->best_split},
                                       {"splits_evaluated", c.partition->splits_evaluated},
                                       {"plans_simulated", c.partition->simulations},
                                       {"search_time_s", c.partition->search_time.value}};
        }
    }
    return out;
}

}  // namespace trainsim::recompute_search
