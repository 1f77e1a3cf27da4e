// DualPipe's overlapped F&B chunk pairs (sim/program/overlapped_pair.h): the order the pieces of a pair
// are lowered in, and on engine runs of an MoE model, that the pair's expert all-to-alls run beside the
// other chunk's compute (hidden exactly when they are the shorter), that without the overlap each is
// exposed in full, and the DualPipe README's bubble with F&B, B and W measured from the program. The
// same pairs in Megatron-Core's combined 1F1B (parallelism.overlap_moe_expert_parallel_comm): its
// schedules, its runs and its rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "sim/core/input_error.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/program/backward_split.h"
#include "sim/program/iteration_program.h"
#include "sim/program/overlapped_pair.h"
#include "sim/schedule/interleaved_schedule.h"
#include "sim/schedule/schedule.h"
#include "sim/workload/moe_token_dispatch.h"
#include "tests/test_support.h"

namespace trainsim::program {
namespace {

using workload::CommGroup;
using workload::Op;
using workload::OpKind;
using workload::OpList;

Op compute(const char* name) {
    Op op;
    op.name = name;
    op.kind = OpKind::MemoryBound;
    return op;
}

Op exchange(const char* name, CommGroup group = CommGroup::Expert) {
    Op op;
    op.name = name;
    op.kind = OpKind::Collective;
    op.group = group;
    op.blocking = true;
    return op;
}

// An MoE layer's forward: attention (with a tensor-parallel all-reduce, which is not an expert
// exchange), dispatch, experts, combine, unpermute.
OpList moe_forward() {
    return {compute("attn"),     exchange("attn.allreduce", CommGroup::Tensor),
            compute("router"),   exchange("dispatch"),
            compute("experts"),  exchange("combine"),
            compute("unpermute")};
}
// Its backward, the other way round.
OpList moe_backward() {
    return {compute("unpermute.bwd"), exchange("combine.bwd"), compute("experts.bwd"),
            exchange("dispatch.bwd"), compute("attn.bwd")};
}

PairSpan f(std::size_t item, std::size_t begin, std::size_t end) {
    return {PairChain::Forward, item, begin, end};
}
PairSpan b(std::size_t item, std::size_t begin, std::size_t end) {
    return {PairChain::Backward, item, begin, end};
}

TEST(OverlappedPairOrder, InterleavesAtTheExpertExchangesBackwardFirst) {
    // Megatron-Core's TransformerLayerSchedulePlan.run order for two layers a chunk (forward layer i
    // beside backward layer 1 − i): combine_bwd | attn_fwd → dispatch_fwd | mlp_bwd → dispatch_bwd |
    // mlp_fwd → combine_fwd | attn_bwd (+ the next layer's unpermute.bwd → combine_bwd) | ...
    const OpList embedding = {compute("embedding")};
    const OpList output_bwd = {compute("loss.bwd"), compute("output.bwd")};
    const OpList fwd = moe_forward(), bwd = moe_backward();
    const std::vector<const OpList*> forward = {&embedding, &fwd, &fwd};
    const std::vector<const OpList*> backward = {&output_bwd, &bwd, &bwd};
    const std::vector<PairSpan> expected = {
        b(0, 0, 2), b(1, 0, 2),  // output layer's backward, layer 1's unpermute.bwd, combine.bwd
        f(0, 0, 1), f(1, 0, 4),  // embedding, layer 0's attention, router, dispatch
        b(1, 2, 4),              // layer 1's experts.bwd, dispatch.bwd
        f(1, 4, 6),              // layer 0's experts, combine
        b(1, 4, 5), b(2, 0, 2),  // layer 1's attn.bwd; layer 0's unpermute.bwd, combine.bwd
        f(1, 6, 7), f(2, 0, 4),  // layer 0's unpermute; layer 1's attention to its dispatch
        b(2, 2, 4),              // layer 0's experts.bwd, dispatch.bwd
        f(2, 4, 6),              // layer 1's experts, combine
        b(2, 4, 5),              // layer 0's attn.bwd
        f(2, 6, 7)};             // layer 1's unpermute
    EXPECT_EQ(overlapped_pair_order(forward, backward), expected);
}

TEST(OverlappedPairOrder, ARunOfExchangesEndsOnePieceAndTheLongerChainFinishesAlone) {
    // The allgather dispatcher's three gathers in a row are one exchange; a dense backward has no
    // piece boundary, so it runs first, whole, and the forward's pieces follow.
    const OpList fwd = {compute("router"),   exchange("routing_map"), exchange("probs"),
                        exchange("hidden"),  compute("experts"),      exchange("reducescatter"),
                        compute("unpermute")};
    const OpList dense_bwd = {compute("mlp.bwd"), exchange("mlp.allreduce", CommGroup::Tensor),
                              compute("attn.bwd")};
    const std::vector<const OpList*> forward = {&fwd};
    const std::vector<const OpList*> backward = {&dense_bwd};
    const std::vector<PairSpan> expected = {b(0, 0, 3), f(0, 0, 4), f(0, 4, 6), f(0, 6, 7)};
    EXPECT_EQ(overlapped_pair_order(forward, backward), expected);
}

TEST(OverlappedPairOrder, WithoutExpertExchangesTheForwardRunsThenTheBackward) {
    // dualpipe.py's _forward_backward_compute_chunk for a module without overlapped_forward_backward.
    const OpList fwd = {compute("attn"), exchange("attn.allreduce", CommGroup::Tensor), compute("mlp")};
    const OpList bwd = {compute("mlp.bwd"), compute("attn.bwd")};
    const std::vector<const OpList*> forward = {&fwd, &fwd};
    const std::vector<const OpList*> backward = {&bwd};
    const std::vector<PairSpan> expected = {f(0, 0, 3), f(1, 0, 3), b(0, 0, 2)};
    EXPECT_EQ(overlapped_pair_order(forward, backward), expected);
}

// A small MoE model on DualPipe: p stages of two layers each, every layer MoE with 8 experts over the
// 8 GPUs of a node (EP 8 = DP 8), the all-to-all dispatcher; m = 2p micro-batches.
config::Scenario moe_dualpipe(std::int64_t p, std::int64_t gpus_per_node,
                              std::vector<config::Override> extra = {}) {
    const std::int64_t d = 8;
    const config::Scenario sc = config::parse_scenario(
        R"({"schedule": "dualpipe",
            "model": {"num_layers": )" +
            std::to_string(2 * p) + R"(, "hidden_size": 2048,
                      "num_attention_heads": 16, "seq_length": 4096, "padded_vocab_size": 2048,
                      "ffn_hidden_size": 8192, "swiglu": true, "add_bias_linear": false,
                      "normalization": "RMSNorm", "position_embedding_type": "rope",
                      "num_experts": 8, "moe_router_topk": 2, "moe_ffn_hidden_size": 4096,
                      "moe_token_dispatcher_type": "alltoall", "moe_grouped_gemm": true},
            "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": )" +
            std::to_string(p) + R"(, "data_parallel_size": )" + std::to_string(d) + R"(,
                            "virtual_pipeline_model_parallel_size": 2, "expert_model_parallel_size": 8},
            "training": {"micro_batch_size": 1, "global_batch_size": )" +
            std::to_string(2 * p * d) + R"(, "attention_backend": "flash"},
            "hardware": {"profile": "h100-80gb-dgx", "gpus_per_node": )" +
            std::to_string(gpus_per_node) + "}}",
        "dualpipe-moe", extra);
    return sc;
}

