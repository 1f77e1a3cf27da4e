// Recomputation-aware partitioning (Lynx v4's third idea; its algorithm is not public, this one is ours):
// how many transformer layers each pipeline stage gets, chosen together with the recompute plan.
//
// Why the uniform split is not best: in 1F1B an earlier stage holds more micro-batches in flight, so
// under a memory budget it must recompute more (and its recompute may not fit into its windows), while
// the last stage also runs the output layer and the loss. Balancing stage times therefore means giving
// the stages that recompute most, or carry the output layer, fewer layers.
//
// Search: start from the scenario's split and its best recompute plan (the heuristic scheduler). Each
// round takes each stage's load from that simulation (busy time plus exposed communication: what the
// stage adds to the pipeline) and its peak memory, and tries moving one layer per model chunk (v
// layers, so chunks stay equal) from the most loaded and from the fullest stage to the least loaded
// and to the emptiest; each candidate split gets its own recompute plan from the heuristic scheduler
// and is simulated. The best candidate is kept when it beats the current one (fits first, then faster);
// the search stops when no move helps or after max_rounds. Every split is evaluated at most once.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/recompute_search/recompute_scheduler.h"

namespace trainsim::recompute_search {

struct PartitionOptions {
    SearchOptions search;         // the recompute scheduler's budget and folding, for every split
    std::int64_t max_rounds = 0;  // 0: 2 × p
};

struct SplitOutcome {
    std::vector<std::int64_t> split;  // layers per pipeline rank
    SearchResult search;              // its best recompute plan
};

struct PartitionResult {
    SplitOutcome start;  // the scenario's own split (uniform unless it gives one)
    SplitOutcome best;   // the best split found (the start when nothing beat it)
    std::int64_t splits_evaluated = 0;
    std::int64_t simulations = 0;
    Seconds search_time;
};

/// Every split's recompute plan comes from the heuristic scheduler, whatever the scenario's own policy
/// (the plans it weighs include Megatron's none, selective and full).
[[nodiscard]] PartitionResult partition_stages(const config::Scenario& scenario, const cost::CostModel& cost,
                                               const PartitionOptions& options);

}  // namespace trainsim::recompute_search
