// A validated scenario: what the user asked to simulate (DESIGN.md §4). Keys follow Megatron-LM's
// argument names. Every downstream module reads this and never re-validates it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/pipeline_layout.h"

namespace trainsim::config {

enum class Normalization { LayerNorm, RMSNorm };
enum class PositionEmbeddingType { LearnedAbsolute, Rope };
/// Megatron-Core's moe_token_dispatcher_type: tokens reach their experts' ranks by an all-to-all over
/// the expert-parallel group, or by an all-gather of every token (and a reduce-scatter back).
enum class MoeTokenDispatcher { AllGather, AllToAll };

/// Mixture-of-experts MLPs (Megatron-Core's MoE arguments, DESIGN.md §8). Present only when the model
/// has num_experts; each MoE layer replaces the dense MLP by a router, num_experts routed experts of
/// width ffn_hidden_size (each token goes to router_topk of them) and an optional shared expert.
struct MoeConfig {
    std::int64_t num_experts = 0;
    std::int64_t router_topk = 2;  // Megatron's default
    /// Width of one routed expert's MLP (moe_ffn_hidden_size); defaults to the model's ffn_hidden_size.
    std::int64_t ffn_hidden_size = 0;
    /// Width of the shared expert's MLP (moe_shared_expert_intermediate_size); 0: no shared expert.
    std::int64_t shared_expert_intermediate_size = 0;
    /// moe_layer_freq expanded to one flag per layer (true: MoE MLP). An integer k gives MoE on layers
    /// i with i % k == 0; a list gives the pattern itself (DeepSeek-V3: three dense, then 58 MoE).
    std::vector<bool> layer_is_moe;
    MoeTokenDispatcher token_dispatcher = MoeTokenDispatcher::AllGather;  // Megatron's default
    /// Token-dropping capacity (moe_expert_capacity_factor); absent: dropless.
    std::optional<double> expert_capacity_factor;
    /// moe_pad_expert_input_to_capacity: every expert's input padded to its capacity (needs a factor).
    bool pad_expert_input_to_capacity = false;
    bool grouped_gemm = false;
    /// moe_shared_expert_overlap: the shared expert runs on its own CUDA stream beside the alltoall
    /// dispatcher's all-to-alls (sim/workload/shared_expert.h); no effect without a shared expert.
    bool shared_expert_overlap = false;
    /// Router load imbalance (moe_load_skew, trainsim's own key): the busiest expert receives this
    /// many times the mean tokens; 1: balanced, as published benchmarks force it. At most E / k (the
    /// busiest expert then receives every token once).
    double load_skew = 1.0;

    [[nodiscard]] std::int64_t num_moe_layers() const {
        std::int64_t n = 0;
        for (const bool moe : layer_is_moe) {
            n += moe ? 1 : 0;
        }
        return n;
    }
};

/// Multi-latent attention (DeepSeek-V2/V3; Megatron's multi_latent_attention and its MLA arguments):
/// queries through a low-rank bottleneck of q_lora_rank (absent: a full h → heads·(qk + rope) GEMM),
/// keys and values through a shared latent of kv_lora_rank plus one RoPE key of qk_pos_emb_head_dim.
/// Defaults are Megatron's (q_lora_rank None, kv_lora_rank 32, 128, 64, 128).
struct MlaConfig {
    std::optional<std::int64_t> q_lora_rank;
    std::int64_t kv_lora_rank = 32;
    std::int64_t qk_head_dim = 128;
    std::int64_t qk_pos_emb_head_dim = 64;
    std::int64_t v_head_dim = 128;
};

/// The model, with Megatron-Core's defaults for everything a GPT-3 layer leaves out (DESIGN.md §8):
/// multi-head attention, a GeLU MLP, LayerNorm, learned absolute positions, tied embeddings and biases.
struct ModelConfig {
    std::string preset;  // the preset it came from, "" when given explicitly
    std::int64_t num_layers = 0;
    std::int64_t hidden_size = 0;
    std::int64_t num_attention_heads = 0;
    /// Default 4 × hidden_size, or with swiglu Megatron's int(4h·2/3 / 64)·64 (the gated MLP's fc1 is
    /// then 2 × ffn_hidden_size wide).
    std::int64_t ffn_hidden_size = 0;
    std::int64_t seq_length = 0;
    std::int64_t padded_vocab_size = 0;
    /// Grouped-query attention: K and V heads; absent means one group per head (multi-head attention).
    std::optional<std::int64_t> num_query_groups;
    /// Channels per attention head (Megatron's kv_channels); absent means hidden_size / heads.
    std::optional<std::int64_t> kv_channels;
    bool swiglu = false;
    Normalization normalization = Normalization::LayerNorm;
    PositionEmbeddingType position_embedding_type = PositionEmbeddingType::LearnedAbsolute;
    bool untie_embeddings_and_output_weights = false;
    /// Biases in the linear layers (Megatron's add_bias_linear; --disable-bias-linear sets it false).
    bool add_bias_linear = true;
    /// LayerNorm/RMSNorm on each head's queries and keys (Megatron's qk_layernorm; Qwen3).
    bool qk_layernorm = false;
    /// Mixture-of-experts MLPs; absent: every MLP is dense.
    std::optional<MoeConfig> moe;
    /// Multi-latent attention in place of multi-head/grouped-query attention.
    std::optional<MlaConfig> mla;
    /// Multi-token prediction modules after the last layer (Megatron's mtp_num_layers; DeepSeek-V3: 1).
    std::int64_t mtp_num_layers = 0;

