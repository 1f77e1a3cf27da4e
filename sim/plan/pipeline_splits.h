// The pipeline splits the planner searches: how L transformer layers fall on p pipeline ranks and their
// v model chunks, as Megatron-LM's three ways of writing a split (megatron/core/transformer/
// transformer_block.py get_num_layers_to_build, and the checks of transformer_config.py and
// megatron/training/arguments.py):
// - even: p divides L and v divides L / p;
// - accounted (`uneven`, account_for_embedding/loss_in_pipeline_split): the embedding and the loss count
//   as a layer each, p > 2 divides L + 2 and v divides a rank's (L + 2) / p slots (with v = 1 at least 2:
//   trainsim's rule); the first virtual stage (rank 0, chunk 0) and the last (rank p − 1, chunk v − 1)
//   build one layer fewer, possibly none;
// - first/last (`first3 last2`, decoder_first/last_pipeline_num_layers): p > 2 ranks, the middle p − 2
//   holding mid layers each and the first and last rank the rest, each of the three a positive multiple
//   of v (a rank's chunks are equal). Megatron accepts every such (first, last); the planner takes, for
//   each p and v, the fewest middle layers that leave neither end heavier than a middle rank, and the
//   rest shared between the ends as evenly as multiples of v allow (both orders when they differ): the
//   ends carry the embedding and the output layer, so they are the ranks to lighten, and searching every
//   (first, last) would multiply the space by up to L² / p per p. Splits equal to an even or accounted
//   one are left out (the same layers per chunk). The layout space takes them only where t·c·p divides
//   the GPUs (layout_space.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/scenario.h"

namespace trainsim::plan {

enum class SplitKind { Even, Accounted, FirstLast };

struct PipelineSplit {
    std::int64_t stages = 1;  // p
    std::int64_t chunks = 1;  // v
    SplitKind kind = SplitKind::Even;
    std::int64_t first = 0;  // FirstLast: layers on rank 0 and rank p − 1
    std::int64_t last = 0;

    /// Sets p, v and Megatron's split keys of `par`, clearing every other split key (the split is
    /// resolved afterwards by config::resolve_pipeline_split).
    void apply_to(config::ParallelConfig& par) const;
};

/// The divisors of n up to at_most, ascending.
[[nodiscard]] std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t at_most);

/// Every split above with at most `max_stages` ranks, in order of p, then kind, then v.
[[nodiscard]] std::vector<PipelineSplit> pipeline_splits(std::int64_t layers, std::int64_t max_stages);

/// "" for an even split, "uneven" for the accounted one, "first3 last2" for decoder_first/last.
[[nodiscard]] std::string split_label(const config::ParallelConfig& par);

}  // namespace trainsim::plan
