#include "sim/report/iteration_report.h"

#include "sim/engine/fingerprint.h"
#include "sim/memory/activation_timeline.h"
#include "sim/memory/static_memory.h"
#include "sim/workload/model_flops.h"

namespace trainsim::report {

namespace {

Breakdown mean_of(const std::vector<StageReport>& stages) {
    Breakdown m;
    if (stages.empty()) {
        return m;
    }
    const double n = static_cast<double>(stages.size());
    for (const StageReport& s : stages) {
        m.compute += s.time.compute * (1.0 / n);
        m.recompute += s.time.recompute * (1.0 / n);
        m.optimizer += s.time.optimizer * (1.0 / n);
        m.param_copy += s.time.param_copy * (1.0 / n);
        m.grad_zeroing += s.time.grad_zeroing * (1.0 / n);
        m.exposed_tp_comm += s.time.exposed_tp_comm * (1.0 / n);
        m.exposed_pp_comm += s.time.exposed_pp_comm * (1.0 / n);
        m.exposed_dp_comm += s.time.exposed_dp_comm * (1.0 / n);
        m.exposed_cp_comm += s.time.exposed_cp_comm * (1.0 / n);
        m.exposed_ep_comm += s.time.exposed_ep_comm * (1.0 / n);
        m.bubble += s.time.bubble * (1.0 / n);
        m.host += s.time.host * (1.0 / n);
        m.variability += s.time.variability * (1.0 / n);
        m.kernel_jitter += s.time.kernel_jitter * (1.0 / n);
        m.overlap_contention += s.time.overlap_contention * (1.0 / n);
        m.hidden_recompute += s.time.hidden_recompute * (1.0 / n);
        HiddenRecompute& h = m.hidden_in;
        const HiddenRecompute& sh = s.time.hidden_in;
        h.tensor_parallel += sh.tensor_parallel * (1.0 / n);
        h.data_parallel += sh.data_parallel * (1.0 / n);
        h.pipeline_warmup += sh.pipeline_warmup * (1.0 / n);
        h.pipeline_steady += sh.pipeline_steady * (1.0 / n);
        h.pipeline_cooldown += sh.pipeline_cooldown * (1.0 / n);
    }
    return m;
}

}  // namespace

IterationReport make_iteration_report(const config::Scenario& sc, const cost::CostModel& cost,
                                      const program::IterationProgram& prog, const engine::RunResult& run) {
    IterationReport r;
    r.name = sc.name;
    r.profile = cost.profile().name;
    r.schedule = config::to_string(sc.resolved_schedule());
    r.iteration_time = to_seconds(run.makespan);
    r.num_gpus = sc.num_gpus();
    r.simulated_gpus = static_cast<std::int64_t>(prog.gpus.size());
    r.has_context_parallel = sc.parallelism.context_parallel_size > 1;
    // The experts exchange tokens with EP, or with expert TP alone (its all-gather and reduce-scatter).
    r.has_expert_parallel =
        sc.model.moe &&
        sc.parallelism.expert_model_parallel_size * sc.parallelism.expert_tensor_parallel() > 1;

    r.num_microbatches = sc.num_microbatches();
    r.events = run.events;
    r.fingerprint = engine::fingerprint_hex(run);
    r.model_flops = workload::model_flops_per_iteration(sc);
    if (workload::hardware_flops_formula_applies(sc)) {
        r.hardware_flops = workload::hardware_flops_per_iteration(sc);
    } else {
        // Every GEMM the simulated GPUs ran (with recompute_modules, the recomputed ones on top of the
        // model FLOPs), times the identical GPUs folded into each.
        const bool modules = sc.training.recompute_granularity == config::RecomputeGranularity::Selective;
        double executed = 0;
        for (const program::TaskInfo& info : prog.info) {
            if (!modules || info.category == program::TaskCategory::Recompute) {
                executed += info.flops.value;
            }
        }
        r.hardware_flops =
            Flops{(modules ? r.model_flops.value : 0.0) +
                  executed * static_cast<double>(r.num_gpus) / static_cast<double>(r.simulated_gpus)};
    }
    r.model_flops_convention = workload::model_flops_convention(sc);
    r.hardware_flops_convention = workload::hardware_flops_convention(sc);
    const double peak = cost.profile().peak_tflops * 1e12;
    const double gpu_seconds = r.iteration_time.value * static_cast<double>(r.num_gpus);
    r.mfu = r.model_flops.value / (gpu_seconds * peak);
    r.hfu = r.hardware_flops.value / (gpu_seconds * peak);
    r.tflops_per_gpu = r.model_flops.value / gpu_seconds / 1e12;
    if (cost.profile().has_fp8()) {
        r.mfu_fp8_peak = r.model_flops.value / (gpu_seconds * cost.profile().fp8_peak_tflops * 1e12);
    }
    r.precision = "bf16";
    if (const auto fp8 = sc.training.fp8()) {
        r.precision = std::string("fp8 (") + config::to_string(*sc.training.fp8_format) + ", " +
                      config::to_string(*fp8) + "; attention, norms, embedding and output layer in bf16)";
        r.fp8_time = fp8_time(prog, cost.profile().fp8_split_accumulator_slowdown);
    }
    if (sc.parallelism.context_parallel_size > 1 && sc.parallelism.cp_comm_type == config::CpCommType::P2p) {
        r.cp_ring_kernels = cp_ring_kernel_time(prog);
    }
    r.embedding_wgrad = embedding_wgrad_time(prog);
    r.tokens_per_s =
        static_cast<double>(sc.training.global_batch_size * sc.model.seq_length) / r.iteration_time.value;

    const std::vector<memory::ActivationTimeline> activation = memory::activation_timelines(prog, run);
    const std::vector<Breakdown> time = breakdowns(prog, run);
    r.memory_visible_bytes = cost.profile().memory_visible;
    r.memory_reserved_bytes = cost.profile().memory_reserved;
    r.memory_capacity_bytes = r.memory_visible_bytes - r.memory_reserved_bytes;
    // One representative GPU per stage: the first simulated one (tp 0, dp 0); folded peers are identical.
    for (std::size_t g = 0; g < prog.gpus.size(); ++g) {
        const parallel::Coordinates& at = prog.gpus[g].coordinates;
        const Bytes peak_bytes = memory::static_bytes(sc, at.pp) + activation[g].peak.peak;
        r.peak_memory_bytes = std::max(r.peak_memory_bytes, peak_bytes);
        if (at.tp != 0 || at.dp != 0) {
            continue;
        }
        StageReport s;
        s.stage = at.pp;
        s.layers = sc.stage_num_layers(at.pp);
        s.time = time[g];
        s.static_bytes = memory::static_bytes(sc, at.pp);
        s.activation_bytes = activation[g].peak.peak;
        s.peak_memory_bytes = peak_bytes;
        s.microbatches_in_flight = activation[g].peak.microbatches_in_flight;
        r.stages.push_back(s);
    }
    r.fits_in_memory = r.peak_memory_bytes <= r.memory_capacity_bytes;
    for (StageReport& s : r.stages) {
        s.overflow_bytes = std::max(Bytes{0}, s.peak_memory_bytes - r.memory_capacity_bytes);
    }
    r.breakdown = mean_of(r.stages);
    r.network = make_network_report(prog, run);
    r.warnings = prog.warnings;
    r.warnings.insert(r.warnings.end(), cost.warnings().begin(), cost.warnings().end());
    return r;
}

}  // namespace trainsim::report