    [[nodiscard]] std::int64_t query_groups() const { return num_query_groups.value_or(num_attention_heads); }
    [[nodiscard]] std::int64_t head_dim() const {
        return kv_channels.value_or(hidden_size / num_attention_heads);
    }
};

/// Megatron-Core's data_parallel_sharding_strategy: what the d replicas shard among themselves. `optim`
/// is the distributed optimizer (ZeRO-1), `optim_grads` adds the gradients (ZeRO-2),
/// `optim_grads_params` the weights too (FSDP / ZeRO-3: gathered layer by layer when used).
enum class DataParallelSharding { NoShard, Optim, OptimGrads, OptimGradsParams };

/// How context-parallel ranks exchange keys and values (Megatron-Core's cp_comm_type, run by
/// Transformer Engine): a ring of KV sends overlapped with attention (p2p), one KV all-gather before
/// local attention (all_gather), or DeepSpeed-Ulysses' all-to-all from sequence to head shards (a2a).
enum class CpCommType { P2p, AllGather, A2a };

struct ParallelConfig {
    std::int64_t tensor_model_parallel_size = 1;
    std::int64_t pipeline_model_parallel_size = 1;
    std::int64_t data_parallel_size = 1;
    /// Context parallelism: each layer's sequence split over c ranks (2·c chunks, two per rank for the
    /// causal load balance). Megatron's rank order puts it between tp and dp (tp → cp → dp → pp).
    std::int64_t context_parallel_size = 1;
    CpCommType cp_comm_type = CpCommType::P2p;
    std::int64_t virtual_pipeline_model_parallel_size = 1;  // null in JSON means 1
    bool sequence_parallel = false;
    /// Transformer Engine's tensor-parallel communication overlap (Megatron's tp_comm_overlap, TE
    /// userbuffers): the sequence-parallel all-gathers and reduce-scatters of the linear layers run in
    /// chunks beside chunks of the GEMM that consumes or produces them (sim/workload/tp_comm_overlap.h).
    bool tp_comm_overlap = false;
    /// Interleaved schedule: micro-batches per group of the schedule table (Megatron's
    /// microbatch_group_size_per_vp_stage); unset means p, the depth-first default.
    std::optional<std::int64_t> microbatch_group_size_per_vp_stage;
    /// Megatron's scatter/gather across nodes: without SP, each TP rank sends 1/t of an activation over
    /// its own NIC and the receivers all-gather it over NVLink (Narayanan §4.1).
    bool scatter_gather_tensors_in_pipeline = true;
    /// Transformer layers on each pipeline rank, first rank first (an uneven split, as Megatron-core's
    /// decoder_first/last_pipeline_num_layers but for every stage); empty means num_layers / p each.
    /// With interleaving each rank's layers are split evenly among its v model chunks.
    std::vector<std::int64_t> layers_per_pipeline_stage;
    /// Megatron's overlap_p2p_comm. False: each step's pipeline sends and receives are one
    /// batch_isend_irecv whose requests are all waited on, so the next compute waits for the sends as
    /// well as the receives (megatron/core/pipeline_parallel/p2p_communication.py, _communicate).
    /// True: the compute waits only for its receives.
    bool overlap_p2p_comm = true;
    /// Megatron's batch_p2p_sync: torch.cuda.synchronize() after each batch_isend_irecv (same file),
    /// so the CPU stops running ahead and the GPU idles while it launches the next step's kernels.
    bool batch_p2p_sync = false;
    /// DualPipe's overlapped F&B chunk pairs (dualpipe.py calls the module's overlapped_forward_backward,
    /// which DeepSeek-V3 §3.2.1 describes): the forward's and the backward's layers are cut at their
    /// expert all-to-alls and interleaved, so each chunk's dispatch and combine run beside the other's
    /// compute (sim/program/overlapped_pair.h). Only with schedule dualpipe or dualpipev; unset means on,
    /// as DeepSeek trains; false runs each pair's forward then its backward.
    std::optional<bool> dualpipe_overlapped_forward_backward;
    /// Megatron-Core's overlap_moe_expert_parallel_comm (Megatron-Bridge's moe_a2a_overlap): the combined
    /// 1F1B schedule (megatron/core/pipeline_parallel/combined_1f1b.py) runs each steady-state forward
    /// together with the backward after it, their layers cut at the expert all-to-alls and interleaved as
    /// DualPipe's pairs are (sim/program/overlapped_pair.h), after one more warm-up forward than the plain
    /// schedule (schedules.py get_pp_rank_microbatches). 1F1B with p = 1, interleaved with p > 1.
    bool overlap_moe_expert_parallel_comm = false;
    DataParallelSharding data_parallel_sharding_strategy = DataParallelSharding::NoShard;
    /// Megatron-Core's uneven splits; the reader turns them into layers_per_pipeline_stage
    /// (resolve_pipeline_split) and keeps them here only to report what was asked.
    std::optional<std::int64_t> decoder_first_pipeline_num_layers;
    std::optional<std::int64_t> decoder_last_pipeline_num_layers;
    bool account_for_embedding_in_pipeline_split = false;
    bool account_for_loss_in_pipeline_split = false;
    /// Megatron-Core's pipeline_model_parallel_layout as written (sim/config/pipeline_layout.h); the reader
    /// turns it into layers_per_virtual_stage (layers_per_pipeline_stage when it fixes v = 1).
    std::optional<PipelineLayout> pipeline_model_parallel_layout;
    /// Transformer layers of each virtual stage, chunk c of rank r at c·p + r, when a rank's chunks differ
    /// (from the layout, or account_for_*_in_pipeline_split with v > 1); empty: each rank's layers are
    /// split evenly among its chunks.
    std::vector<std::int64_t> layers_per_virtual_stage;
    /// Expert parallelism: each MoE layer's experts split over this many ranks (num_experts / ep each).
    std::int64_t expert_model_parallel_size = 1;
    /// Tensor parallelism inside each expert; absent means tensor_model_parallel_size (Megatron's default).
    std::optional<std::int64_t> expert_tensor_parallel_size;

