#include "sim/plan/layout_space.h"

#include <algorithm>
#include <utility>

#include "sim/config/scenario_reader.h"
#include "sim/core/input_error.h"
#include "sim/plan/pipeline_splits.h"

namespace trainsim::plan {
namespace {

using config::DataParallelSharding;
using config::RecomputeGranularity;

// What the d replicas shard: nothing, the optimizer state (the distributed optimizer, ZeRO-1), the
// gradients too (ZeRO-2) or the weights too (FSDP, ZeRO-3). Megatron's `optim` strategy is the
// distributed optimizer again, so it is not searched twice.
struct DataParallelState {
    bool distributed_optimizer;
    DataParallelSharding sharding;
};
constexpr DataParallelState kDataParallelStates[] = {
    {false, DataParallelSharding::NoShard},
    {true, DataParallelSharding::NoShard},
    {true, DataParallelSharding::OptimGrads},
    {true, DataParallelSharding::OptimGradsParams},
};

// An MoE layout's expert sizes: ep experts-wide, each expert split over etp.
struct ExpertSizes {
    std::int64_t ep = 1;
    std::int64_t etp = 1;
};

// The expert sizes of a model on t·c·d ranks per stage: {1, 1} for a dense model; for an MoE model every
// ep ≤ at_most dividing num_experts, and every power of two etp ≤ at_most_etp (and ≤ a node: the expert-TP
// group's ranks are consecutive, like TP's) dividing moe_ffn_hidden_size, with etp·ep dividing t·c·d
// (Megatron-Core's expert rank order: etp·ep·edp = t·c·d; config/moe_validation.cc).
std::vector<ExpertSizes> expert_sizes(const PlanRequest& request, std::int64_t dense_ranks) {
    const config::Scenario& base = request.base;
    if (!base.model.moe) {
        return {ExpertSizes{}};
    }
    std::vector<ExpertSizes> out;
    for (const std::int64_t ep : divisors(base.model.moe->num_experts, request.max_expert_parallel)) {
        for (std::int64_t etp = 1;
             etp <= std::min(request.max_expert_tensor_parallel, base.hardware.gpus_per_node); etp *= 2) {
            if (dense_ranks % (etp * ep) == 0 && base.model.moe->ffn_hidden_size % etp == 0) {
                out.push_back({ep, etp});
            }
        }
    }
    return out;
}

// What the MoE layer models of the data-parallel states (parameter_count.cc refuses ZeRO-2 and FSDP with
// experts).
bool modelled_with_experts(DataParallelState state) {
    return state.sharding == DataParallelSharding::NoShard || state.sharding == DataParallelSharding::Optim;
}

// The largest d with t·p·d ≤ gpus and b·d dividing the global batch; 0 when there is none.
std::int64_t data_parallel_size(std::int64_t model_parallel, std::int64_t gpus, std::int64_t micro,
                                std::int64_t global) {
    if (global % micro != 0) {
        return 0;
    }
    for (std::int64_t d = std::min(gpus / model_parallel, global / micro); d >= 1; --d) {
        if ((global / micro) % d == 0) {
            return d;
        }
    }
    return 0;
}

}  // namespace

std::string layout_label(const config::Scenario& sc) {
    const auto& par = sc.parallelism;
    const auto& tr = sc.training;
    std::string label =
        "t" + std::to_string(par.tensor_model_parallel_size) + " p" +
        std::to_string(par.pipeline_model_parallel_size) + " d" + std::to_string(par.data_parallel_size) +
        " v" + std::to_string(par.virtual_pipeline_model_parallel_size) + " b" +
        std::to_string(tr.micro_batch_size) + " " + config::to_string(tr.recompute_granularity);
    if (par.context_parallel_size > 1) {
        label += " c" + std::to_string(par.context_parallel_size);
    }
    if (sc.model.moe) {
        label += " ep" + std::to_string(par.expert_model_parallel_size);
        if (par.expert_tensor_parallel() > 1) {
            label += " etp" + std::to_string(par.expert_tensor_parallel());
        }
    }
    if (par.sequence_parallel) {
        label += " sp";
    }
    if (const std::string split = split_label(par); !split.empty()) {
        label += " " + split;
    }
    if (tr.fp8_format) {
        label += " fp8";
    }
    switch (par.data_parallel_sharding_strategy) {
    case DataParallelSharding::OptimGradsParams:
        label += " fsdp";
        break;
    case DataParallelSharding::OptimGrads:
        label += " zero2";
        break;
    case DataParallelSharding::Optim:
    case DataParallelSharding::NoShard:
        if (tr.use_distributed_optimizer) {
            label += " distopt";
        }
        break;
    }
    if (sc.schedule != config::ScheduleKind::Auto) {
        label += std::string(" ") + config::to_string(sc.schedule);
    }
    return label;
}

LayoutSpace enumerate_layouts(const PlanRequest& request) {
    LayoutSpace space;
    const config::Scenario& base = request.base;
    const std::int64_t layers = base.model.num_layers;
    const std::int64_t node = base.hardware.gpus_per_node;
    // The base scenario's context parallelism is kept: t·p·d is planned over the GPUs / c left.
    const std::int64_t c = base.parallelism.context_parallel_size;
    const bool moe = base.model.moe.has_value();
    const bool mtp = base.model.mtp_num_layers > 0;
    for (std::int64_t t = 1; t <= node && t * c <= request.gpus; t *= 2) {
        for (const PipelineSplit& split : pipeline_splits(layers, request.gpus / (t * c))) {
            const std::int64_t p = split.stages;
            // decoder_first/last only where t·c·p divides the GPUs: the pipeline depth a cluster fixes
            // (DeepSeek-V3's 61 layers on 16 stages of 2,048 GPUs). Elsewhere it would add nearly every p up
            // to L / 2, layouts with idle GPUs whose deep pipelines the time bound cannot rule out
            // (MT-NLG 530B on 5,128 GPUs: 180 layouts simulated instead of 96, 39 s of CPU instead of 3).
            if (split.kind == SplitKind::FirstLast && request.gpus % (t * c * p) != 0) {
                continue;
            }
            for (const std::int64_t b : divisors(request.global_batch, request.max_micro_batch)) {
                const std::int64_t d = data_parallel_size(t * p * c, request.gpus, b, request.global_batch);
                if (d == 0) {
                    continue;
                }
                std::vector<std::pair<DataParallelState, ExpertSizes>> states_and_expert_sizes;
                for (const ExpertSizes experts : expert_sizes(request, t * c * d)) {
                    for (const DataParallelState state : kDataParallelStates) {
                        // FSDP is not simulated with experts nor with MTP depths (workload/mtp_block.h).
                        if ((!moe || modelled_with_experts(state)) &&
                            (!mtp || state.sharding != DataParallelSharding::OptimGradsParams)) {
                            states_and_expert_sizes.emplace_back(state, experts);
                        }
                    }
                }
                for (const RecomputeGranularity r :
                     {RecomputeGranularity::None, RecomputeGranularity::Selective,
                      RecomputeGranularity::Full}) {
                    for (const bool sp : {false, true}) {
                        for (const bool fp8 : {false, true}) {
                            if (fp8 && !request.search_fp8) {
                                continue;
                            }
                            for (const auto& [state, experts] : states_and_expert_sizes) {
                                const bool distributed = state.distributed_optimizer;
                                if ((sp && t == 1) || (distributed && d == 1)) {
                                    continue;  // the same layout as without
                                }
                                // Each schedule makes a layout of its own (its label names it), as in valid.
                                space.considered += request.schedules.size();
                                config::Scenario sc = base;
                                auto& par = sc.parallelism;
                                par.tensor_model_parallel_size = t;
                                split.apply_to(par);  // p, v and the split keys
                                par.data_parallel_size = d;
                                par.sequence_parallel = sp;
                                par.expert_model_parallel_size = experts.ep;
                                if (moe) {
                                    par.expert_tensor_parallel_size = experts.etp;
                                }
                                par.microbatch_group_size_per_vp_stage.reset();
                                auto& tr = sc.training;
                                tr.micro_batch_size = b;
                                tr.global_batch_size = request.global_batch;
                                tr.recompute_granularity = r;
                                // A scenario's recompute_modules belong to selective recomputation only
                                // (Megatron refuses them beside another granularity).
                                if (r != RecomputeGranularity::Selective) {
                                    tr.recompute_modules.reset();
                                }
                                tr.recompute_method.reset();
                                tr.recompute_num_layers.reset();
                                tr.num_microbatches_with_partial_activation_checkpoints.reset();
                                if (r == RecomputeGranularity::Full) {
                                    tr.recompute_method = config::RecomputeMethod::Uniform;
                                    tr.recompute_num_layers = 1;
                                }
                                tr.use_distributed_optimizer = distributed;
                                par.data_parallel_sharding_strategy = state.sharding;
                                if (fp8) {
                                    tr.fp8_format = config::Fp8Format::Hybrid;
                                    tr.fp8_recipe = config::Fp8Recipe::Delayed;
                                }
                                tr.ddp_bucket_size.reset();
                                // The base's parameter-gather overlap where the candidate's optimizer
                                // and sharding allow it (Megatron's rules, scenario validation).
                                tr.overlap_param_gather =
                                    tr.overlap_param_gather && distributed && tr.overlap_grad_reduce &&
                                    state.sharding != DataParallelSharding::OptimGradsParams;
                                try {
                                    config::resolve_pipeline_split(sc);
                                } catch (const InputError&) {
                                    continue;  // a split Megatron-LM would reject
                                }
                                for (const config::ScheduleKind kind : request.schedules) {
                                    config::Scenario with = sc;
                                    with.schedule = kind;
                                    with.name = layout_label(with);
                                    try {
                                        config::validate_scenario(with);
                                    } catch (const InputError&) {
                                        continue;  // a combination Megatron-LM (or the schedule) rejects
                                    }
                                    space.valid.push_back(std::move(with));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    return space;
}

}  // namespace trainsim::plan
