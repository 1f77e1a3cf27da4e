// Megatron's tensor-parallel linear layers in the backward, shared by the transformer layer and the
// output layer (papers.md §1.11).
#pragma once

#include <string>

#include "sim/workload/layer_shape.h"
#include "sim/workload/op_list_builder.h"

namespace trainsim::workload {

/// Backward of a column-parallel linear y = x·W (W split by output columns, `local_out` per rank) over
/// `tokens` rows and `in_features` inputs. Without SP the input-gradient all-reduce runs asynchronously
/// under the weight-gradient GEMM; with SP the input all-gather runs under the input-gradient GEMM and
/// the input-gradient reduce-scatter under the weight-gradient GEMM.
void column_parallel_backward(OpListBuilder& ops, const LayerShape& shape, std::int64_t tokens,
                              std::int64_t in_features, std::int64_t local_out, const std::string& name);

}  // namespace trainsim::workload
