// Fuzzes the simulation itself: the input bytes choose a small scenario that satisfies the rules of
// scenarios/README.md (a few layers, heads and GPUs, every schedule, recompute policy and memory knob),
// which is then built and simulated with an event budget. The run must finish and its answer must hold
// together:
//   - the iteration takes time, and every part of the breakdown is >= 0;
//   - each stage's parts add up to the iteration time, within 1 ns per task of rounding;
//   - MFU is at most 1 (no GPU runs above its peak) and the memory verdict agrees with the stages;
//   - the same program simulated twice gives the same fingerprint;
//   - folding tensor- and data-parallel peers changes neither iteration time nor peak memory
//     (DESIGN.md §3 "Scale").
// One input in eight instead takes sizes up to the validation caps (extreme_scenario_from). Inputs the
// validator rejects are skipped; any other failure aborts, so libFuzzer keeps it.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "sim/config/scenario.h"
#include "sim/core/input_error.h"
#include "sim/cost/cost_model.h"
#include "sim/engine/fingerprint.h"
#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/report/iteration_report.h"

namespace {

using namespace trainsim;
using nlohmann::json;

// Small enough for thousands of runs a second, large enough for every schedule to reach its steady state.
constexpr std::uint64_t kEventBudget = 5'000'000;
// Unfolded runs simulate every GPU; beyond this many the comparison costs more than it finds.
constexpr std::int64_t kMaxUnfoldedGpus = 16;

const cost::CostModel& shipped_cost() {
    static const cost::CostModel cost(cost::load_hardware_profile(
        "a100-80gb-selene", std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/hardware"));
    return cost;
}

template <typename T> T pick(FuzzedDataProvider& in, const std::vector<T>& choices) {
    return choices[in.ConsumeIntegralInRange<std::size_t>(0, choices.size() - 1)];
}

// A scenario document built from the fuzz bytes, valid by construction for all but rare combinations.
json scenario_from(FuzzedDataProvider& in) {
    const int t = 1 << in.ConsumeIntegralInRange(0, 3);
    const int p = in.ConsumeIntegralInRange(1, 4);
    const int d = in.ConsumeIntegralInRange(1, 3);
    const int v = p > 2 && in.ConsumeBool() ? in.ConsumeIntegralInRange(2, 3) : 1;
    const int heads = t * in.ConsumeIntegralInRange(1, 3);
    const int hidden = heads * 8 * in.ConsumeIntegralInRange(1, 4);
    const int layers = p * v * in.ConsumeIntegralInRange(1, 2);
    const bool sp = t > 1 && in.ConsumeBool();
    const int seq = t * 16 * in.ConsumeIntegralInRange(1, 8);
    const int b = in.ConsumeIntegralInRange(1, 2);

    json doc;
    doc["name"] = "fuzz";
    doc["model"] = {{"num_layers", layers},
                    {"hidden_size", hidden},
                    {"num_attention_heads", heads},
                    {"seq_length", seq},
                    {"padded_vocab_size", t * 32 * in.ConsumeIntegralInRange(1, 8)}};
    if (in.ConsumeBool()) {
        doc["model"]["ffn_hidden_size"] = t * 16 * in.ConsumeIntegralInRange(1, 16);
    }
    doc["parallelism"] = {
        {"tensor_model_parallel_size", t}, {"pipeline_model_parallel_size", p},
        {"data_parallel_size", d},         {"virtual_pipeline_model_parallel_size", v},
        {"sequence_parallel", sp},         {"scatter_gather_tensors_in_pipeline", in.ConsumeBool()}};

    const std::string schedule = v > 1 ? pick<std::string>(in, {"auto", "interleaved", "breadth_first"})
                                       : pick<std::string>(in, {"auto", "gpipe", "1f1b", "breadth_first"});
    const bool interleaved = v > 1 && schedule != "breadth_first";
    const int m = interleaved ? p * in.ConsumeIntegralInRange(1, 3) : in.ConsumeIntegralInRange(1, 8);
    doc["schedule"] = schedule;
    if (interleaved && in.ConsumeIntegralInRange(0, 3) == 0) {
        // Megatron's rules for the group size: p <= N <= m, and m mod N is 0 or at least p.
        const int n = in.ConsumeIntegralInRange(p, m);
        if (m % n == 0 || m % n >= p) {
            doc["parallelism"]["microbatch_group_size_per_vp_stage"] = n;
        }
    }

    json& tr = doc["training"];
    tr = {{"micro_batch_size", b},
          {"global_batch_size", b * d * m},
          {"use_distributed_optimizer", in.ConsumeBool()},
          {"deallocate_pipeline_outputs", in.ConsumeBool()}};
    if (d > 1 && in.ConsumeBool()) {
        tr["overlap_grad_reduce"] = true;
        if (in.ConsumeBool()) {
            tr["ddp_bucket_size"] = 1 << in.ConsumeIntegralInRange(8, 24);
        }
    }
    const int chunk = layers / (p * v);  // layers per pipeline chunk
    switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0:
        break;
    case 1:
        tr["recompute_granularity"] = "selective";
        break;
    case 2: {
        tr["recompute_granularity"] = "full";
        if (in.ConsumeBool()) {
            tr["recompute_method"] = "block";
            tr["recompute_num_layers"] = in.ConsumeIntegralInRange(1, chunk);
        } else {
            std::vector<int> divisors;
            for (int k = 1; k <= chunk; ++k) {
                if (chunk % k == 0) {
                    divisors.push_back(k);
                }
            }
            tr["recompute_method"] = "uniform";
            tr["recompute_num_layers"] = pick(in, divisors);
        }
        const bool one_f_one_b = v == 1 && (schedule == "auto" || schedule == "1f1b");
        if (one_f_one_b && in.ConsumeBool()) {
            tr["num_microbatches_with_partial_activation_checkpoints"] = in.ConsumeIntegralInRange(1, 3);
        }
        break;
    }
    default:
        tr["recompute_granularity"] = "overlapped";
        // The optimal scheduler simulates every plan, by design thousands for three stages of one layer:
        // only for a single stage of at most two layers.
        if (p == 1 && layers <= 2 && in.ConsumeBool()) {
            tr["recompute_scheduler"] = "optimal";
        }
        if (in.ConsumeBool()) {
            tr["recompute_memory_budget"] = std::int64_t{1} << in.ConsumeIntegralInRange(16, 36);
        }
        break;
    }
    doc["hardware"] = {{"profile", "a100-80gb-selene"},
                       {"gpus_per_node", 1 << in.ConsumeIntegralInRange(0, 3)}};
    return doc;
}

// A scenario with few layers and micro-batches but sizes anywhere up to the caps of scenario validation
// (2^40 each, products 2^52 or 2^56): the validator may reject it; if not, the run must answer or stop
// with one line (a cost beyond 292 years, memory beyond 2^62 bytes), never overflow or crash.
json extreme_scenario_from(FuzzedDataProvider& in) {
    const std::int64_t t = std::int64_t{1} << in.ConsumeIntegralInRange(0, 3);
    const std::int64_t p = in.ConsumeIntegralInRange(1, 2);
    const std::int64_t heads = t << in.ConsumeIntegralInRange(0, 4);
    const std::int64_t m = in.ConsumeIntegralInRange(1, 4);
    const std::int64_t b = std::int64_t{1} << in.ConsumeIntegralInRange(0, 12);
    json doc;
    doc["model"] = {{"num_layers", p * in.ConsumeIntegralInRange(1, 2)},
                    {"hidden_size", heads << in.ConsumeIntegralInRange(0, 30)},
                    {"num_attention_heads", heads},
                    {"ffn_hidden_size", t << in.ConsumeIntegralInRange(0, 34)},
                    {"seq_length", t << in.ConsumeIntegralInRange(0, 30)},
                    {"padded_vocab_size", t << in.ConsumeIntegralInRange(0, 34)}};
    doc["parallelism"] = {{"tensor_model_parallel_size", t},
                          {"pipeline_model_parallel_size", p},
                          {"sequence_parallel", t > 1 && in.ConsumeBool()}};
    doc["training"] = {{"micro_batch_size", b},
                       {"global_batch_size", b * m},
                       {"recompute_granularity", pick<std::string>(in, {"none", "selective", "full"})}};
    doc["schedule"] = pick<std::string>(in, {"1f1b", "gpipe"});
    doc["hardware"] = {{"profile", "a100-80gb-selene"}, {"gpus_per_node", 8}};
    return doc;
}

struct Outcome {
    engine::RunResult run;
    report::IterationReport report;
    std::size_t max_tasks_per_gpu = 0;
};

Outcome simulate(const config::Scenario& sc, const program::Fold& fold) {
    const cost::CostModel& cost = shipped_cost();
    experiment::SimulationOptions options;
    options.fold = fold;
    options.engine.max_events = kEventBudget;
    experiment::Simulation sim = experiment::simulate_scenario(sc, cost, options);
    const program::IterationProgram& prog = sim.program;
    Outcome o{std::move(sim.run), std::move(sim.report), 0};
    std::vector<std::size_t> per_gpu(prog.gpus.size(), 0);
    for (const program::TaskInfo& info : prog.info) {
        ++per_gpu[info.gpu.index()];
    }
    o.max_tasks_per_gpu = *std::max_element(per_gpu.begin(), per_gpu.end());

    // Same program, same answer: a second run must reproduce every task's timing.
    const engine::RunResult again = program::simulate(prog, options.engine);
    fuzz::require(engine::fingerprint(again) == engine::fingerprint(o.run),
                  "a second run has the same fingerprint");
    return o;
}

void check(const Outcome& o) {
    const report::IterationReport& r = o.report;
    fuzz::require(o.run.makespan > SimTime{}, "the iteration takes time");
    fuzz::require(r.iteration_time.value > 0.0, "iteration_time > 0");
    const double tolerance = 1e-9 * static_cast<double>(o.max_tasks_per_gpu) + 1e-12 * r.iteration_time.value;
    bool fits = true;
    for (const report::StageReport& s : r.stages) {
        const report::Breakdown& b = s.time;
        for (const Seconds part : {b.compute, b.recompute, b.optimizer, b.exposed_tp_comm, b.exposed_pp_comm,
                                   b.exposed_dp_comm, b.bubble, b.hidden_recompute}) {
            fuzz::require(part.value >= 0.0 && std::isfinite(part.value), "every breakdown part is >= 0");
        }
        fuzz::require(std::abs(b.total().value - r.iteration_time.value) <= tolerance,
                      "a stage's parts add up to the iteration time");
        const report::HiddenRecompute& h = b.hidden_in;
        for (const Seconds part : {h.tensor_parallel, h.data_parallel, h.pipeline_warmup, h.pipeline_steady,
                                   h.pipeline_cooldown}) {
            fuzz::require(part.value >= 0.0 && std::isfinite(part.value),
                          "every hidden-recompute part is >= 0");
        }
        fuzz::require(std::abs(h.total().value - b.hidden_recompute.value) <= tolerance,
                      "the hidden recomputation's waits add up to the hidden total");
        fuzz::require(s.peak_memory_bytes.value > 0 && s.peak_memory_bytes <= r.peak_memory_bytes,
                      "a stage's peak is positive and at most the report's peak");
        fuzz::require(s.activation_bytes.value >= 0 && s.overflow_bytes.value >= 0, "memory parts are >= 0");
        fits = fits && s.overflow_bytes.value == 0;
    }
    fuzz::require(fits == r.fits_in_memory, "fits_in_memory agrees with the stages' overflow");
    fuzz::require(r.mfu > 0.0 && r.mfu <= 1.0, "0 < MFU <= 1");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    const bool extreme = in.ConsumeIntegralInRange(0, 7) == 0;
    const json doc = extreme ? extreme_scenario_from(in) : scenario_from(in);
    // To see what an input decodes to when replaying a finding: TRAINSIM_FUZZ_PRINT=1 simulation_fuzzer FILE.
    static const bool print = std::getenv("TRAINSIM_FUZZ_PRINT") != nullptr;
    if (print) {
        std::fprintf(stderr, "%s\n", doc.dump().c_str());
    }
    const bool compare_unfolded = in.ConsumeBool();
    config::Scenario sc;
    try {
        sc = config::parse_scenario(doc.dump(), "fuzz");
    } catch (const InputError& e) {
        fuzz::require_one_line(e.what());
        return 0;  // a combination the generator does not rule out; not what this target is after
    }
    if (extreme) {
        try {
            check(simulate(sc, program::Fold{}));
        } catch (const InputError& e) {
            fuzz::require_one_line(e.what());
        } catch (const engine::SimulationError& e) {
            fuzz::require_one_line(e.what());
        }
        return 0;
    }
    try {
        const Outcome folded = simulate(sc, program::Fold{});
        check(folded);
        if (compare_unfolded && sc.num_gpus() <= kMaxUnfoldedGpus &&
            sc.num_gpus() > folded.report.simulated_gpus &&
            sc.training.recompute_granularity != config::RecomputeGranularity::Overlapped) {
            const Outcome unfolded = simulate(sc, program::Fold{false, false});
            check(unfolded);
            fuzz::require(unfolded.run.makespan == folded.run.makespan,
                          "folded and unfolded iteration times agree");
            fuzz::require(unfolded.report.peak_memory_bytes == folded.report.peak_memory_bytes,
                          "folded and unfolded peak memory agree");
        }
    } catch (const InputError& e) {
        fuzz::require_one_line(e.what());  // e.g. a layout the profile's nodes cannot hold
    }
    // SimulationError (a deadlock or the event budget, on a valid small scenario) escapes: a finding.
    return 0;
}