struct Interval {
    SimTime start{}, end{};
};

// One schedule step's tasks on one GPU: its compute (busy time and first start, last end) and its
// expert exchanges.
struct StepRun {
    SimTime busy{};
    SimTime first = -1_ns, last{};
    std::vector<Interval> compute;
    std::vector<Interval> exchanges;
};

using StepKey = std::tuple<Phase, std::int32_t, std::int32_t>;  // (phase, micro-batch, chunk)

// The tasks of every (phase, micro-batch, chunk) on pipeline rank `pp`. A W step's tasks are Backward
// ones of the same key as its B: with `weights` false they are left out (W steps only follow their B
// apart in the schedule; callers pick steps without a W).
std::map<StepKey, StepRun> steps_on(const IterationProgram& prog, const engine::RunResult& run,
                                    std::int64_t pp) {
    std::map<StepKey, StepRun> out;
    for (std::size_t t = 0; t < prog.info.size(); ++t) {
        const TaskInfo info = prog.info[t];
        if (prog.gpus[info.gpu.index()].coordinates.pp != pp || info.microbatch < 0 ||
            info.phase == Phase::Iteration) {
            continue;
        }
        const engine::TaskTiming& timing = run.timings[t];
        StepRun& s = out[{info.phase, info.microbatch, info.chunk}];
        // The token-count gather runs in its own chunk's piece (Megatron-Core's attention node), which
        // waits for it: it counts with the chunk's own work, not among the pair's overlapped exchanges.
        const auto ops = op_spans(prog, engine::TaskId::from_index(t), timing);
        const bool count_gather = info.category == TaskCategory::ExpertComm && !ops.empty() &&
                                  ops.front().op != nullptr &&
                                  ops.front().op->name == workload::kTokensPerExpertGather;
        if (info.category == TaskCategory::ExpertComm && !count_gather) {
            s.exchanges.push_back({timing.start, timing.end});
        } else if (!is_communication(info.category) || count_gather) {
            s.busy += timing.end - timing.start;
            s.first = s.first < SimTime{} ? timing.start : std::min(s.first, timing.start);
            s.last = std::max(s.last, timing.end);
            s.compute.push_back({timing.start, timing.end});
        }
    }
    return out;
}