    [[nodiscard]] std::int64_t expert_tensor_parallel() const {
        return expert_tensor_parallel_size.value_or(tensor_model_parallel_size);
    }
    /// Megatron-Core's expert data parallelism: the rest of the t·c·d ranks of a pipeline stage once
    /// expert TP and EP are taken out (RankGenerator for experts: etp × ep × edp = tp × cp × dp). Expert
    /// gradients are reduced, and the distributed optimizer shards expert state, over these ranks.
    [[nodiscard]] std::int64_t expert_data_parallel_size() const {
        return tensor_model_parallel_size * context_parallel_size * data_parallel_size /
               (expert_tensor_parallel() * expert_model_parallel_size);
    }

    /// The ranks that hold the same weights and reduce their gradients together: d·c (Megatron's
    /// get_data_parallel_world_size(with_context_parallel=True)); the distributed optimizer and FSDP
    /// shard over them too.
    [[nodiscard]] std::int64_t data_parallel_size_with_cp() const {
        return data_parallel_size * context_parallel_size;
    }

    [[nodiscard]] std::int64_t microbatch_group_size() const {
        return microbatch_group_size_per_vp_stage.value_or(pipeline_model_parallel_size);
    }
};

enum class RecomputeGranularity { None, Full, Selective, Overlapped };
/// Megatron-Core's attention_backend. `unfused` is the 2022 layer (batched GEMMs and a fused softmax,
/// keeping the s×s tensors); `flash` and `fused` (cuDNN's fused attention, a FlashAttention-style kernel)
/// keep no s×s tensor and read their time from the profile's FlashAttention curves.
enum class AttentionBackend { Flash, Fused, Unfused };
enum class RecomputeMethod { Uniform, Block };
/// Megatron-Core's recompute_modules (transformer_config.py), the submodules selective recomputation
/// re-runs before their backward: core attention; the routed experts' activation (moe_act); the norms
/// Transformer Engine does not fuse into the next linear (layernorm); MLA's up projections and RoPE
/// (mla_up_proj); a dense layer's MLP (mlp); the whole MoE MLP (moe); the shared experts.
enum class RecomputeModule : std::uint8_t { CoreAttn, MoeAct, LayerNorm, MlaUpProj, Mlp, Moe, SharedExperts };

/// A set of RecomputeModule, Megatron's default ["core_attn"] unless told otherwise.
class RecomputeModules {
public:
    RecomputeModules() = default;
    RecomputeModules(std::initializer_list<RecomputeModule> modules) {
        for (const RecomputeModule m : modules) {
            insert(m);
        }
    }
    [[nodiscard]] static RecomputeModules none() {
        RecomputeModules out;
        out.bits_ = 0;
        return out;
    }
    void insert(RecomputeModule m) { bits_ |= bit(m); }
    [[nodiscard]] bool contains(RecomputeModule m) const { return (bits_ & bit(m)) != 0; }
    [[nodiscard]] bool empty() const { return bits_ == 0; }
    friend bool operator==(const RecomputeModules&, const RecomputeModules&) = default;

private:
    static constexpr std::uint8_t bit(RecomputeModule m) {
        return static_cast<std::uint8_t>(1U << static_cast<unsigned>(m));
    }
    std::uint8_t bits_ = bit(RecomputeModule::CoreAttn);
};
enum class RecomputeScheduler { Heuristic, Optimal };
/// Transformer Engine's FP8 formats (Megatron --fp8-format): e4m3 everywhere, or hybrid (e4m3 forward,
/// e5m2 gradients). Both run at the same rate; the format is recorded, not priced differently.
enum class Fp8Format { E4m3, Hybrid };
/// How FP8 scaling factors are found (Megatron --fp8-recipe): from the amax history of earlier steps
/// (delayed), from the tensor itself (tensorwise "current scaling"), per 1x128/128x128 block
/// (blockwise), or per 32-element block in E8M0 (mxfp8, Blackwell only).
enum class Fp8Recipe { Delayed, Tensorwise, Blockwise, Mxfp8 };

/// Storage formats of the optimizer's per-parameter state (Megatron's --main-grads-dtype,
/// --exp-avg-dtype, --exp-avg-sq-dtype; NeMo's optim.grad_sync_dtype and optim.dtype).
enum class StateDtype { Fp32, Bf16, Fp16, Fp8 };

/// Bytes of one element stored as `dtype`.
[[nodiscard]] constexpr std::int64_t bytes_of(StateDtype dtype) {
    switch (dtype) {
    case StateDtype::Fp32:
        return 4;
    case StateDtype::Bf16:
    case StateDtype::Fp16:
        return 2;
    case StateDtype::Fp8:
        return 1;
    }
    return 4;
}

struct TrainingConfig {
    std::int64_t micro_batch_size = 0;
    std::int64_t global_batch_size = 0;
    RecomputeGranularity recompute_granularity = RecomputeGranularity::None;
    std::optional<RecomputeMethod> recompute_method;  // required (and only allowed) with full
    std::optional<std::int64_t> recompute_num_layers;
    /// Only with selective recompute; absent means Megatron's default ["core_attn"].
    std::optional<RecomputeModules> recompute_modules;
    /// Appendix C of Korthikanti: with full recompute, micro-batches whose index modulo the in-flight
    /// limit is below this count keep all their activations instead (Megatron's
    /// num_microbatches_with_partial_activation_checkpoints).
    std::optional<std::int64_t> num_microbatches_with_partial_activation_checkpoints;
    /// Overlapped recomputation: which scheduler chooses the plan, and the per-GPU memory budget it must
    /// respect (bytes; unset: the profile's usable memory).
    RecomputeScheduler recompute_scheduler = RecomputeScheduler::Heuristic;
    std::optional<std::int64_t> recompute_memory_budget;
    AttentionBackend attention_backend = AttentionBackend::Unfused;
    bool use_distributed_optimizer = false;
    /// The optimizer step's memory traffic that Megatron pays and the fused Adam estimate leaves out (issue
    /// 19), each off by default: copying the fp32 main parameters to the 16-bit model parameters as a
    /// pass of its own after the step (_copy_main_params_to_model_params), and zeroing the gradient
    /// buffer at the start of the iteration (zero_grad_buffer).
    bool optimizer_param_copy = false;
    bool zero_grad_buffer = false;
    /// The gradient buffer's element (Megatron's --main-grads-dtype; NeMo 24.07's optim.grad_sync_dtype,
    /// Apex DistributedFusedAdam's contiguous grad buffer): what each parameter's gradient is accumulated
    /// in, and what the data-parallel reduction moves. fp32 is Megatron's default with bf16 training.
    StateDtype main_grads_dtype = StateDtype::Fp32;
    /// NeMo's with_fp32_embedding_grads under Apex DistributedFusedAdam: the word and (learned) position
    /// embeddings' gradients, and the last stage's tied copy's, in fp32 buckets whatever main_grads_dtype
    /// says (workload/fp32_embedding_gradients.h). Nothing changes when main_grads_dtype is fp32.
    bool fp32_embedding_grads = false;
    /// Adam's first and second moments (Megatron's --exp-avg-dtype and --exp-avg-sq-dtype; NeMo's
    /// optim.dtype sets both).
    StateDtype exp_avg_dtype = StateDtype::Fp32;
    StateDtype exp_avg_sq_dtype = StateDtype::Fp32;
    /// Whether the optimizer keeps an fp32 master copy of each parameter (Apex DistributedFusedAdam's
    /// store_params, as NeMo sets it). false: the 16-bit weights are the master parameters, or with
    /// store_param_remainders they and a 16-bit remainder each rebuild the fp32 value.
    bool store_params = true;
    /// Instead of the fp32 master copy, the 16 low bits the bf16 weight lacks (Apex's and Megatron's
    /// store_param_remainders): 2 bytes a parameter.
    bool store_param_remainders = false;
    /// The TP all-reduce of the gradients of the parameters every TP rank holds whole (sequence
    /// parallelism's norms, replicated biases, MLA's down projections, the router; qk_layernorm's norms)
    /// in Megatron's finalize_model_grads. On by default: Megatron always runs it.
    bool tp_replicated_grad_allreduce = true;
    bool overlap_grad_reduce = false;
    /// Parameters per gradient bucket with overlap_grad_reduce; unset means Megatron's default,
    /// max(40M, 1M × d).
    std::optional<std::int64_t> ddp_bucket_size;
    /// Megatron's overlap_param_gather (NeMo 24.07's overlap_param_sync): the distributed optimizer's
    /// all-gather of the updated 16-bit parameters runs bucket by bucket during the next iteration's first
    /// forward of each chunk instead of blocking at the end of the step.
    bool overlap_param_gather = false;
    /// Appendix B of Korthikanti: a stage frees its output tensor's data once sent (it duplicates the
    /// next stage's input); false keeps it until the backward.
    bool deallocate_pipeline_outputs = true;
    /// FP8 training with Transformer Engine; unset means BF16 everywhere (today's behaviour).
    std::optional<Fp8Format> fp8_format;
    /// Only with fp8_format; Megatron's default is delayed.
    std::optional<Fp8Recipe> fp8_recipe;
    /// Only with fp8_format: the FP8 GEMMs Transformer Engine runs with its split accumulator (partial
    /// sums promoted to FP32, cuBLASLt fast accumulation off) take the profile's
    /// split_accumulator_slowdown: dgrad and wgrad (TE's _2X_ACC_DGRAD/_2X_ACC_WGRAD), and the forward
    /// too under blockwise (Float8BlockScaling requires it). false: every FP8 GEMM at the fast rate.
    bool fp8_split_accumulator = true;
    /// Megatron-Core's cross_entropy_loss_fusion: true, the vocab-parallel loss as torch.compile'd
    /// functions; false, as eager PyTorch (Megatron's default). Unset keeps trainsim's earlier estimate of
    /// the loss (one fused pass, fewer bytes than either), so that existing results do not move.
    std::optional<bool> cross_entropy_loss_fusion;

