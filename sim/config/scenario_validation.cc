// validate_scenario: the rules between keys (Megatron-LM's argument checks) and the size caps that keep
// downstream arithmetic in int64. Each failure is one InputError naming the keys and the rule.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/moe_validation.h"
#include "sim/config/rule_text.h"
#include "sim/config/scenario.h"
#include "sim/config/scenario_enums.h"
#include "sim/config/section_reader.h"

namespace trainsim::config {

namespace {

// "a=2" when `optional` is 1 (its default), else "a=2 × b=3 = 6".
std::string times_text(const Factor& first, const Factor& optional) {
    if (optional.value == 1) {
        return show(first);
    }
    return show({first, optional}) + " = " + std::to_string(first.value * optional.value);
}

Factor pipeline_size(const Scenario& s) {
    return {"parallelism.pipeline_model_parallel_size", s.parallelism.pipeline_model_parallel_size};
}
Factor virtual_size(const Scenario& s) {
    return {"parallelism.virtual_pipeline_model_parallel_size",
            s.parallelism.virtual_pipeline_model_parallel_size};
}
Factor micro_batch(const Scenario& s) {
    return {"training.micro_batch_size", s.training.micro_batch_size};
}
Factor data_parallel(const Scenario& s) {
    return {"parallelism.data_parallel_size", s.parallelism.data_parallel_size};
}

std::string quoted(const char* name) {
    return std::string("\"") + name + "\"";
}

void check_names(const Scenario& s) {
    if (s.name.empty()) {
        fail("name: must not be empty");
    }
    if (s.hardware.profile.empty()) {
        fail("hardware.profile: must not be empty");
    }
}

void check_sizes(const Scenario& s) {
    const std::vector<Factor> sizes{
        {"model.num_layers", s.model.num_layers},
        {"model.hidden_size", s.model.hidden_size},
        {"model.num_attention_heads", s.model.num_attention_heads},
        {"model.ffn_hidden_size", s.model.ffn_hidden_size},
        {"model.seq_length", s.model.seq_length},
        {"model.padded_vocab_size", s.model.padded_vocab_size},
        {"parallelism.tensor_model_parallel_size", s.parallelism.tensor_model_parallel_size},
        {"parallelism.pipeline_model_parallel_size", s.parallelism.pipeline_model_parallel_size},
        {"parallelism.data_parallel_size", s.parallelism.data_parallel_size},
        {"parallelism.context_parallel_size", s.parallelism.context_parallel_size},
        {"parallelism.virtual_pipeline_model_parallel_size",
         s.parallelism.virtual_pipeline_model_parallel_size},
        {"training.micro_batch_size", s.training.micro_batch_size},
        {"training.global_batch_size", s.training.global_batch_size},
        {"hardware.gpus_per_node", s.hardware.gpus_per_node},
    };
    for (const auto& f : sizes) {
        check_size(f.path, f.value);
    }
    if (s.training.recompute_num_layers) {
        check_size("training.recompute_num_layers", *s.training.recompute_num_layers);
    }
    if (s.model.num_query_groups) {
        check_size("model.num_query_groups", *s.model.num_query_groups);
    }
    if (s.model.kv_channels) {
        check_size("model.kv_channels", *s.model.kv_channels);
    }
}

// Every product of sizes that this file or the simulator forms is capped, so none can overflow int64
// (each size is already ≤ 2^40, so a pair cannot overflow while the cap is tested).
void check_products(const Scenario& s) {
    const Factor L{"model.num_layers", s.model.num_layers};
    const Factor h{"model.hidden_size", s.model.hidden_size};
    const Factor a{"model.num_attention_heads", s.model.num_attention_heads};
    // At least 1: hidden_size < heads is reported by check_model_shape, after this.
    const Factor dk{"model.kv_channels", std::max<std::int64_t>(1, s.model.head_dim())};
    const Factor f{"model.ffn_hidden_size", s.model.ffn_hidden_size};
    const Factor seq{"model.seq_length", s.model.seq_length};
    const Factor V{"model.padded_vocab_size", s.model.padded_vocab_size};
    const Factor t{"parallelism.tensor_model_parallel_size", s.parallelism.tensor_model_parallel_size};
    const Factor p{"parallelism.pipeline_model_parallel_size", s.parallelism.pipeline_model_parallel_size};
    const Factor d{"parallelism.data_parallel_size", s.parallelism.data_parallel_size};
    const Factor c{"parallelism.context_parallel_size", s.parallelism.context_parallel_size};
    const Factor v{"parallelism.virtual_pipeline_model_parallel_size",
                   s.parallelism.virtual_pipeline_model_parallel_size};
    const Factor b{"training.micro_batch_size", s.training.micro_batch_size};
    const Factor G{"training.global_batch_size", s.training.global_batch_size};
    struct Product {
        std::string_view what;
        std::vector<Factor> factors;
        int log2_cap = 56;
    };
    const std::vector<Product> products{
        {"activation elements of all layers", {L, b, seq, h}},
        {"MLP activation elements of all layers", {L, b, seq, f}},
        {"attention-score elements of all layers", {L, b, a, seq, seq}},
        {"logit elements", {b, seq, V}},
        {"attention weights", {L, h, h}, 52},
        {"query and output projection weights", {L, h, a, dk}, 52},
        {"MLP weights", {L, h, f}, 52},
        {"embedding weights", {V, h}, 52},
        {"GPUs", c.value > 1 ? std::vector<Factor>{t, p, d, c} : std::vector<Factor>{t, p, d}},
        {"pipeline chunks", {p, v}},
        {"samples per micro-batch step", {b, d}},
        {"tokens per iteration", {G, seq}},
        {"micro-batch tasks per iteration", {G, v}},
    };
    static_assert(kMaxParameterProduct == std::int64_t{1} << 52, "the weight products above say 52");
    for (const auto& [what, factors, log2_cap] : products) {
        const std::int64_t cap = std::int64_t{1} << log2_cap;
        std::int64_t product = 1;
        for (const auto& factor : factors) {
            if (product > cap / factor.value) {
                fail(show(factors) + " exceeds 2^" + std::to_string(log2_cap) + " (" + std::string(what) +
                     "); sizes this large would overflow the byte counts computed downstream");
            }
            product *= factor.value;
        }
    }
}

void check_model_shape(const Scenario& s) {
    const ModelConfig& m = s.model;
    if (m.num_query_groups) {
        if (m.num_attention_heads % *m.num_query_groups != 0) {
            fail(show("model.num_query_groups", *m.num_query_groups) + " must divide " +
                 show("model.num_attention_heads", m.num_attention_heads) +
                 " (each group of query heads shares one key and value head)");
        }
    }
    if (m.kv_channels) {
        return;  // Megatron allows heads × kv_channels ≠ hidden_size (the projections map between them)
    }
    if (m.hidden_size % m.num_attention_heads != 0) {
        fail(show("model.hidden_size", m.hidden_size) + " must be divisible by " +
             show("model.num_attention_heads", m.num_attention_heads) + " (or give model.kv_channels)");
    }
}

// Megatron splits heads, the MLP's hidden dimension and the vocabulary across the tensor-parallel
// ranks. Dividing the heads also divides hidden_size, a multiple of the heads (check_model_shape).
void check_tensor_parallel(const Scenario& s) {
    const std::int64_t t = s.parallelism.tensor_model_parallel_size;
    const std::vector<Factor> split{
        {"model.num_attention_heads", s.model.num_attention_heads},
        {"model.ffn_hidden_size", s.model.ffn_hidden_size},
        {"model.padded_vocab_size", s.model.padded_vocab_size},
    };
    for (const auto& f : split) {
        if (f.value % t != 0) {
            fail(show("parallelism.tensor_model_parallel_size", t) + " must divide " + show(f.path, f.value));
        }
    }
    // Megatron-Core splits the key and value heads across the ranks too (num_query_groups_per_partition).
    if (s.model.num_query_groups && *s.model.num_query_groups % t != 0) {
        fail(show("parallelism.tensor_model_parallel_size", t) + " must divide " +
             show("model.num_query_groups", *s.model.num_query_groups) +
             " (each rank holds whole key and value heads)");
    }
}

void check_sequence_parallel(const Scenario& s) {
    // Megatron-LM asserts the same: TE's userbuffers overlap the sequence-parallel all-gathers and
    // reduce-scatters, so there is nothing to overlap without them.
    if (s.parallelism.tp_comm_overlap && !s.parallelism.sequence_parallel) {
        fail("parallelism.tp_comm_overlap=true requires parallelism.sequence_parallel=true (it overlaps the "
             "sequence-parallel all-gathers and reduce-scatters)");
    }
    if (!s.parallelism.sequence_parallel) {
        return;
    }
    const std::int64_t t = s.parallelism.tensor_model_parallel_size;
    if (t == 1) {
        fail("parallelism.sequence_parallel=true requires parallelism.tensor_model_parallel_size > 1");
    }
    if (s.model.seq_length % t != 0) {
        fail(show("parallelism.tensor_model_parallel_size", t) + " must divide " +
             show("model.seq_length", s.model.seq_length) +
             " with parallelism.sequence_parallel=true (the sequence is split across the tensor-parallel "
             "ranks)");
    }
}

// Megatron-Core runs context parallelism inside Transformer Engine's attention (TEDotProductAttention):
// the sequence is cut into 2·c chunks and rank r keeps chunks r and 2c−1−r, so that every rank holds the
// same share of the causal mask.
void check_context_parallel(const Scenario& s) {
    const std::int64_t c = s.parallelism.context_parallel_size;
    const std::string cp = show("parallelism.context_parallel_size", c);
    if (c == 1) {
        if (s.parallelism.cp_comm_type != CpCommType::P2p) {
            fail("parallelism.cp_comm_type=" + quoted(to_string(s.parallelism.cp_comm_type)) +
                 " requires parallelism.context_parallel_size > 1");
        }
        return;
    }
    const std::int64_t seq = s.model.seq_length;
    if (seq % (2 * c) != 0) {
        fail(show("model.seq_length", seq) + " must be divisible by 2 × " + cp +
             " (the sequence is split into 2·c chunks, two per context-parallel rank, for the causal load "
             "balance)");
    }
    const std::int64_t t = s.parallelism.tensor_model_parallel_size;
    if (s.parallelism.sequence_parallel && (seq / c) % t != 0) {
        fail(show("model.seq_length", seq) + " / " + cp + " = " + std::to_string(seq / c) +
             " tokens per context-parallel rank must be divisible by " +
             show("parallelism.tensor_model_parallel_size", t) + " with parallelism.sequence_parallel=true");
    }
    if (s.training.attention_backend == AttentionBackend::Unfused) {
        fail(cp + " requires training.attention_backend=\"flash\" or \"fused\" (Megatron-Core runs context "
                  "parallelism inside Transformer Engine's fused attention), got \"unfused\"");
    }
    if (s.parallelism.cp_comm_type == CpCommType::A2a) {
        const std::int64_t heads = s.model.num_attention_heads / t;
        const std::int64_t groups = s.model.query_groups() / t;
        if (heads % c != 0 || groups % c != 0) {
            fail("parallelism.cp_comm_type=\"a2a\" requires " + cp + " to divide the " +
                 std::to_string(heads) + " query heads and " + std::to_string(groups) +
                 " key/value heads per tensor-parallel rank (the all-to-all trades sequence shards for head "
                 "shards)");
        }
    }
}

void check_pipeline(const Scenario& s) {
    const std::vector<std::int64_t>& chunks = s.parallelism.layers_per_virtual_stage;
    if (!chunks.empty()) {
        // Resolved from Megatron's layout or account_for_* keys, whose rules were checked there; a scenario
        // edited since must still give every virtual stage a count and every layer a stage.
        std::int64_t total = 0;
        for (const std::int64_t layers : chunks) {
            total += layers;
        }
        if (static_cast<std::int64_t>(chunks.size()) != pipeline_size(s).value * virtual_size(s).value ||
            total != s.model.num_layers) {
            fail("the per-chunk split " + split_text(chunks) + " needs one count per virtual stage (" +
                 times_text(pipeline_size(s), virtual_size(s)) + ") adding up to " +
                 show("model.num_layers", s.model.num_layers));
        }
        return;
    }
    const std::vector<std::int64_t>& split = s.parallelism.layers_per_pipeline_stage;
    if (split.empty() && s.bidirectional_placement()) {
        // DualPipe's two chunks per rank are copies of one p-stage model's stages.
        if (s.model.num_layers % pipeline_size(s).value != 0) {
            fail(show("model.num_layers", s.model.num_layers) + " must be divisible by " +
                 show(pipeline_size(s)) +
                 " (schedule=\"dualpipe\": each rank holds two copies of an L/p-layer stage)");
        }
        return;
    }
    if (split.empty()) {
        if (s.model.num_layers % (pipeline_size(s).value * virtual_size(s).value) != 0) {
            fail(show("model.num_layers", s.model.num_layers) + " must be divisible by " +
                 times_text(pipeline_size(s), virtual_size(s)) +
                 " (or give parallelism.layers_per_pipeline_stage for an uneven split)");
        }
        return;
    }
    const std::string key = "parallelism.layers_per_pipeline_stage";
    if (static_cast<std::int64_t>(split.size()) != pipeline_size(s).value) {
        fail(key + "=" + split_text(split) + " has " + std::to_string(split.size()) +
             " entries, but needs one per pipeline rank (" + show(pipeline_size(s)) + ")");
    }
    std::int64_t total = 0;
    for (std::size_t i = 0; i < split.size(); ++i) {
        check_size(key + "[" + std::to_string(i) + "]", split[i]);
        total += split[i];  // ≤ p · 2^40 after check_size: no overflow
        if (split[i] % virtual_size(s).value != 0) {
            fail(key + "[" + std::to_string(i) + "]=" + std::to_string(split[i]) + " must be divisible by " +
                 show(virtual_size(s)) + " (each rank's layers are split evenly among its model chunks)");
        }
    }
    if (total != s.model.num_layers) {
        fail(key + "=" + split_text(split) + " adds up to " + std::to_string(total) + " layers, but " +
             show("model.num_layers", s.model.num_layers));
    }
}

void check_batch(const Scenario& s) {
    if (s.training.global_batch_size % (micro_batch(s).value * data_parallel(s).value) != 0) {
        fail(show("training.global_batch_size", s.training.global_batch_size) + " must be divisible by " +
             times_text(micro_batch(s), data_parallel(s)));
    }
}

void check_schedule(const Scenario& s) {
    const std::int64_t p = s.parallelism.pipeline_model_parallel_size;
    const std::int64_t v = s.parallelism.virtual_pipeline_model_parallel_size;
    if (s.schedule == ScheduleKind::Interleaved && v == 1) {
        fail("schedule=\"interleaved\" requires parallelism.virtual_pipeline_model_parallel_size > 1");
    }
    if ((s.schedule == ScheduleKind::GPipe || s.schedule == ScheduleKind::OneFOneB) && v > 1) {
        fail("schedule=" + quoted(to_string(s.schedule)) +
             " requires parallelism.virtual_pipeline_model_parallel_size=1, got " + std::to_string(v) +
             " (use \"interleaved\" or \"auto\" for more than one model chunk per rank)");
    }
    if (s.schedule == ScheduleKind::DualPipe) {
        // deepseek-ai/DualPipe dualpipe.py step(): num_ranks even; num_chunks even and >= num_ranks * 2.
        if (v != 2) {
            fail("schedule=\"dualpipe\" requires parallelism.virtual_pipeline_model_parallel_size=2, got " +
                 std::to_string(v) + " (each rank holds two model chunks: stage r and stage p - 1 - r)");
        }
        if (p % 2 != 0) {
            fail("schedule=\"dualpipe\" requires an even " +
                 show("parallelism.pipeline_model_parallel_size", p) + " (DualPipe: num_ranks % 2 == 0)");
        }
        if (s.uneven_split()) {
            fail("schedule=\"dualpipe\" needs the uniform split: parallelism.layers_per_pipeline_stage (and "
                 "Megatron's uneven-split keys and pipeline_model_parallel_layout) are not modelled with "
                 "DualPipe's two copies of each stage");
        }
        if (s.num_microbatches() % 2 != 0 || s.num_microbatches() < 2 * p) {
            fail(show("training.global_batch_size", s.training.global_batch_size) + " gives " +
                 std::to_string(s.num_microbatches()) +
                 " micro-batches; schedule=\"dualpipe\" needs an even number, at least 2 × " +
                 show("parallelism.pipeline_model_parallel_size", p) +
                 " (DualPipe: num_chunks % 2 == 0 and num_chunks >= num_ranks * 2)");
        }
    }
    if ((s.schedule == ScheduleKind::ZbV || s.schedule == ScheduleKind::DualPipeV) && v != 2) {
        fail("schedule=" + quoted(to_string(s.schedule)) +
             " requires parallelism.virtual_pipeline_model_parallel_size=2, got " + std::to_string(v) +
             " (two model chunks per rank, placed in a V)");
    }
    if (s.v_shaped_placement() && s.uneven_split()) {
        fail("schedule=" + quoted(to_string(s.schedule)) +
             " needs the uniform split: parallelism.layers_per_pipeline_stage (and Megatron's uneven-split "
             "keys and pipeline_model_parallel_layout) are not modelled with the V-shaped placement");
    }
    if (s.schedule == ScheduleKind::DualPipeV && s.num_microbatches() < 2 * p) {
        fail(show("training.global_batch_size", s.training.global_batch_size) + " gives " +
             std::to_string(s.num_microbatches()) +
             " micro-batches; schedule=\"dualpipev\" needs at least 2 × " +
             show("parallelism.pipeline_model_parallel_size", p) +
             " (DualPipe: num_chunks >= num_ranks * 2)");
    }
    if ((s.schedule == ScheduleKind::ZbH1 || s.schedule == ScheduleKind::ZbH2) && v > 1) {
        fail("schedule=" + quoted(to_string(s.schedule)) +
             " requires parallelism.virtual_pipeline_model_parallel_size=1, got " + std::to_string(v) +
             " (the handcrafted zero-bubble schedules run one model chunk per rank)");
    }
    const bool splits_backward = s.schedule == ScheduleKind::ZbH1 || s.schedule == ScheduleKind::ZbH2 ||
                                 s.schedule == ScheduleKind::ZbV || s.schedule == ScheduleKind::DualPipe ||
                                 s.schedule == ScheduleKind::DualPipeV;
    if (splits_backward &&
        s.parallelism.data_parallel_sharding_strategy == DataParallelSharding::OptimGradsParams) {
        fail("schedule=" + quoted(to_string(s.schedule)) +
             " splits each backward into B and W passes, which is not modelled with "
             "parallelism.data_parallel_sharding_strategy=\"optim_grads_params\" (FSDP)");
    }
    // Megatron-LM arguments.py: with p = 2 both neighbours are one rank, so the blocking schedule would
    // batch two sends and two receives between the same pair; overlap_p2p_comm issues them apart and
    // Megatron accepts p > 1 then (Megatron-Bridge's Qwen3-30B H100 recipe runs p 2, v 24 that way).
    const int least_p = s.parallelism.overlap_p2p_comm ? 1 : 2;
    if (v > 1 && p <= least_p && s.resolved_schedule() == ScheduleKind::Interleaved) {
        fail(
            show("parallelism.virtual_pipeline_model_parallel_size", v) +
            " requires parallelism.pipeline_model_parallel_size > " + std::to_string(least_p) +
            (s.parallelism.overlap_p2p_comm
                 ? ", got " + std::to_string(p) +
                       " (Megatron: more than one stage with the interleaved schedule)"
                 : " with parallelism.overlap_p2p_comm=false, got " + std::to_string(p) +
                       " (Megatron: two sends and receives between the same two ranks per batch otherwise)"));
    }
    // Megatron's blocking transfers are modelled for Megatron's own schedules; breadth-first posts its
    // receives in another order, and blocking sends would deadlock it.
    if (!s.parallelism.overlap_p2p_comm && s.resolved_schedule() == ScheduleKind::BreadthFirst) {
        fail("parallelism.overlap_p2p_comm=false (Megatron-LM's blocking pipeline transfers) is not modelled "
             "for "
             "schedule=\"breadth_first\", which Megatron-LM does not have");
    }
    if (s.parallelism.dualpipe_overlapped_forward_backward &&
        s.resolved_schedule() != ScheduleKind::DualPipe && s.resolved_schedule() != ScheduleKind::DualPipeV) {
        fail("parallelism.dualpipe_overlapped_forward_backward is only used by schedule=\"dualpipe\" and "
             "schedule=\"dualpipev\" (their F&B chunk pairs)");
    }
    if (s.parallelism.microbatch_group_size_per_vp_stage &&
        s.resolved_schedule() != ScheduleKind::Interleaved) {
        fail("parallelism.microbatch_group_size_per_vp_stage is only used by the interleaved schedule");
    }
    if (s.resolved_schedule() == ScheduleKind::Interleaved &&
        s.parallelism.microbatch_group_size_per_vp_stage) {
        // Megatron's current rules for an explicit group size: p <= N <= m, and m mod N is 0 or at
        // least p (otherwise the schedule has dependency bubbles).
        const std::int64_t m = s.num_microbatches();
        const std::int64_t n = *s.parallelism.microbatch_group_size_per_vp_stage;
        if (n < p || n > m) {
            fail(show("parallelism.microbatch_group_size_per_vp_stage", n) + " must be between " +
                 show("parallelism.pipeline_model_parallel_size", p) + " and the " + std::to_string(m) +
                 " micro-batches per pipeline");
        }
        if (m % n != 0 && m % n < p) {
            fail(std::to_string(m) + " micro-batches leave a last group of " + std::to_string(m % n) +
                 ", which must be 0 or at least " + show("parallelism.pipeline_model_parallel_size", p) +
                 " with " + show("parallelism.microbatch_group_size_per_vp_stage", n) + " (Megatron)");
        }
    } else if (s.resolved_schedule() == ScheduleKind::Interleaved) {
        const std::int64_t m = s.num_microbatches();
        if (m % p != 0) {
            fail(show("training.global_batch_size", s.training.global_batch_size) + " / (" +
                 times_text(micro_batch(s), data_parallel(s)) + ") = " + std::to_string(m) +
                 " micro-batches, but the interleaved schedule requires a multiple of " +
                 show("parallelism.pipeline_model_parallel_size", p) + " (Megatron's 2022 rule)");
        }
    }
}

// recompute_modules names what each layer re-runs; a module the model does not build is refused, as
// Megatron-Core refuses mla_up_proj without MLA and moe_act without grouped GEMMs
// (transformer_config.py __post_init__), rather than silently recomputing nothing.
void check_recompute_modules(const Scenario& s) {
    const TrainingConfig& t = s.training;
    if (!t.recompute_modules) {
        return;
    }
    if (t.recompute_granularity != RecomputeGranularity::Selective) {
        fail("training.recompute_modules requires training.recompute_granularity=\"selective\", got " +
             quoted(to_string(t.recompute_granularity)));
    }
    const RecomputeModules modules = *t.recompute_modules;
    const auto refuse = [](RecomputeModule m, const std::string& rule) {
        fail("training.recompute_modules: " + quoted(to_string(m)) + " " + rule);
    };
    const bool moe = s.model.moe && s.model.moe->num_moe_layers() > 0;
    const bool dense = !moe || s.model.moe->num_moe_layers() < s.model.num_layers;
    if (modules.contains(RecomputeModule::MlaUpProj) && !s.model.mla) {
        refuse(RecomputeModule::MlaUpProj, "requires model.multi_latent_attention");
    }
    for (const RecomputeModule m : {RecomputeModule::MoeAct, RecomputeModule::Moe}) {
        if (modules.contains(m) && !moe) {
            refuse(m, "requires MoE layers (model.num_experts)");
        }
    }
    if (modules.contains(RecomputeModule::MoeAct) && !s.model.moe->grouped_gemm) {
        refuse(RecomputeModule::MoeAct, "requires model.moe_grouped_gemm=true (Megatron-Core)");
    }
    if (modules.contains(RecomputeModule::SharedExperts) &&
        (!moe || s.model.moe->shared_expert_intermediate_size == 0)) {
        refuse(RecomputeModule::SharedExperts, "requires model.moe_shared_expert_intermediate_size");
    }
    if (modules.contains(RecomputeModule::Mlp) && !dense) {
        refuse(RecomputeModule::Mlp, "recomputes dense MLPs and every layer of the model is MoE");
    }
    // Megatron-Core's Transformer Engine spec fuses input_layernorm into linear_qkv and a dense layer's
    // pre_mlp_layernorm into linear_fc1 (IdentityOp in gpt_layer_specs.py): the norm stands alone only
    // before MLA's down projections and before an MoE layer's router.
    if (modules.contains(RecomputeModule::LayerNorm) && !s.model.mla && !moe) {
        refuse(RecomputeModule::LayerNorm,
               "has no norm to recompute: Transformer Engine fuses the norms into linear_qkv and linear_fc1 "
               "unless the model has MLA or MoE layers");
    }
    if (t.fp8_format && t.fp8() == Fp8Recipe::Delayed) {
        for (const RecomputeModule m : {RecomputeModule::MoeAct, RecomputeModule::LayerNorm}) {
            if (modules.contains(m)) {
                refuse(m, "is not supported with training.fp8_recipe=\"delayed\" (Megatron-Core)");
            }
        }
    }
}

void check_recompute(const Scenario& s) {
    const TrainingConfig& t = s.training;
    const std::string granularity = quoted(to_string(t.recompute_granularity));
    check_recompute_modules(s);
    if (t.recompute_granularity != RecomputeGranularity::Overlapped && t.recompute_memory_budget) {
        fail("training.recompute_memory_budget is the overlapped scheduler's budget and requires "
             "training.recompute_granularity=\"overlapped\", got " +
             granularity);
    }
    if (t.recompute_granularity != RecomputeGranularity::Full) {
        if (t.recompute_method) {
            fail("training.recompute_method=" + quoted(to_string(*t.recompute_method)) +
                 " requires training.recompute_granularity=\"full\", got " + granularity);
        }
        if (t.recompute_num_layers) {
            fail(show("training.recompute_num_layers", *t.recompute_num_layers) +
                 " requires training.recompute_granularity=\"full\", got " + granularity);
        }
        if (t.num_microbatches_with_partial_activation_checkpoints) {
            fail(show("training.num_microbatches_with_partial_activation_checkpoints",
                      *t.num_microbatches_with_partial_activation_checkpoints) +
                 " requires training.recompute_granularity=\"full\", got " + granularity);
        }
        return;
    }
    if (!t.recompute_method) {
        fail("training.recompute_method: required with training.recompute_granularity=\"full\"");
    }
    const std::string method = quoted(to_string(*t.recompute_method));
    if (!t.recompute_num_layers) {
        fail("training.recompute_num_layers: required with training.recompute_method=" + method);
    }
    if (t.num_microbatches_with_partial_activation_checkpoints &&
        s.resolved_schedule() != ScheduleKind::OneFOneB) {
        fail("training.num_microbatches_with_partial_activation_checkpoints requires schedule \"1f1b\" "
             "(Megatron applies it in the non-interleaved schedule), got " +
             quoted(to_string(s.resolved_schedule())));
    }
    const std::int64_t n = *t.recompute_num_layers;
    const bool interleaved = virtual_size(s).value > 1;
    const bool uneven = !s.parallelism.layers_per_pipeline_stage.empty();
    const bool per_chunk = !s.parallelism.layers_per_virtual_stage.empty();
    // Megatron's block recomputes the first n layers of each (virtual) stage; uniform splits the stage
    // into groups of n layers and checkpoints each group's input. Every rank's chunk must allow it.
    for (std::int64_t rank = 0; rank < pipeline_size(s).value; ++rank) {
        for (std::int64_t c = 0; c < virtual_size(s).value; ++c) {
            const std::int64_t chunk = s.chunk_num_layers(rank, c);
            const bool block = *t.recompute_method == RecomputeMethod::Block;
            // A chunk of only the embedding or the loss (a layout's) has no layer to recompute.
            if (chunk == 0 || (block ? n <= chunk : chunk % n == 0)) {
                continue;
            }
            const std::string where =
                per_chunk
                    ? "pipeline rank " + std::to_string(rank) + ", chunk " + std::to_string(c) +
                          " of the per-chunk split " + split_text(s.parallelism.layers_per_virtual_stage)
                : uneven
                    ? "pipeline rank " + std::to_string(rank) + " of parallelism.layers_per_pipeline_stage=" +
                          split_text(s.parallelism.layers_per_pipeline_stage)
                    : show("model.num_layers", s.model.num_layers) + " divided among " +
                          (interleaved ? show({pipeline_size(s), virtual_size(s)}) + " chunks"
                                       : show(pipeline_size(s)) + " stages");
            fail(show("training.recompute_num_layers", n) +
                 (block ? " must be at most the " : " must divide the ") + std::to_string(chunk) +
                 " layers per pipeline " + (interleaved ? "chunk" : "stage") + " (" + where +
                 ") with training.recompute_method=" + method);
        }
    }
}

void check_sharding(const Scenario& s) {
    const DataParallelSharding sharding = s.parallelism.data_parallel_sharding_strategy;
    if (sharding == DataParallelSharding::NoShard) {
        return;
    }
    const std::string key =
        std::string("parallelism.data_parallel_sharding_strategy=") + quoted(to_string(sharding));
    if (!s.training.use_distributed_optimizer) {
        fail(key + " requires training.use_distributed_optimizer=true (every sharding strategy shards the "
                   "optimizer state)");
    }
    if (sharding != DataParallelSharding::OptimGradsParams) {
        return;
    }
    // Recomputation on the background lane would need its layer's weights gathered too: not modelled.
    if (s.training.recompute_granularity == RecomputeGranularity::Overlapped) {
        fail(key + " is not modelled with training.recompute_granularity=\"overlapped\"");
    }
    if (s.training.recompute_granularity == RecomputeGranularity::Full && s.training.recompute_num_layers &&
        *s.training.recompute_num_layers > 1 && s.training.recompute_method == RecomputeMethod::Uniform) {
        fail(key + " is modelled with training.recompute_num_layers=1 only under the uniform method (each "
                   "layer's weights are gathered for its own recompute and backward)");
    }
}

void check_data_parallel(const Scenario& s) {
    if (s.training.ddp_bucket_size && !s.training.overlap_grad_reduce) {
        fail("training.ddp_bucket_size requires training.overlap_grad_reduce=true (buckets are how the "
             "gradient reduction overlaps the backward)");
    }
    // Megatron-LM's arguments.py refuses --overlap-param-gather without the distributed optimizer or
    // without --overlap-grad-reduce.
    if (s.training.overlap_param_gather && !s.training.use_distributed_optimizer) {
        fail("training.overlap_param_gather requires training.use_distributed_optimizer=true (only the "
             "distributed optimizer gathers parameters)");
    }
    if (s.training.overlap_param_gather && !s.training.overlap_grad_reduce) {
        fail("training.overlap_param_gather requires training.overlap_grad_reduce=true (as Megatron-LM "
             "requires)");
    }
    if (s.training.overlap_param_gather &&
        s.parallelism.data_parallel_sharding_strategy == DataParallelSharding::OptimGradsParams) {
        fail("training.overlap_param_gather is not modelled with "
             "parallelism.data_parallel_sharding_strategy=\"optim_grads_params\" (FSDP gathers each layer's "
             "weights itself)");
    }
}

void check_hardware(const Scenario& s) {
    const std::int64_t t = s.parallelism.tensor_model_parallel_size;
    const std::int64_t g = s.hardware.gpus_per_node;
    // A tensor-parallel group either fits inside a node or spans whole nodes; anything else would split
    // a group unevenly across nodes.
    if (g % t != 0 && t % g != 0) {
        fail(show("parallelism.tensor_model_parallel_size", t) + " must divide " +
             show("hardware.gpus_per_node", g) + " or be a multiple of it");
    }
    // A topology shapes only the flow model; silently ignoring it under the analytical one would let a
    // user believe an oversubscribed fabric was simulated.
    if (s.hardware.topology.given && s.hardware.network_model != NetworkModel::Flow) {
        fail("hardware.topology: applies only with hardware.network_model=flow (the analytical model prices "
             "each transfer alone and has no fabric)");
    }
}

void check_fp8(const Scenario& s) {
    const TrainingConfig& t = s.training;
    if (t.fp8_recipe && !t.fp8_format) {
        fail("training.fp8_recipe=" + quoted(to_string(*t.fp8_recipe)) +
             " requires training.fp8_format (\"e4m3\" or \"hybrid\"); without it training runs in BF16");
    }
    if (!t.fp8_split_accumulator && !t.fp8_format) {
        fail("training.fp8_split_accumulator=false requires training.fp8_format (\"e4m3\" or \"hybrid\"): it "
             "chooses how FP8 GEMMs accumulate, and without it training runs in BF16");
    }
}

// The optimizer's state formats (static_memory.h). Apex DistributedFusedAdam refuses store_params together
// with store_param_remainders (distributed_fused_adam.py, tag 24.07, lines 659-663).
void check_optimizer_state(const Scenario& s) {
    const TrainingConfig& t = s.training;
    if (t.store_param_remainders && t.store_params) {
        fail("training.store_param_remainders=true requires training.store_params=false (the optimizer keeps "
             "either the fp32 master copy or its 16-bit remainders, as Apex DistributedFusedAdam requires)");
    }
    if (t.optimizer_param_copy && !t.store_params) {
        fail("training.optimizer_param_copy=true requires training.store_params=true (without fp32 master "
             "parameters there is nothing to copy to the 16-bit weights)");
    }
    if (t.main_grads_dtype != StateDtype::Fp32 &&
        s.parallelism.data_parallel_sharding_strategy == DataParallelSharding::OptimGradsParams) {
        fail("training.main_grads_dtype=" + quoted(to_string(t.main_grads_dtype)) +
             " is not modelled with parallelism.data_parallel_sharding_strategy=\"optim_grads_params\" "
             "(Megatron-FSDP keeps its own gradient format)");
    }
    // NeMo sets with_fp32_embedding_grads only with Apex's DistributedFusedAdam (megatron_gpt_model.py,
    // r2.0.0rc1, line 559: with_distributed_adam and not use_mcore_dist_optim), a ZeRO-1 optimizer, and its
    // GPT has no MTP.
    if (t.fp32_embedding_grads) {
        const DataParallelSharding sharding = s.parallelism.data_parallel_sharding_strategy;
        if (!t.use_distributed_optimizer) {
            fail("training.fp32_embedding_grads=true requires training.use_distributed_optimizer=true (NeMo "
                 "keeps fp32 embedding gradients only in Apex DistributedFusedAdam's buckets)");
        }
        if (sharding != DataParallelSharding::NoShard && sharding != DataParallelSharding::Optim) {
            fail("training.fp32_embedding_grads=true is not modelled with "
                 "parallelism.data_parallel_sharding_strategy=" +
                 quoted(to_string(sharding)) +
                 " (Apex DistributedFusedAdam shards the optimizer state only)");
        }
        if (s.model.mtp_num_layers > 0) {
            fail("training.fp32_embedding_grads=true is not modelled with model.mtp_num_layers > 0 (NeMo's "
                 "GPT with Apex DistributedFusedAdam has no MTP)");
        }
    }
}

// Per-kernel draws need a GPU of their own to land on: the expected mode has no draws.
void check_variability(const Scenario& s) {
    if (s.variability.kernel_jitter && s.variability.mode != VariabilityMode::Sampled) {
        fail("variability.kernel_jitter=true requires variability.mode=\"sampled\" (got " +
             quoted(to_string(s.variability.mode)) + "): each kernel's factor is a seeded draw");
    }
}

}  // namespace

void validate_scenario(const Scenario& scenario) {
    check_names(scenario);
    check_sizes(scenario);
    check_products(scenario);
    check_model_shape(scenario);
    check_tensor_parallel(scenario);
    check_sequence_parallel(scenario);
    check_context_parallel(scenario);
    check_pipeline(scenario);
    check_batch(scenario);
    check_schedule(scenario);
    check_recompute(scenario);
    check_data_parallel(scenario);
    check_sharding(scenario);
    check_hardware(scenario);
    check_fp8(scenario);
    check_optimizer_state(scenario);
    check_variability(scenario);
    validate_moe(scenario);
}

}  // namespace trainsim::config