// The first overlapped F&B pair of pipeline rank `pp` and its two keys.
std::pair<StepKey, StepKey> first_pair(const config::Scenario& sc, std::int64_t pp) {
    const auto sched = schedule::make_schedule(sc.schedule, schedule::pipeline_shape(sc));
    const std::vector<schedule::Step> steps = sched->steps(pp);
    for (std::size_t k = 0; k + 1 < steps.size(); ++k) {
        if (steps[k].paired) {
            return {{Phase::Forward, steps[k].microbatch, steps[k].chunk},
                    {Phase::Backward, steps[k + 1].microbatch, steps[k + 1].chunk}};
        }
    }
    ADD_FAILURE() << "rank " << pp << " has no F&B pair";
    return {};
}

SimTime overlap_with(const Interval& a, const std::vector<Interval>& others) {
    SimTime sum{};
    for (const Interval& o : others) {
        sum += std::max(SimTime{}, std::min(a.end, o.end) - std::max(a.start, o.start));
    }
    return sum;
}

struct PairRun {
    StepRun forward, backward;
    SimTime span{}, busy{}, exchanged{};
    SimTime iteration{};
};

PairRun run_pair(const config::Scenario& sc, std::int64_t pp) {
    const IterationProgram prog = build_iteration(sc, testing::shipped_cost_model());
    const engine::RunResult run = simulate(prog);
    const auto steps = steps_on(prog, run, pp);
    const auto [fk, bk] = first_pair(sc, pp);
    PairRun r;
    r.forward = steps.at(fk);
    r.backward = steps.at(bk);
    r.span = std::max(r.forward.last, r.backward.last) - std::min(r.forward.first, r.backward.first);
    r.busy = r.forward.busy + r.backward.busy;
    for (const StepRun* s : {&r.forward, &r.backward}) {
        for (const Interval& e : s->exchanges) {
            r.exchanged += e.end - e.start;
        }
    }
    r.iteration = run.makespan;
    return r;
}