    /// What selective recomputation re-runs (recompute_modules, or its default).
    [[nodiscard]] RecomputeModules selective_modules() const {
        return recompute_modules.value_or(RecomputeModules{});
    }

    /// The recipe FP8 runs with, or nullopt for BF16 training.
    [[nodiscard]] std::optional<Fp8Recipe> fp8() const {
        return fp8_format ? std::optional<Fp8Recipe>(fp8_recipe.value_or(Fp8Recipe::Delayed)) : std::nullopt;
    }
};

/// Per-GPU slowdowns (DESIGN.md §8 "Variability"): off; the expected slowest of the GPUs each simulated
/// GPU stands for (folded runs); or seeded draws, each GPU its own (--fold none), a folded GPU the
/// slowest of its members' draws.
enum class VariabilityMode { Off, Expected, Sampled };

struct VariabilityConfig {
    VariabilityMode mode = VariabilityMode::Off;
    std::int64_t seed = 1;
    /// Sampled mode only: each kernel launch also takes its own seeded factor around 1 (run-to-run
    /// jitter, the profile's variability.kernel_jitter_stddev), on top of its GPU's slowdown.
    bool kernel_jitter = false;
};

enum class ScheduleKind {
    Auto,
    GPipe,
    OneFOneB,
    Interleaved,
    BreadthFirst,
    ZbH1,
    ZbH2,
    ZbV,
    DualPipe,
    DualPipeV
};

/// How communication is priced (scenarios/README.md "Network"): each collective and send alone from
/// the profile's curves, or as flows on the cluster's topology that share its links.
enum class NetworkModel { Analytical, Flow };
/// What an asynchronous collective takes from the compute beside it (scenarios/README.md
/// "hardware.collective_contention"): the profile's fixed compute_share_while_overlapped per scope, or
/// NCCL's channels (SMs) and the collective's HBM traffic (sim/cost/collective_contention.h).
enum class CollectiveContentionModel { FixedShare, NcclChannels };
/// Where that slowdown is decided (scenarios/README.md "hardware.compute_contention"): priced into the
/// kernels before the run from the op list's order, or by the engine while it runs, with the GPU's
/// compute a resource that running collectives and sends hold a share of (sim/engine/gpu_compute.h).
enum class ComputeContention { Priced, Engine };
enum class FabricKind { RailOptimized, FatTree };

/// hardware.topology: the shape of the fabric (sim/network/ builds the graph from it and the profile's
/// rates). Defaults: a rail-optimised, non-blocking two-tier fabric of 20-node scalable units.
struct TopologyConfig {
    std::optional<std::string> preset;  // dgx-a100-superpod, dgx-h100-superpod (fills the rest)
    FabricKind kind = FabricKind::RailOptimized;
    std::int64_t nodes_per_leaf = 20;
    double oversubscription = 1.0;
    std::int64_t nodes_per_pod = 0;  // 0: one spine tier
    double pod_oversubscription = 1.0;
    // NVLink SHARP in the NVSwitch (NCCL's NVLS); unset: the GPU generation decides (Hopper and later).
    std::optional<bool> nvls;
    bool sharp = false;  // SHARP in the IB switches (NCCL CollNet): NVLS across nodes
    bool given = false;  // the scenario has a hardware.topology section
};

struct HardwareConfig {
    std::string profile;  // a name from scenarios/hardware/ or a path
    std::int64_t gpus_per_node = 8;
    NetworkModel network_model = NetworkModel::Analytical;
    CollectiveContentionModel collective_contention = CollectiveContentionModel::FixedShare;
    ComputeContention compute_contention = ComputeContention::Priced;
    TopologyConfig topology;
};

struct Scenario {
    std::string name;
    ModelConfig model;
    ParallelConfig parallelism;
    TrainingConfig training;
    ScheduleKind schedule = ScheduleKind::Auto;
    HardwareConfig hardware;
    VariabilityConfig variability;

