// The layouts the planner searches: every combination of tensor, pipeline and data-parallel size,
// interleaving, micro-batch size, recomputation, distributed optimizer and sequence parallelism for a
// model on N GPUs at a global batch, filtered by the scenario rules (config::validate_scenario).
//
// The space, and its bounds (README "Planning a layout"):
// - t: powers of two up to the GPUs of one node (a tensor-parallel group inside a node, as Megatron-LM
//   and the papers run it);
// - p and v with how the layers fall on the p·v chunks (pipeline_splits.h): even splits, Megatron's
//   split that counts the embedding and the loss as a layer each (`uneven`) and its
//   decoder_first/last_pipeline_num_layers (`first3 last2`; only where t·c·p divides the GPUs), with
//   interleaving (v > 1) where the interleaved schedule allows it (p > 2 and the micro-batch count a
//   multiple of p);
// - b: every divisor of the global batch up to `max_micro_batch`;
// - d: the largest data-parallel size with t·p·d ≤ N GPUs and b·d dividing the global batch (so a
//   layout uses all N GPUs when N factors, and as many as the batch allows otherwise);
// - recompute none, selective or full (uniform, one layer per checkpoint); sequence parallelism only
//   with t > 1, and with d > 1 what the replicas shard: nothing, the optimizer state (the distributed
//   optimizer), the gradients too (ZeRO-2, `zero2`) or the weights too (FSDP, `fsdp`);
// - with search_fp8, BF16 and FP8 (`fp8`);
// - for a mixture-of-experts model, the expert-parallel size ep (`ep8`): every divisor of num_experts
//   up to max_expert_parallel, and the expert tensor-parallel size etp (`etp2`, printed above 1): powers
//   of two up to max_expert_tensor_parallel and a node that divide moe_ffn_hidden_size, with etp·ep
//   dividing t·c·d (Megatron-Core's expert rank order regroups a stage's t·c·d ranks as etp × ep × edp;
//   config/moe_validation.cc); of the data-parallel states only what the MoE layer models: no
//   sharding or the distributed optimizer (its expert state sharded over the edp replicas);
// - the schedules of PlanRequest::schedules (default: Megatron's auto choice only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/config/scenario.h"

namespace trainsim::plan {

struct PlanRequest {
    config::Scenario base;  // the model, hardware and the training knobs the planner does not search
    std::int64_t gpus = 0;
    std::int64_t global_batch = 0;
    std::int64_t max_micro_batch = 16;
    /// The largest expert-parallel size searched for a mixture-of-experts model (trainsim plan
    /// --max-expert-parallel); every valid one by default.
    std::int64_t max_expert_parallel = std::numeric_limits<std::int64_t>::max();
    /// The largest expert tensor-parallel size searched (trainsim plan --max-expert-tensor-parallel); every
    /// power of two up to a node by default.
    std::int64_t max_expert_tensor_parallel = std::numeric_limits<std::int64_t>::max();
    /// Also search FP8 (Transformer Engine's hybrid format with the delayed recipe, the NeMo FP8 runs'
    /// setting) beside BF16. run_plan sets it when the profile has FP8 tensor cores and the base sets no
    /// training.fp8_format (a format the base sets is kept, not searched).
    bool search_fp8 = false;
    /// The schedules searched (trainsim plan --schedules); `auto` is Megatron's choice for each v. The
    /// zero-bubble and DualPipeV schedules join only where the scenario rules accept them.
    std::vector<config::ScheduleKind> schedules{config::ScheduleKind::Auto};
};

struct LayoutSpace {
    std::size_t considered = 0;           // combinations enumerated
    std::vector<config::Scenario> valid;  // those that pass every scenario rule, in enumeration order
};

[[nodiscard]] LayoutSpace enumerate_layouts(const PlanRequest& request);

/// "t8 p35 d8 v3 b1 selective sp distopt" — the searched knobs of a layout, as the planner prints them
/// (`zero2` and `fsdp` stand for the distributed optimizer with those shardings; `ep8` the expert-parallel
/// size, printed for every mixture-of-experts layout, and `etp2` its expert tensor-parallel size above 1).
[[nodiscard]] std::string layout_label(const config::Scenario& scenario);

}  // namespace trainsim::plan