TEST(DualPipeOverlap, ExpertAllToAllsHideBehindThePairedChunksCompute) {
    // p = 2 (two layers a stage, m = 4): rank 0's pair F2.c0&B0.c1 runs copy 0's first stage forward
    // beside copy 1's last stage backward. EP 8 inside one node: each all-to-all moves 4096·2 routed
    // tokens of 2048 BF16 over NVLink, shorter than the other chunk's piece it runs beside.
    const config::Scenario overlapped = moe_dualpipe(2, 8);
    const config::Scenario sequential =
        moe_dualpipe(2, 8, {{"parallelism.dualpipe_overlapped_forward_backward", "false"}});
    for (std::int64_t pp = 0; pp < 2; ++pp) {
        SCOPED_TRACE(pp);
        const PairRun on = run_pair(overlapped, pp);
        const PairRun off = run_pair(sequential, pp);
        // Six exchanges a layer (the dispatch's tokens and probs, and the combine, each way), two layers
        // a chunk, in both runs.
        ASSERT_EQ(on.forward.exchanges.size() + on.backward.exchanges.size(), 12u);
        ASSERT_EQ(off.forward.exchanges.size() + off.backward.exchanges.size(), 12u);
        EXPECT_EQ(on.exchanged, off.exchanged);
        // The same kernels, those beside an exchange slowed by its share of the GPU (NVLink's
        // compute_share_while_overlapped 0.15: 1/0.85 for at most the exchange's time).
        EXPECT_GT(on.busy, off.busy);
        EXPECT_LE(on.busy - off.busy, SimTime{static_cast<std::int64_t>(
                                          static_cast<double>(on.exchanged.ns()) * (1.0 / 0.85 - 1.0))} +
                                          8_ns);
        // Without the overlap the compute stream waits out every blocking all-to-all: exactly their sum.
        EXPECT_EQ(off.span, off.busy + off.exchanged);
        // With it, never: F&B is the two chunks' compute back to back.
        EXPECT_EQ(on.span, on.busy);
        // Each exchange runs wholly beside the other chunk's compute.
        for (const auto& [mine, other] :
             {std::pair{&on.forward, &on.backward}, std::pair{&on.backward, &on.forward}}) {
            for (const Interval& e : mine->exchanges) {
                EXPECT_EQ(overlap_with(e, other->compute), e.end - e.start);
                EXPECT_EQ(overlap_with(e, mine->compute), 0_ns);
            }
        }
        EXPECT_LT(on.iteration, off.iteration);
    }
}

TEST(DualPipeOverlap, ExchangesLongerThanThePieceBesideThemShowOnlyTheirExcess) {
    // One GPU a node: the all-to-alls cross the NICs and outlast the compute beside them. The pair
    // still waits less than the sum of its exchanges, and more than nothing.
    const PairRun on = run_pair(moe_dualpipe(2, 1), 0);
    const PairRun off =
        run_pair(moe_dualpipe(2, 1, {{"parallelism.dualpipe_overlapped_forward_backward", "false"}}), 0);
    EXPECT_EQ(off.span, off.busy + off.exchanged);
    EXPECT_GT(on.span, on.busy);
    EXPECT_LT(on.span - on.busy, on.exchanged);
    // Exchanges serialise on the communication stream: the pair cannot end before they have all run,
    // each after the compute that feeds it.
    EXPECT_GE(on.span, on.exchanged);
}

// Rank `pp`'s schedule slots (a step, or an F&B pair as one) with their compute spans, W told from its
// B by its ops (the weight-gradient GEMMs that backward_split.h moves there).
struct Slots {
    std::vector<Interval> span;  // by slot
    std::vector<std::string> name;
    SimTime bubble{};  // idle between the rank's first and last slot, outside every slot
};

