// Recomputation policies side by side for one scenario: none, selective and full (Megatron), the plan
// the overlapped scheduler chooses, and that same plan recomputed on demand (the same ops, without the
// overlap) — iteration time, peak memory, and how much recomputation was hidden or exposed.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/recompute_search/recompute_scheduler.h"
#include "sim/recompute_search/stage_partition.h"

namespace trainsim::recompute_search {

struct PolicyRow {
    std::string policy;
    Seconds iteration_time;
    Bytes peak_memory{0};
    bool fits = false;
    Seconds exposed_recompute;
    Seconds hidden_recompute;
    report::HiddenRecompute hidden_in;  // the waits the hidden recomputation filled
    std::string plan;
};

/// The overlapped policy again with recomputation-aware partitioning (stage_partition.h).
struct PartitionSummary {
    std::vector<std::int64_t> start_split;  // the scenario's split
    std::vector<std::int64_t> best_split;
    std::int64_t splits_evaluated = 0;
    std::int64_t simulations = 0;
    Seconds search_time;
};

struct PolicyComparison {
    std::string name;
    Bytes budget{0};
    /// none, selective, full, overlapped, overlapped plan on demand, and with `partition` last:
    /// overlapped on the partitioner's split.
    std::vector<PolicyRow> rows;
    std::string scheduler;
    std::vector<Candidate> candidates;
    std::int64_t plans_simulated = 0;
    Seconds search_time;
    std::optional<PartitionSummary> partition;
};

/// With `partition`, also searches the layers per stage (heuristic scheduler for every split).
[[nodiscard]] PolicyComparison compare_policies(const config::Scenario& scenario, const cost::CostModel& cost,
                                                bool partition = false);

void write_text(std::ostream& out, const std::vector<PolicyComparison>& comparisons);
[[nodiscard]] nlohmann::ordered_json to_json(const std::vector<PolicyComparison>& comparisons);

}  // namespace trainsim::recompute_search