    [[nodiscard]] std::int64_t num_gpus() const {
        return parallelism.tensor_model_parallel_size * parallelism.pipeline_model_parallel_size *
               parallelism.data_parallel_size * parallelism.context_parallel_size;
    }
    /// Micro-batches per pipeline per iteration: global / (micro × DP).
    [[nodiscard]] std::int64_t num_microbatches() const {
        return training.global_batch_size / (training.micro_batch_size * parallelism.data_parallel_size);
    }
    /// The schedule actually run: `auto` resolves to interleaved when v > 1, else 1F1B.
    [[nodiscard]] ScheduleKind resolved_schedule() const;
    /// Whether the schedule places the model's stages in a V (zb-v and DualPipeV: chunk 0 of rank r is stage
    /// r, chunk 1 is stage 2p − 1 − r), so that rank 0 holds both the first and the last stage.
    [[nodiscard]] bool v_shaped_placement() const;
    /// Whether the schedule is DualPipe's bidirectional one: every rank holds two copies of a p-stage
    /// model's stages, chunk 0 stage r (micro-batches entering at rank 0) and chunk 1 stage p − 1 − r
    /// (micro-batches entering at rank p − 1), so ranks 0 and p − 1 both hold the first and last stage.
    [[nodiscard]] bool bidirectional_placement() const;
    /// Whether DualPipe's (or DualPipeV's) F&B chunk pairs run overlapped
    /// (parallelism.dualpipe_overlapped_forward_backward, on unless set false).
    [[nodiscard]] bool dualpipe_overlaps_pairs() const;
    /// Whether forward-backward pairs run overlapped at their expert all-to-alls: DualPipe's F&B chunk
    /// pairs, or Megatron's combined 1F1B (parallelism.overlap_moe_expert_parallel_comm).
    [[nodiscard]] bool overlaps_forward_backward_pairs() const;
    /// The model stage that chunk `chunk` of pipeline rank `pipeline_rank` holds, as the schedules place
    /// it (their stage_of, without building a schedule): c·p + r; in a V chunk 1 is 2p − 1 − r; under
    /// DualPipe chunk 1 is stage p − 1 − r of the model's second copy.
    [[nodiscard]] std::int64_t model_stage_of_chunk(std::int64_t pipeline_rank, std::int64_t chunk) const;
    /// The pipeline rank holding the last stage (the output layer and the loss): p − 1, or 0 in a V.
    /// (DualPipe: p − 1 for chunk 0 and 0 for chunk 1; holds_first_stage/holds_last_stage say both.)
    [[nodiscard]] std::int64_t last_stage_rank() const;
    /// Whether pipeline rank `pipeline_rank` holds the model's first stage (the embedding) in any chunk.
    [[nodiscard]] bool holds_first_stage(std::int64_t pipeline_rank) const;
    /// Whether pipeline rank `pipeline_rank` holds the model's last stage (output layer, loss) in any chunk.
    [[nodiscard]] bool holds_last_stage(std::int64_t pipeline_rank) const;