Slots slots_on(const config::Scenario& sc, const IterationProgram& prog, const engine::RunResult& run,
               std::int64_t pp) {
    const auto sched = schedule::make_schedule(
        sc.schedule, {sc.parallelism.pipeline_model_parallel_size, 2, sc.num_microbatches(), 0});
    const std::vector<schedule::Step> steps = sched->steps(pp);
    Slots out;
    std::map<std::tuple<int, std::int32_t, std::int32_t>, std::size_t> slot_of;  // (pass, mb, chunk)
    for (std::size_t k = 0; k < steps.size(); ++k) {
        const schedule::Step& s = steps[k];
        const bool joins_pair = k > 0 && steps[k - 1].paired && s.pass == schedule::Pass::Backward;
        if (!joins_pair) {
            out.span.push_back({-1_ns, 0_ns});
            out.name.emplace_back();
        }
        out.name.back() += (joins_pair ? "&" : "") + schedule::to_string({s});
        slot_of[{static_cast<int>(s.pass), s.microbatch, s.chunk}] = out.span.size() - 1;
    }
    SimTime busy{};
    for (std::size_t t = 0; t < prog.info.size(); ++t) {
        const TaskInfo info = prog.info[t];
        if (prog.gpus[info.gpu.index()].coordinates.pp != pp || info.microbatch < 0 ||
            info.phase == Phase::Iteration || is_communication(info.category)) {
            continue;
        }
        const std::vector<OpSpan> ops = op_spans(prog, engine::TaskId::from_index(t), run.timings[t]);
        const bool weight = std::all_of(ops.begin(), ops.end(), [](const OpSpan& o) {
            return o.op != nullptr && is_weight_gradient(*o.op);
        });
        schedule::Pass pass =
            info.phase == Phase::Forward ? schedule::Pass::Forward : schedule::Pass::Backward;
        if (weight &&
            slot_of.contains({static_cast<int>(schedule::Pass::Weight), info.microbatch, info.chunk})) {
            pass = schedule::Pass::Weight;
        }
        Interval& slot = out.span.at(slot_of.at({static_cast<int>(pass), info.microbatch, info.chunk}));
        const engine::TaskTiming& timing = run.timings[t];
        slot.start = slot.start < SimTime{} ? timing.start : std::min(slot.start, timing.start);
        slot.end = std::max(slot.end, timing.end);
        busy += timing.end - timing.start;
    }
    SimTime first = run.makespan, last{}, inside{};
    for (const Interval& s : out.span) {
        first = std::min(first, s.start);
        last = std::max(last, s.end);
        inside += s.end - s.start;
    }
    out.bubble = last - first - inside;
    return out;
}

// The README's terms on one rank, read off its slots: F&B (the rank's first pair) and the bubble.
struct ReadmeTerms {
    SimTime pair{}, bubble{};
};

ReadmeTerms readme_terms(const config::Scenario& sc, std::int64_t rank) {
    const IterationProgram prog = build_iteration(sc, testing::shipped_cost_model());
    const engine::RunResult run = simulate(prog);
    const Slots slots = slots_on(sc, prog, run, rank);
    const auto pair = std::find_if(slots.name.begin(), slots.name.end(),
                                   [](const std::string& n) { return n.find('&') != std::string::npos; });
    EXPECT_NE(pair, slots.name.end());
    const Interval& span = slots.span[static_cast<std::size_t>(pair - slots.name.begin())];
    return {span.end - span.start, slots.bubble};
}

TEST(DualPipeOverlap, BubbleFollowsTheReadmesFAndBTerm) {
    // README: bubble (PP/2 − 1)(F&B + B − 3W), PP = p. Only F&B changes with the overlap (F, B and W
    // are chunks run alone), so on a middle rank, whose stages carry no embedding or output layer, the
    // bubble must move by exactly (p/2 − 1) times the pair's change. (The formula's absolute value is
    // exact only at equal pass times with free communication, zero_bubble_schedule_test.cc; here the
    // stages' unequal times and the 0.72 ms PP transfers add the same amount with and without.)
    // p = 4, measured: F&B 19.83 ms overlapped, 21.24 ms not; bubble 14.58 and 15.99 ms.
    for (const std::int64_t p : {4, 6}) {
        SCOPED_TRACE(p);
        const std::int64_t middle = p / 2 - 1;
        const ReadmeTerms on = readme_terms(moe_dualpipe(p, 8), middle);
        const ReadmeTerms off = readme_terms(
            moe_dualpipe(p, 8, {{"parallelism.dualpipe_overlapped_forward_backward", "false"}}), middle);
        EXPECT_LT(on.pair, off.pair);
        EXPECT_EQ(off.bubble - on.bubble, (p / 2 - 1) * (off.pair - on.pair));
    }
}

