// Recomputation policies side by side for one scenario: none, selective and full (Megatron), the plan
// the overlapped scheduler chooses, and that same plan recomputed on demand (the same ops, without the
// overlap) — iteration time, peak memory, and how much recomputation was hidden or exposed.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/recompute_search/recompute_scheduler.h"

namespace trainsim::recompute_search {

struct PolicyRow {
    std::string policy;
    Seconds iteration_time;
    Bytes peak_memory{0};
    bool fits = false;
    Seconds exposed_recompute;
    Seconds hidden_recompute;
    std::string plan;
};

struct PolicyComparison {
    std::string name;
    Bytes budget{0};
    std::vector<PolicyRow> rows;  // none, selective, full, overlapped, overlapped plan on demand
    std::string scheduler;
    std::vector<Candidate> candidates;
    std::int64_t plans_simulated = 0;
    Seconds search_time;
};

[[nodiscard]] PolicyComparison compare_policies(const config::Scenario& scenario,
                                                const cost::CostModel& cost);

void write_text(std::ostream& out, const std::vector<PolicyComparison>& comparisons);
[[nodiscard]] nlohmann::ordered_json to_json(const std::vector<PolicyComparison>& comparisons);

}  // namespace trainsim::recompute_search
