#include "sim/config/moe_validation.h"

#include <string>

#include "sim/config/rule_text.h"

namespace trainsim::config {

namespace {

constexpr std::string_view kEp = "parallelism.expert_model_parallel_size";
constexpr std::string_view kEtp = "parallelism.expert_tensor_parallel_size";

void check_expert_parallel(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    const std::int64_t ep = p.expert_model_parallel_size;
    if (!s.model.moe) {
        if (ep != 1) {
            fail(show(kEp, ep) + " requires a mixture-of-experts model (model.num_experts)");
        }
        if (p.expert_tensor_parallel_size) {
            fail(std::string(kEtp) + ": applies only to a mixture-of-experts model (model.num_experts)");
        }
        return;
    }
    const MoeConfig& moe = *s.model.moe;
    if (moe.num_experts % ep != 0) {
        fail(show(kEp, ep) + " must divide " + show("model.num_experts", moe.num_experts) +
             " (each expert-parallel rank holds num_experts / ep whole experts)");
    }
    // Megatron-Core's RankGenerator for the expert layers: etp × ep × edp = tp × cp × dp in every
    // pipeline stage (parallel_state.initialize_model_parallel, "expert_tensor_model_pipeline_parallel").
    const std::int64_t etp = p.expert_tensor_parallel();
    const std::int64_t dense = p.tensor_model_parallel_size * p.context_parallel_size * p.data_parallel_size;
    if (dense % (etp * ep) != 0) {
        fail(show(kEtp, etp) + " × " + show(kEp, ep) + " = " + std::to_string(etp * ep) +
             " must divide tensor × context × data parallel = " + std::to_string(dense) +
             " (the expert layers regroup the same ranks of a pipeline stage: etp·ep·edp = tp·cp·dp)");
    }
    if (moe.ffn_hidden_size % etp != 0) {
        fail(show(kEtp, etp) + " must divide " + show("model.moe_ffn_hidden_size", moe.ffn_hidden_size) +
             " (each expert's MLP is split across the expert tensor-parallel ranks)");
    }
    const std::int64_t t = p.tensor_model_parallel_size;
    if (moe.shared_expert_intermediate_size % t != 0) {
        fail(show("parallelism.tensor_model_parallel_size", t) + " must divide " +
             show("model.moe_shared_expert_intermediate_size", moe.shared_expert_intermediate_size) +
             " (the shared expert is split like a dense MLP)");
    }
    // Megatron-LM's arguments.py: "When using expert parallelism and tensor parallelism, sequence
    // parallelism must be used" (the dispatcher works on the sequence-parallel shard of the tokens).
    if (ep > 1 && t > 1 && !p.sequence_parallel) {
        fail(show(kEp, ep) + " with " + show("parallelism.tensor_model_parallel_size", t) +
             " requires parallelism.sequence_parallel=true (Megatron-LM's rule)");
    }
}

void check_moe_model(const Scenario& s) {
    if (!s.model.moe) {
        return;
    }
    const MoeConfig& moe = *s.model.moe;
    if (moe.router_topk > moe.num_experts) {
        fail(show("model.moe_router_topk", moe.router_topk) + " must not exceed " +
             show("model.num_experts", moe.num_experts) + " (each token goes to topk distinct experts)");
    }
    // Keeps the expert weights (L · E · 3 · f_moe · h) inside the int64 headroom of kMaxParameterProduct.
    const double experts = static_cast<double>(s.model.num_layers) * static_cast<double>(moe.num_experts) *
                           static_cast<double>(moe.ffn_hidden_size) *
                           static_cast<double>(s.model.hidden_size);
    if (experts > static_cast<double>(kMaxParameterProduct)) {
        fail(
            "model.num_layers × model.num_experts × model.moe_ffn_hidden_size × model.hidden_size must be at "
            "most 2^52 (the expert weights would overflow the byte counts)");
    }
}

void check_mla(const Scenario& s) {
    if (!s.model.mla) {
        return;
    }
    // Megatron's num_floating_point_operations asserts it: MLA has no key/value groups.
    if (s.model.num_query_groups) {
        fail("model.num_query_groups: not allowed with model.multi_latent_attention=true (keys and values "
             "come "
             "from one shared latent per token)");
    }
}

// Megatron-Core's checks of overlap_moe_expert_parallel_comm (transformer_config.py __post_init__) that
// trainsim can meet, and the schedules its combined 1F1B exists for (schedules.py).
void check_moe_pair_overlap(const Scenario& s) {
    if (!s.parallelism.overlap_moe_expert_parallel_comm) {
        return;
    }
    const std::string key = "parallelism.overlap_moe_expert_parallel_comm";
    if (!s.model.moe || s.model.moe->num_moe_layers() == 0 || s.parallelism.expert_model_parallel_size < 2) {
        fail(key + " needs MoE layers and parallelism.expert_model_parallel_size > 1 (Megatron-Core: only "
                   "with expert model parallelism)");
    }
    if (s.model.moe->token_dispatcher != MoeTokenDispatcher::AllToAll) {
        fail(key + " needs model.moe_token_dispatcher_type=\"alltoall\" (Megatron-Core: alltoall or flex; "
                   "flex is not modelled)");
    }
    const RecomputeGranularity g = s.training.recompute_granularity;
    if (g == RecomputeGranularity::Full || g == RecomputeGranularity::Overlapped) {
        fail(key + " is not possible with training.recompute_granularity=" + "\"" +
             std::string(to_string(g)) + "\"" +
             " (Megatron-Core: disable full recomputation; overlapped is trainsim's own)");
    }
    if (g == RecomputeGranularity::Selective &&
        s.training.selective_modules().contains(RecomputeModule::Moe)) {
        fail(key + " is not possible with \"moe\" in training.recompute_modules (Megatron-Core)");
    }
    if (s.model.mtp_num_layers > 1) {
        fail(key + " allows at most one MTP layer, got model.mtp_num_layers=" +
             std::to_string(s.model.mtp_num_layers) + " (Megatron-Core)");
    }
    if (s.parallelism.data_parallel_sharding_strategy == DataParallelSharding::OptimGradsParams) {
        fail(key + " is not modelled with parallelism.data_parallel_sharding_strategy=\"optim_grads_params\" "
                   "(FSDP)");
    }
    const std::int64_t p = s.parallelism.pipeline_model_parallel_size;
    const ScheduleKind schedule = s.resolved_schedule();
    if (p == 1 && schedule != ScheduleKind::OneFOneB) {
        fail(key +
             " runs Megatron's combined 1F1B: with parallelism.pipeline_model_parallel_size=1 it needs "
             "schedule \"1f1b\" or \"auto\", got " +
             "\"" + std::string(to_string(schedule)) + "\"");
    }
    if (p > 1 && schedule != ScheduleKind::Interleaved) {
        fail(key + " with parallelism.pipeline_model_parallel_size=" + std::to_string(p) +
             " needs the interleaved schedule (parallelism.virtual_pipeline_model_parallel_size > 1; "
             "Megatron-Core: virtual_pipeline_model_parallel_size must be specified), got schedule " +
             "\"" + std::string(to_string(schedule)) + "\"");
    }
}

// Megatron-Core's rules for moe_shared_expert_overlap (transformer_config.py __post_init__): with a shared
// expert only the alltoall or flex dispatcher calls its pieces, and its recompute checkpoint would hide
// them from the dispatcher; overlap_moe_expert_parallel_comm asserts it off, shared expert or not.
void check_shared_expert_overlap(const Scenario& s) {
    if (!s.model.moe || !s.model.moe->shared_expert_overlap) {
        return;
    }
    const std::string key = "model.moe_shared_expert_overlap";
    if (s.parallelism.overlap_moe_expert_parallel_comm) {
        fail(key + "=true is not possible with parallelism.overlap_moe_expert_parallel_comm=true "
                   "(Megatron-Core: disable moe_shared_expert_overlap when enabling "
                   "overlap_moe_expert_parallel_comm)");
    }
    const MoeConfig& moe = *s.model.moe;
    if (moe.shared_expert_intermediate_size == 0) {
        return;  // Megatron: "Only effective when moe-shared-expert-intermediate-size is set"
    }
    if (moe.token_dispatcher != MoeTokenDispatcher::AllToAll) {
        fail(key + "=true needs model.moe_token_dispatcher_type=\"alltoall\" (Megatron-Core: only the "
                   "alltoall or flex dispatcher; flex is not modelled)");
    }
    if (s.training.recompute_granularity == RecomputeGranularity::Selective &&
        s.training.selective_modules().contains(RecomputeModule::SharedExperts)) {
        fail(key + "=true is not possible with \"shared_experts\" in training.recompute_modules "
                   "(Megatron-Core)");
    }
    if (s.dualpipe_overlaps_pairs()) {
        fail(key +
             "=true is not modelled with DualPipe's overlapped F&B pairs (their chunks already "
             "hide each other's all-to-alls; set parallelism.dualpipe_overlapped_forward_backward=false)");
    }
}

}  // namespace

void validate_moe(const Scenario& scenario) {
    check_moe_model(scenario);
    check_expert_parallel(scenario);
    check_mla(scenario);
    check_moe_pair_overlap(scenario);
    check_shared_expert_overlap(scenario);
}

}  // namespace trainsim::config