TEST(DualPipeOverlap, KeyIsOnlyForTheDualPipeSchedulesWithExitTwo) {
    const auto other =
        testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-175b.json") +
                              " --set parallelism.dualpipe_overlapped_forward_backward=false --format json");
    EXPECT_EQ(other.status, 2);
    EXPECT_EQ(other.out, "");
    EXPECT_NE(other.err.find("parallelism.dualpipe_overlapped_forward_backward is only used by "
                             "schedule=\"dualpipe\" and schedule=\"dualpipev\""),
              std::string::npos)
        << other.err;
    const auto typo = testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-175b.json") +
                                            " --set parallelism.dualpipe_overlapped_forward_backward=1");
    EXPECT_EQ(typo.status, 2);
    EXPECT_NE(typo.err.find("parallelism.dualpipe_overlapped_forward_backward"), std::string::npos)
        << typo.err;
}

TEST(DualPipeOverlap, DualPipeVPairsOverlapToo) {
    // The same model in DualPipeV's V (p = 2 ranks, 4 stages, m = 2p): its pairs shorten likewise.
    std::vector<config::Override> v = {{"schedule", "dualpipev"}};
    const config::Scenario on = moe_dualpipe(2, 8, v);
    v.push_back({"parallelism.dualpipe_overlapped_forward_backward", "false"});
    const config::Scenario off = moe_dualpipe(2, 8, v);
    for (std::int64_t pp = 0; pp < 2; ++pp) {
        SCOPED_TRACE(pp);
        const PairRun a = run_pair(on, pp);
        const PairRun b = run_pair(off, pp);
        EXPECT_EQ(b.span, b.busy + b.exchanged);
        EXPECT_LT(a.span - a.busy, b.exchanged);
        EXPECT_LT(a.span, b.span);
    }
}

// The same MoE layers under Megatron-Core's combined 1F1B (overlap_moe_expert_parallel_comm): p stages
// of two layers (with v = 2 one layer a chunk), EP 8 = DP 8 in one node, m = 4 micro-batches.
config::Scenario moe_combined(std::int64_t p, std::int64_t v, std::vector<config::Override> extra = {}) {
    extra.insert(extra.begin(), {{"schedule", "auto"},
                                 {"parallelism.virtual_pipeline_model_parallel_size", std::to_string(v)},
                                 {"parallelism.overlap_moe_expert_parallel_comm", "true"},
                                 {"training.global_batch_size", "32"}});
    return moe_dualpipe(p, 8, extra);
}

TEST(CombinedOneFOneB, SchedulesRunOneMoreWarmupForwardAndPairEveryLaterOne) {
    // combined_1f1b.py with p = 1: "1st microbatch forward", then "k-th backward + (k+1)-th forward".
    schedule::PipelineShape one{1, 1, 4, 0, true};
    EXPECT_EQ(schedule::to_string(schedule::make_schedule(config::ScheduleKind::OneFOneB, one)->steps(0)),
              "F0.c0 F1.c0&B0.c0 F2.c0&B1.c0 F3.c0&B2.c0 B3.c0");
    one.combined_1f1b = false;
    EXPECT_EQ(schedule::to_string(schedule::make_schedule(config::ScheduleKind::OneFOneB, one)->steps(0)),
              "F0.c0 B0.c0 F1.c0 B1.c0 F2.c0 B2.c0 F3.c0 B3.c0");
    // Interleaved, p = 2, v = 2, m = 4: rank 1's warm-up (p − r − 1)·2 + (v − 1)·p = 2 becomes 3
    // (schedules.py get_pp_rank_microbatches), and each steady forward pairs with the backward after it.
    const schedule::InterleavedSchedule plain({2, 2, 4, 0, false}, 2);
    const schedule::InterleavedSchedule combined({2, 2, 4, 0, true}, 2);
    EXPECT_EQ(plain.warmup(1), 2);
    EXPECT_EQ(combined.warmup(1), 3);
    EXPECT_EQ(combined.warmup(0), 5);
    EXPECT_EQ(
        schedule::to_string(combined.steps(1)),
        "F0.c0 F1.c0 F0.c1 F1.c1&B0.c1 F2.c0&B1.c1 F3.c0&B0.c0 F2.c1&B1.c0 F3.c1&B2.c1 B3.c1 B2.c0 B3.c0");
    // Only where Megatron has it: 1F1B with one stage, or interleaved.
    EXPECT_THROW((void)schedule::make_schedule(config::ScheduleKind::OneFOneB, {2, 1, 4, 0, true}),
                 InputError);
    EXPECT_THROW((void)schedule::make_schedule(config::ScheduleKind::GPipe, {1, 1, 4, 0, true}), InputError);
}

