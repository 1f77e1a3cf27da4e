// The spelling of each scenario enum in JSON. One table per enum serves parsing, to_string and the
// "expected one of" part of error messages, so the three cannot drift apart.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/scenario.h"

namespace trainsim::config {

template <class E> struct EnumName {
    E value;
    const char* name;
};

inline constexpr std::array<EnumName<Normalization>, 2> kNormalizationNames{{
    {Normalization::LayerNorm, "LayerNorm"},
    {Normalization::RMSNorm, "RMSNorm"},
}};

inline constexpr std::array<EnumName<PositionEmbeddingType>, 2> kPositionEmbeddingTypeNames{{
    {PositionEmbeddingType::LearnedAbsolute, "learned_absolute"},
    {PositionEmbeddingType::Rope, "rope"},
}};

inline constexpr std::array<EnumName<RecomputeGranularity>, 4> kRecomputeGranularityNames{{
    {RecomputeGranularity::None, "none"},
    {RecomputeGranularity::Full, "full"},
    {RecomputeGranularity::Selective, "selective"},
    {RecomputeGranularity::Overlapped, "overlapped"},
}};

inline constexpr std::array<EnumName<AttentionBackend>, 3> kAttentionBackendNames{{
    {AttentionBackend::Flash, "flash"},
    {AttentionBackend::Fused, "fused"},
    {AttentionBackend::Unfused, "unfused"},
}};

inline constexpr std::array<EnumName<DataParallelSharding>, 4> kDataParallelShardingNames{{
    {DataParallelSharding::NoShard, "no_shard"},
    {DataParallelSharding::Optim, "optim"},
    {DataParallelSharding::OptimGrads, "optim_grads"},
    {DataParallelSharding::OptimGradsParams, "optim_grads_params"},
}};

inline constexpr std::array<EnumName<CpCommType>, 3> kCpCommTypeNames{{
    {CpCommType::P2p, "p2p"},
    {CpCommType::AllGather, "all_gather"},
    {CpCommType::A2a, "a2a"},
}};

inline constexpr std::array<EnumName<MoeTokenDispatcher>, 2> kMoeTokenDispatcherNames{{
    {MoeTokenDispatcher::AllGather, "allgather"},
    {MoeTokenDispatcher::AllToAll, "alltoall"},
}};

inline constexpr std::array<EnumName<RecomputeMethod>, 2> kRecomputeMethodNames{{
    {RecomputeMethod::Uniform, "uniform"},
    {RecomputeMethod::Block, "block"},
}};

// Megatron-Core's spellings (transformer_config.py, recompute_modules).
inline constexpr std::array<EnumName<RecomputeModule>, 7> kRecomputeModuleNames{{
    {RecomputeModule::CoreAttn, "core_attn"},
    {RecomputeModule::MoeAct, "moe_act"},
    {RecomputeModule::LayerNorm, "layernorm"},
    {RecomputeModule::MlaUpProj, "mla_up_proj"},
    {RecomputeModule::Mlp, "mlp"},
    {RecomputeModule::Moe, "moe"},
    {RecomputeModule::SharedExperts, "shared_experts"},
}};

inline constexpr std::array<EnumName<RecomputeScheduler>, 2> kRecomputeSchedulerNames{{
    {RecomputeScheduler::Heuristic, "heuristic"},
    {RecomputeScheduler::Optimal, "optimal"},
}};

inline constexpr std::array<EnumName<NetworkModel>, 2> kNetworkModelNames{{
    {NetworkModel::Analytical, "analytical"},
    {NetworkModel::Flow, "flow"},
}};

inline constexpr std::array<EnumName<CollectiveContentionModel>, 2> kCollectiveContentionNames{{
    {CollectiveContentionModel::FixedShare, "fixed_share"},
    {CollectiveContentionModel::NcclChannels, "nccl_channels"},
}};

inline constexpr std::array<EnumName<ComputeContention>, 2> kComputeContentionNames{{
    {ComputeContention::Priced, "priced"},
    {ComputeContention::Engine, "engine"},
}};

inline constexpr std::array<EnumName<FabricKind>, 2> kFabricKindNames{{
    {FabricKind::RailOptimized, "rail_optimized"},
    {FabricKind::FatTree, "fat_tree"},
}};

inline constexpr std::array<EnumName<ScheduleKind>, 10> kScheduleNames{{
    {ScheduleKind::Auto, "auto"},
    {ScheduleKind::GPipe, "gpipe"},
    {ScheduleKind::OneFOneB, "1f1b"},
    {ScheduleKind::Interleaved, "interleaved"},
    {ScheduleKind::BreadthFirst, "breadth_first"},
    {ScheduleKind::ZbH1, "zb-h1"},
    {ScheduleKind::ZbH2, "zb-h2"},
    {ScheduleKind::ZbV, "zb-v"},
    {ScheduleKind::DualPipe, "dualpipe"},
    {ScheduleKind::DualPipeV, "dualpipev"},
}};

inline constexpr std::array<EnumName<VariabilityMode>, 3> kVariabilityModeNames{{
    {VariabilityMode::Off, "off"},
    {VariabilityMode::Expected, "expected"},
    {VariabilityMode::Sampled, "sampled"},
}};

inline constexpr std::array<EnumName<Fp8Format>, 2> kFp8FormatNames{{
    {Fp8Format::E4m3, "e4m3"},
    {Fp8Format::Hybrid, "hybrid"},
}};

inline constexpr std::array<EnumName<Fp8Recipe>, 4> kFp8RecipeNames{{
    {Fp8Recipe::Delayed, "delayed"},
    {Fp8Recipe::Tensorwise, "tensorwise"},
    {Fp8Recipe::Blockwise, "blockwise"},
    {Fp8Recipe::Mxfp8, "mxfp8"},
}};

// training.main_grads_dtype: Megatron's --main-grads-dtype choices (arguments.py).
inline constexpr std::array<EnumName<StateDtype>, 2> kMainGradsDtypeNames{{
    {StateDtype::Fp32, "fp32"},
    {StateDtype::Bf16, "bf16"},
}};

// training.exp_avg_dtype and exp_avg_sq_dtype: Megatron's --exp-avg-dtype choices (arguments.py).
inline constexpr std::array<EnumName<StateDtype>, 4> kExpAvgDtypeNames{{
    {StateDtype::Fp32, "fp32"},
    {StateDtype::Fp16, "fp16"},
    {StateDtype::Bf16, "bf16"},
    {StateDtype::Fp8, "fp8"},
}};

/// The value spelled `name` in `table`, or nullopt.
template <class E, std::size_t N>
[[nodiscard]] std::optional<E> enum_from_name(const std::array<EnumName<E>, N>& table,
                                              std::string_view name) {
    for (const auto& entry : table) {
        if (name == entry.name) {
            return entry.value;
        }
    }
    return std::nullopt;
}

/// All spellings in `table`, in table order.
template <class E, std::size_t N>
[[nodiscard]] std::vector<std::string> enum_names(const std::array<EnumName<E>, N>& table) {
    std::vector<std::string> names;
    names.reserve(N);
    for (const auto& entry : table) {
        names.emplace_back(entry.name);
    }
    return names;
}

}  // namespace trainsim::config