    /// Transformer layers on pipeline rank `pipeline_rank` (all its chunks together; DualPipe's two
    /// copies of an L/p-layer stage count twice: 2L/p).
    [[nodiscard]] std::int64_t stage_num_layers(std::int64_t pipeline_rank) const;
    /// Transformer layers in model chunk `chunk` of pipeline rank `pipeline_rank`: stage_num_layers / v, or
    /// the virtual stage's own count (layers_per_virtual_stage); 0 for a chunk of only the embedding or loss.
    [[nodiscard]] std::int64_t chunk_num_layers(std::int64_t pipeline_rank, std::int64_t chunk) const;
    /// Layers of pipeline rank `pipeline_rank` in its chunks before `chunk`: where the chunk's layers start
    /// in the rank's list (stage_layers, a recompute plan's entries).
    [[nodiscard]] std::int64_t layers_before_chunk(std::int64_t pipeline_rank, std::int64_t chunk) const;
    /// Whether the split is not the uniform L / (p·v) per chunk (layers_per_pipeline_stage or
    /// layers_per_virtual_stage given or derived from Megatron's uneven-split keys).
    [[nodiscard]] bool uneven_split() const;
    /// Index in the model of the first layer of virtual stage `virtual_stage` (chunk · p + rank).
    [[nodiscard]] std::int64_t first_layer_of_virtual_stage(std::int64_t virtual_stage) const;
    /// The layers of every pipeline rank (layers_per_pipeline_stage, or the uniform split).
    [[nodiscard]] std::vector<std::int64_t> pipeline_split() const;
};

/// A split as the scenario file writes it: "[12,13,13,10]".
[[nodiscard]] std::string split_text(const std::vector<std::int64_t>& split);

[[nodiscard]] const char* to_string(Normalization n);
[[nodiscard]] const char* to_string(PositionEmbeddingType t);
[[nodiscard]] const char* to_string(RecomputeGranularity g);
[[nodiscard]] const char* to_string(AttentionBackend b);
[[nodiscard]] const char* to_string(DataParallelSharding s);
[[nodiscard]] const char* to_string(CpCommType c);
[[nodiscard]] const char* to_string(RecomputeMethod m);
[[nodiscard]] const char* to_string(RecomputeModule m);
[[nodiscard]] const char* to_string(ScheduleKind s);
[[nodiscard]] const char* to_string(VariabilityMode m);
[[nodiscard]] const char* to_string(Fp8Format f);
[[nodiscard]] const char* to_string(Fp8Recipe r);
[[nodiscard]] const char* to_string(StateDtype d);
[[nodiscard]] const char* to_string(MoeTokenDispatcher d);

/// Largest value accepted for any size or count in a scenario (2^40). Anything larger is a typo, and
/// would overflow the byte and element counts computed downstream.
inline constexpr std::int64_t kMaxScenarioSize = std::int64_t{1} << 40;

/// Largest accepted product of the sizes that downstream code multiplies together (2^56 elements):
/// this leaves a factor 2^7 of int64 headroom for byte widths and constant factors such as 34 in
/// sbh(34 + 5as/h).
inline constexpr std::int64_t kMaxScenarioProduct = std::int64_t{1} << 56;

/// The same for the weight matrices (L·h², L·h·ffn, V·h), 2^52: a stage's parameters are up to about
/// seven of these products, and Adam moves 34 bytes per parameter (2^56 would let that pass 2^63).
inline constexpr std::int64_t kMaxParameterProduct = std::int64_t{1} << 52;

/// Checks every rule that a scenario's values must satisfy (ranges, size caps, Megatron's divisibility,
/// recompute and schedule rules; scenarios/README.md lists them). Throws InputError naming the key and
/// the rule. parse_scenario calls it; code that builds or edits a Scenario itself calls it too.
void validate_scenario(const Scenario& scenario);

/// One command-line override, `--set parallelism.data_parallel_size=16`.
struct Override {
    std::string key;    // dotted path
    std::string value;  // parsed as JSON when it is valid JSON, otherwise taken as a string
};

/// Parses `key=value`; throws InputError when there is no '='.
[[nodiscard]] Override parse_override(const std::string& text);
/// Each of `texts`, in order (every `--set` of a command line).
[[nodiscard]] std::vector<Override> parse_overrides(const std::vector<std::string>& texts);

/// Reads, overrides and validates a scenario file. Throws InputError (one line naming the key and
/// the rule) on malformed JSON, unknown keys (with a suggestion), wrong types, out-of-range values
/// and parallel sizes that do not divide what they must.
[[nodiscard]] Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides = {});

/// The same from JSON text already in memory; `default_name` is used when the file has no "name".
[[nodiscard]] Scenario parse_scenario(const std::string& json_text, const std::string& default_name,
                                      const std::vector<Override>& overrides = {});

}  // namespace trainsim::config