TEST(CombinedOneFOneB, ExpertAllToAllsHideBehindTheOtherMicroBatchsCompute) {
    // One stage: each pair is F(k + 1) beside B(k), their layers cut at the expert all-to-alls.
    const config::Scenario on = moe_combined(1, 1);
    const config::Scenario off =
        moe_combined(1, 1, {{"parallelism.overlap_moe_expert_parallel_comm", "false"}});
    const PairRun a = run_pair(on, 0);
    // 2 layers × 6 exchanges (the dispatch's tokens and probs, and the combine, each way).
    ASSERT_EQ(a.forward.exchanges.size() + a.backward.exchanges.size(), 12u);
    // Inside the node every exchange is shorter than the compute beside it: the pair waits for none.
    EXPECT_EQ(a.span, a.busy);
    for (const auto& [mine, other] :
         {std::pair{&a.forward, &a.backward}, std::pair{&a.backward, &a.forward}}) {
        for (const Interval& e : mine->exchanges) {
            EXPECT_EQ(overlap_with(e, other->compute), e.end - e.start);
        }
    }
    // Without the key the same micro-batches run F, B, F, B with every all-to-all exposed.
    const engine::RunResult plain = simulate(build_iteration(off, testing::shipped_cost_model()));
    EXPECT_LT(a.iteration, plain.makespan);
}

TEST(CombinedOneFOneB, InterleavedPairsShortenTheIterationAndHoldOneMoreMicroBatch) {
    const config::Scenario on = moe_combined(2, 2);
    const config::Scenario off =
        moe_combined(2, 2, {{"parallelism.overlap_moe_expert_parallel_comm", "false"}});
    for (std::int64_t pp = 0; pp < 2; ++pp) {
        SCOPED_TRACE(pp);
        const PairRun a = run_pair(on, pp);
        EXPECT_LT(a.span - a.busy, a.exchanged);  // the pair hides part of its exchanges at least
    }
    const report::IterationReport with =
        experiment::simulate_scenario(on, testing::shipped_cost_model()).report;
    const report::IterationReport without =
        experiment::simulate_scenario(off, testing::shipped_cost_model()).report;
    EXPECT_LT(with.iteration_time, without.iteration_time);
    // The extra warm-up forward keeps one more chunk's activations on every rank.
    EXPECT_GT(with.peak_memory_bytes, without.peak_memory_bytes);
}

TEST(CombinedOneFOneB, MegatronsRulesAreOneLineExitTwo) {
    const std::string base = testing::source_path("scenarios/moe/mixtral-8x7b-64gpu.json");
    const auto refused = [&](const std::string& sets, const std::string& message) {
        const auto r = testing::run_trainsim("run " + base +
                                             " --set parallelism.overlap_moe_expert_parallel_comm=true " +
                                             sets + " --format json");
        EXPECT_EQ(r.status, 2) << sets;
        EXPECT_EQ(r.out, "") << sets;
        EXPECT_NE(r.err.find(message), std::string::npos) << sets << ": " << r.err;
    };
    refused("--set parallelism.expert_model_parallel_size=1",
            "parallelism.overlap_moe_expert_parallel_comm needs MoE layers and "
            "parallelism.expert_model_parallel_size > 1");
    refused("--set model.moe_token_dispatcher_type=allgather",
            "needs model.moe_token_dispatcher_type=\"alltoall\"");
    refused("--set training.recompute_granularity=full --set training.recompute_method=uniform "
            "--set training.recompute_num_layers=1",
            "is not possible with training.recompute_granularity=\"full\"");
    refused("--set parallelism.virtual_pipeline_model_parallel_size=1", "needs the interleaved schedule");
}

}  // namespace
}  // namespace trainsim::program
