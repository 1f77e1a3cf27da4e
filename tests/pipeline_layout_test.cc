// Megatron-Core's pipeline_model_parallel_layout (sim/config/pipeline_layout.h): the grammar against
// Megatron's parse_str_to_list (oracle counts from running its two regular expressions on each string),
// the per-(rank, chunk) layer counts the program and memory follow, account_for_* with interleaving, and
// the one-line errors for what Megatron or trainsim refuses.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/core/input_error.h"
#include "sim/engine/fingerprint.h"
#include "sim/memory/static_memory.h"
#include "sim/program/iteration_program.h"
#include "sim/program/op_span_visitor.h"
#include "sim/report/iteration_report.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using config::Override;

std::vector<std::int64_t> counts(const std::string& layout, std::int64_t p, std::int64_t layers,
                                 std::int64_t mtp = 0) {
    const config::PipelineLayout parsed = config::parse_pipeline_layout(Json(layout));
    return config::layout_layers_per_virtual_stage(parsed, p, layers, mtp);
}

std::string layout_error(const std::string& layout, std::int64_t p, std::int64_t layers,
                         std::int64_t mtp = 0) {
    try {
        (void)counts(layout, p, layers, mtp);
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

TEST(PipelineLayout, MegatronStringsUnrollToTheirLayerCounts) {
    // Megatron-Bridge perf_recipes/deepseek/h100/deepseek_v3.py, 1,024 H100s (PP 8, VP 4): 32 stages.
    std::vector<std::int64_t> dsv3(32, 2);
    dsv3.front() = 1;
    dsv3.back() = 0;  // "mL": the MTP depth and the loss only
    EXPECT_EQ(counts("Et|(tt|)*30mL", 8, 61, 1), dsv3);
    // perf_recipes/llama/h100/llama3.py (70B, 80 layers over 40 stages): x*n inside a repeated group.
    std::vector<std::int64_t> llama(40, 2);
    llama[35] = 3;
    llama[39] = 1;
    EXPECT_EQ(counts("Et*2|(t*2|)*34,t*3|(t*2|)*3,tL", 8, 80), llama);
    // Megatron's MTP guide: a stage of only the embedding.
    EXPECT_EQ(counts("E|t*3|(t|)*5mL", 4, 8, 1), (std::vector<std::int64_t>{0, 3, 1, 1, 1, 1, 1, 0}));
    // Commas are cosmetic; (ab)*n repeats a group; x*0 removes.
    EXPECT_EQ(counts("E,t,t|(t)*2|t*0tt|tL", 4, 7), (std::vector<std::int64_t>{2, 2, 2, 1}));
}

TEST(PipelineLayout, ListOfListsIsMegatronsOtherForm) {
    // Megatron-LM tests/unit_tests/dist_checkpointing/test_pipeline_parallel_layout.py: PP 4, an empty stage.
    const Json list = Json::parse(R"([["embedding", "decoder", "decoder"], ["decoder", "decoder", "decoder"],
                                      [], [" Decoder", "decoder", "decoder", "LOSS"]])");
    const config::PipelineLayout parsed = config::parse_pipeline_layout(list);
    EXPECT_EQ(config::layout_layers_per_virtual_stage(parsed, 4, 8, 0),
              (std::vector<std::int64_t>{2, 3, 0, 3}));
    EXPECT_EQ(config::layout_virtual_size(parsed, 2), 2);
}

TEST(PipelineLayout, ErrorsNameTheKeyAndTheRule) {
    const std::string key = "parallelism.pipeline_model_parallel_layout";
    EXPECT_EQ(
        layout_error("Et|(tt|)*29mL", 8, 61, 1),
        key +
            "=Et|(tt|)*29mL has 31 stages, which must be a multiple of "
            "parallelism.pipeline_model_parallel_size=8 (one per pipeline rank and virtual stage; Megatron)");
    EXPECT_EQ(layout_error("Et|(tt|)*30mL", 8, 60, 1),
              key + "=Et|(tt|)*30mL has 61 transformer layers (t), but model.num_layers=60");
    EXPECT_EQ(layout_error("Et|(tx|)*30mL", 8, 61, 1),
              key + "=\"Et|(tx|)*30mL\": unknown symbol 'x' in stage 1 (Megatron's symbols: E embedding, t "
                    "transformer layer, m MTP layer, L loss, | between stages, (...)*n and x*n to repeat)");
    EXPECT_EQ(layout_error("Et|(tt|)*30L", 8, 61, 1),
              key + "=Et|(tt|)*30L has 0 MTP layers (m), but model.mtp_num_layers=1");
    // Megatron's own documented example puts the MTP depth in a stage of its own (mtp_standalone).
    EXPECT_EQ(layout_error("Et*3|(tt|)*29,m|L", 16, 61, 1),
              key + "=Et*3|(tt|)*29,m|L places the MTP layers in stage 30 (pipeline rank 14, chunk 1) apart "
                    "from the loss (Megatron's mtp_standalone), which is not modelled: put m beside L");
    EXPECT_EQ(layout_error("Etm|t|t|tL", 4, 4, 1),
              key +
                  "=Etm|t|t|tL places a transformer layer (t) after an MTP layer (m); Megatron needs every t "
                  "first");
    EXPECT_EQ(layout_error("Et|t|t|tm||||L", 4, 4, 1),
              key + "=Et|t|t|tm||||L places MTP layers in stage 3 (pipeline rank 3, chunk 0); Megatron needs "
                    "them in the last chunk of a pipeline rank other than 0");
    EXPECT_EQ(layout_error("tE|t|t|tL", 4, 4),
              key + "=tE|t|t|tL must start with the embedding E and name it once "
                    "(Megatron), got 1");
    EXPECT_EQ(layout_error("|Et|t|tL", 4, 3),
              key + "=|Et|t|tL must put the embedding E in its first stage (pipeline rank 0, chunk 0), where "
                    "Megatron builds it");
    EXPECT_EQ(layout_error("((t)*2|)*2", 4, 4),
              key + "=\"((t)*2|)*2\" nests parentheses, which Megatron's layout grammar does not unroll");
}

// A small DeepSeek-V3-like model (6 layers, the first dense, MLA and MoE as the preset, one MTP depth) on p =
// 4 with the given layout; one micro-batch per pipeline rank.
config::Scenario small(const std::string& layout, std::vector<Override> extra = {}) {
    std::vector<Override> o = {{"model.num_layers", "6"},
                               {"model.num_experts", "8"},
                               {"model.moe_layer_freq", "[0,1,1,1,1,1]"},
                               {"model.hidden_size", "1024"},
                               {"model.moe_ffn_hidden_size", "512"},
                               {"model.moe_shared_expert_intermediate_size", "512"},
                               {"model.ffn_hidden_size", "2048"},
                               {"model.seq_length", "1024"},
                               {"model.padded_vocab_size", "32768"},
                               {"parallelism.tensor_model_parallel_size", "1"},
                               {"parallelism.sequence_parallel", "false"},
                               {"parallelism.pipeline_model_parallel_size", "4"},
                               {"parallelism.data_parallel_size", "8"},
                               {"parallelism.expert_model_parallel_size", "8"},
                               {"training.global_batch_size", "32"},
                               {"schedule", "auto"}};
    o.push_back({"parallelism.pipeline_model_parallel_layout", layout.empty() ? "null" : layout});
    o.insert(o.end(), extra.begin(), extra.end());
    return testing::shipped_scenario("moe/deepseek-v3-1024gpu", o);
}

struct LayoutRun {
    config::Scenario sc;
    program::IterationProgram prog;
    engine::RunResult run;
    report::IterationReport report;
};

LayoutRun simulate(const config::Scenario& sc) {
    static const cost::CostModel cost(
        cost::load_hardware_profile("h100-80gb-dgx", testing::source_path("scenarios/hardware")));
    program::IterationProgram prog = program::build_iteration(sc, cost);
    engine::RunResult run = program::simulate(prog);
    report::IterationReport rep = report::make_iteration_report(sc, cost, prog, run);
    return {sc, std::move(prog), std::move(run), std::move(rep)};
}

TEST(PipelineLayout, TheUniformLayoutIsTheDefaultSplit) {
    // 8 layers over p = 4, v = 2: one per chunk, the embedding and the loss where the schedule puts them.
    const LayoutRun uniform =
        simulate(small("", {{"model.num_layers", "8"},
                            {"model.moe_layer_freq", "[0,1,1,1,1,1,1,1]"},
                            {"parallelism.virtual_pipeline_model_parallel_size", "2"}}));
    const LayoutRun layout = simulate(small(
        "Et|t|t|t|t|t|t|tmL", {{"model.num_layers", "8"}, {"model.moe_layer_freq", "[0,1,1,1,1,1,1,1]"}}));
    EXPECT_EQ(layout.sc.parallelism.virtual_pipeline_model_parallel_size, 2);
    EXPECT_EQ(engine::fingerprint_hex(uniform.run), engine::fingerprint_hex(layout.run));
    EXPECT_EQ(uniform.report.peak_memory_bytes, layout.report.peak_memory_bytes);
}

// Each (rank, chunk)'s forward of micro-batch 0 runs exactly the layout's layers, the embedding runs on
// (0, 0) and the MTP depth and the output layer on (p − 1, v − 1), a chunk without layers among them.
TEST(PipelineLayout, EveryChunkRunsTheLayersTheLayoutGivesIt) {
    // Virtual stages: rank 0 chunk 0 "E", rank 1 "tt", rank 2 "t", rank 3 "t", rank 0 chunk 1 "t",
    // rank 1 "t", rank 2 "", rank 3 "mL".
    const LayoutRun r = simulate(small("E|tt|t|t|t|t||mL"));
    ASSERT_EQ(r.sc.parallelism.layers_per_virtual_stage, (std::vector<std::int64_t>{0, 2, 1, 1, 1, 1, 0, 0}));
    std::map<std::pair<std::int64_t, std::int32_t>, std::set<std::int32_t>> layers;  // (rank, chunk) → layers
    std::map<std::pair<std::int64_t, std::int32_t>, std::set<std::string>> outside;  // ops outside layers
    for (std::size_t t = 0; t < r.prog.info.size(); ++t) {
        const program::TaskInfo task = r.prog.info[t];
        if (task.microbatch != 0 || task.phase != program::Phase::Forward || task.priced < 0) {
            continue;
        }
        const std::int64_t rank = r.prog.gpus[task.gpu.index()].coordinates.pp;
        if (task.layer >= 0) {
            layers[{rank, task.chunk}].insert(task.layer);
            continue;
        }
        for (const program::OpSpan& s :
             program::op_spans(r.prog, engine::TaskId::from_index(t), r.run.timings[t])) {
            if (s.op != nullptr) {
                outside[{rank, task.chunk}].insert(s.op->name);
            }
        }
    }
    using Key = std::pair<std::int64_t, std::int32_t>;
    EXPECT_EQ(layers[Key(1, 0)], (std::set<std::int32_t>{0, 1}));
    EXPECT_EQ(layers[Key(2, 0)], (std::set<std::int32_t>{2}));
    EXPECT_EQ(layers[Key(3, 0)], (std::set<std::int32_t>{3}));
    EXPECT_EQ(layers[Key(0, 1)], (std::set<std::int32_t>{4}));
    EXPECT_EQ(layers[Key(1, 1)], (std::set<std::int32_t>{5}));
    EXPECT_EQ(layers[Key(3, 1)], (std::set<std::int32_t>{6}));  // the MTP depth: num_layers + 0
    EXPECT_FALSE(layers.contains(Key(0, 0)));
    EXPECT_FALSE(layers.contains(Key(2, 1)));
    EXPECT_EQ(layers.size(), 6u);
    EXPECT_FALSE(outside[Key(0, 0)].empty());
    EXPECT_TRUE(outside[Key(3, 1)].contains("output.logits"));
    EXPECT_FALSE(outside[Key(0, 1)].contains("output.logits"));
    EXPECT_EQ(r.report.stages.at(0).layers, 1);
    EXPECT_EQ(r.report.stages.at(1).layers, 3);
    EXPECT_EQ(r.report.stages.at(2).layers, 1);
    EXPECT_EQ(r.report.stages.at(3).layers, 1);
}

TEST(PipelineLayout, StaticMemoryFollowsTheLayout) {
    // Moving MoE layer 5 from rank 1 (chunk 1) to rank 2 (chunk 1) moves exactly its weights, gradients
    // and optimizer state (the distributed optimizer's bytes per parameter, experts over expert DP).
    const config::Scenario a = small("E|tt|t|t|t|t||mL");
    const config::Scenario b = small("E|tt|t|t|t||t|mL");
    const Bytes moved = memory::static_bytes(a, 1) - memory::static_bytes(b, 1);
    EXPECT_GT(moved.value, 0);
    EXPECT_EQ((memory::static_bytes(b, 2) - memory::static_bytes(a, 2)).value, moved.value);
    EXPECT_EQ(memory::static_bytes(a, 0), memory::static_bytes(b, 0));
    EXPECT_EQ(memory::static_bytes(a, 3), memory::static_bytes(b, 3));
    // Layer 5 on rank 2's chunk 1 now: rank 2's forward compute grows by that layer's for every
    // micro-batch, and rank 1's shrinks by the same.
    const LayoutRun ra = simulate(a);
    const LayoutRun rb = simulate(b);
    const double gained = rb.report.stages[2].time.compute.value - ra.report.stages[2].time.compute.value;
    const double lost = ra.report.stages[1].time.compute.value - rb.report.stages[1].time.compute.value;
    EXPECT_GT(gained, 0.0);
    EXPECT_NEAR(gained, lost, 1e-9);
}

TEST(PipelineLayout, AccountForEmbeddingAndLossWithInterleaving) {
    // Megatron's get_num_layers_to_build: (6 + 2) / 4 = 2 slots per rank, 1 per chunk; the first virtual
    // stage gives its slot to the embedding, the last to the loss (the MTP depth rides with the loss).
    const config::Scenario sc = small("", {{"parallelism.virtual_pipeline_model_parallel_size", "2"},
                                           {"parallelism.account_for_embedding_in_pipeline_split", "true"},
                                           {"parallelism.account_for_loss_in_pipeline_split", "true"}});
    EXPECT_EQ(sc.parallelism.layers_per_virtual_stage, (std::vector<std::int64_t>{0, 1, 1, 1, 1, 1, 1, 0}));
    EXPECT_EQ(sc.pipeline_split(), (std::vector<std::int64_t>{1, 2, 2, 1}));
    // The same split written as a layout simulates identically.
    const LayoutRun accounted = simulate(sc);
    const LayoutRun layout = simulate(small("E|t|t|t|t|t|t|mL"));
    EXPECT_EQ(engine::fingerprint_hex(accounted.run), engine::fingerprint_hex(layout.run));
}

TEST(PipelineLayout, ScenarioErrors) {
    auto error_of = [](const std::string& layout, std::vector<Override> extra) {
        try {
            (void)small(layout, std::move(extra));
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(error_of("E|tt|t|t|t|t||mL", {{"parallelism.virtual_pipeline_model_parallel_size", "4"}}),
              "parallelism.virtual_pipeline_model_parallel_size=4 conflicts with "
              "parallelism.pipeline_model_parallel_layout, whose 8 stages over "
              "parallelism.pipeline_model_parallel_size=4 give 2 (Megatron)");
    EXPECT_EQ(
        error_of("E|tt|t|t|t|t||mL", {{"parallelism.account_for_loss_in_pipeline_split", "true"}}),
        "parallelism.pipeline_model_parallel_layout cannot be combined with "
        "decoder_first/last_pipeline_num_layers or account_for_embedding/loss_in_pipeline_split (Megatron)");
    EXPECT_EQ(
        error_of("Ettt|t|t|tmL", {{"schedule", "dualpipev"}}),
        "schedule=\"dualpipev\" requires parallelism.virtual_pipeline_model_parallel_size=2, got 1 (two "
        "model chunks per rank, placed in a V)");
    EXPECT_EQ(error_of("Et|t|t|t|t|t||mL", {{"schedule", "dualpipev"}}),
              "schedule=\"dualpipev\" needs the uniform split: parallelism.layers_per_pipeline_stage (and "
              "Megatron's uneven-split keys and pipeline_model_parallel_layout) are not modelled with the "
              "V-shaped placement");
    EXPECT_EQ(
        error_of("7", {}),
        "parallelism.pipeline_model_parallel_layout: expected a layout string such as \"Et|(tt|)*30mL\" or "
        "a list of lists of layer names, got 7");
}

}  // namespace
}  // namespace trainsim
