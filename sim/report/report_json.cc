#include "sim/report/report_json.h"

namespace trainsim::report {
namespace {

nlohmann::ordered_json breakdown_json(const Breakdown& b) {
    nlohmann::ordered_json j;
    j["compute_s"] = b.compute.value;
    j["recompute_s"] = b.recompute.value;
    j["hidden_recompute_s"] = b.hidden_recompute.value;
    j["hidden_recompute_in"] = to_json(b.hidden_in);
    j["exposed_tp_comm_s"] = b.exposed_tp_comm.value;
    j["exposed_pp_comm_s"] = b.exposed_pp_comm.value;
    j["exposed_dp_comm_s"] = b.exposed_dp_comm.value;
    j["exposed_cp_comm_s"] = b.exposed_cp_comm.value;
    j["exposed_ep_comm_s"] = b.exposed_ep_comm.value;
    j["bubble_s"] = b.bubble.value;
    j["optimizer_s"] = b.optimizer.value;
    j["param_copy_s"] = b.param_copy.value;
    j["grad_zeroing_s"] = b.grad_zeroing.value;
    j["host_s"] = b.host.value;
    j["variability_s"] = b.variability.value;
    j["kernel_jitter_s"] = b.kernel_jitter.value;
    j["overlap_contention_s"] = b.overlap_contention.value;
    return j;
}

}  // namespace

nlohmann::ordered_json to_json(const HiddenRecompute& h) {
    return {{"tensor_parallel_wait_s", h.tensor_parallel.value},
            {"data_parallel_wait_s", h.data_parallel.value},
            {"pipeline_warmup_s", h.pipeline_warmup.value},
            {"pipeline_steady_s", h.pipeline_steady.value},
            {"pipeline_cooldown_s", h.pipeline_cooldown.value}};
}

nlohmann::ordered_json to_json(const IterationReport& r) {
    nlohmann::ordered_json j;
    j["name"] = r.name;
    j["profile"] = r.profile;
    j["schedule"] = r.schedule;
    j["iteration_time_s"] = r.iteration_time.value;
    if (r.kernel_jitter_cost) {
        j["kernel_jitter_cost_s"] = r.kernel_jitter_cost->value;
    }
    j["mfu"] = r.mfu;
    j["hfu"] = r.hfu;
    j["precision"] = r.precision;
    // MFU per precision: `mfu` against the BF16 peak (NeMo's convention for FP8 runs too), this one against
    // the FP8 peak; null where the profile has no FP8 tensor cores.
    j["mfu_fp8_peak"] =
        r.mfu_fp8_peak > 0.0 ? nlohmann::ordered_json(r.mfu_fp8_peak) : nlohmann::ordered_json();
    j["tflops_per_gpu"] = r.tflops_per_gpu;
    j["tokens_per_s"] = r.tokens_per_s;
    j["peak_memory_bytes"] = r.peak_memory_bytes.value;
    j["memory_capacity_bytes"] = r.memory_capacity_bytes.value;
    j["memory_visible_bytes"] = r.memory_visible_bytes.value;
    j["memory_reserved_bytes"] = r.memory_reserved_bytes.value;
    j["fits_in_memory"] = r.fits_in_memory;
    j["num_gpus"] = r.num_gpus;
    j["simulated_gpus"] = r.simulated_gpus;
    j["num_microbatches"] = r.num_microbatches;
    j["model_flops"] = r.model_flops.value;
    j["hardware_flops"] = r.hardware_flops.value;
    j["flops_convention"] =
        "GEMM FLOPs only (Megatron convention); model FLOPs: " + r.model_flops_convention +
        "; hardware: " + r.hardware_flops_convention;
    j["breakdown"] = breakdown_json(r.breakdown);
    j["breakdown"]["note"] = "mean over pipeline stages; each stage's parts add up to iteration_time_s";
    nlohmann::ordered_json stages = nlohmann::ordered_json::array();
    for (const StageReport& s : r.stages) {
        nlohmann::ordered_json js;
        js["stage"] = s.stage;
        js["num_layers"] = s.layers;
        js["peak_memory_bytes"] = s.peak_memory_bytes.value;
        js["static_bytes"] = s.static_bytes.value;
        js["activation_bytes"] = s.activation_bytes.value;
        js["overflow_bytes"] = s.overflow_bytes.value;
        js["fits_in_memory"] = s.overflow_bytes.value == 0;
        js["microbatches_in_flight"] = s.microbatches_in_flight;
        js["busy_s"] = s.time.busy().value;
        js["bubble_s"] = s.time.bubble.value;
        js["exposed_comm_s"] = s.time.exposed_comm().value;
        js["recompute_s"] = s.time.recompute.value;
        js["breakdown"] = breakdown_json(s.time);
        stages.push_back(js);
    }
    j["stages"] = stages;
    if (r.fp8_time) {
        j["fp8"] = {
            {"fp8_gemm_s", r.fp8_time->fp8_gemm.value},
            {"bf16_gemm_s", r.fp8_time->bf16_gemm.value},
            {"cast_transpose_amax_s", r.fp8_time->overhead.value},
            {"split_accumulator_s", r.fp8_time->split_accumulator.value},
            {"note",
             "busy time of one GPU per iteration, mean over stages, inside breakdown.compute_s and "
             "recompute_s: the linear layers' FP8 GEMMs, the GEMMs that stay BF16, and Transformer "
             "Engine's cast/transpose/amax kernels (ops named fp8.* in the trace); split_accumulator_s "
             "is the part of fp8_gemm_s the dgrad/wgrad GEMMs took beyond the fast-accumulation rate "
             "(TE promotes their partial sums to FP32: the profile's "
             "compute.gemm_fp8.split_accumulator_slowdown)"}};
    }
    if (r.cp_ring_kernels) {
        // Busy time of one GPU per iteration, mean over stages, inside breakdown.compute_s and recompute_s.
        j["cp_ring_kernels_s"] = r.cp_ring_kernels->value;
    }
    // Likewise: F.embedding's dense gradient zero-filled and added into main_grad every micro-batch.
    j["embedding_wgrad_s"] = r.embedding_wgrad.value;
    if (!r.recompute_scheduler.empty()) {
        j["recompute_plan"] = {{"scheduler", r.recompute_scheduler},
                               {"plan", r.recompute_plan},
                               {"plans_simulated", r.recompute_plans_simulated},
                               {"search_time_s", r.recompute_search_time.value}};
    }
    if (r.network.model == "flow") {
        nlohmann::ordered_json links = nlohmann::ordered_json::array();
        for (const LinkUse& l : r.network.busiest_links) {
            links.push_back(
                {{"link", l.link}, {"utilization", l.utilization}, {"carried_bytes", l.carried_bytes}});
        }
        j["network"] = {{"model", r.network.model},
                        {"contention_s", r.network.contention().value},
                        {"contention_tp_s", r.network.contention_tp.value},
                        {"contention_cp_s", r.network.contention_cp.value},
                        {"contention_ep_s", r.network.contention_ep.value},
                        {"contention_pp_s", r.network.contention_pp.value},
                        {"contention_dp_s", r.network.contention_dp.value},
                        {"contention_note",
                         "communication time beyond each transfer's time alone on the network, "
                         "per simulated GPU (mean); the breakdown says how much was exposed"},
                        {"busiest_links", links}};
    }
    j["events"] = r.events;
    j["fingerprint"] = r.fingerprint;
    j["warnings"] = r.warnings;
    return j;
}

nlohmann::ordered_json to_json(const LayerReport& r) {
    nlohmann::ordered_json j;
    j["name"] = r.name;
    j["forward_s"] = r.forward.value;
    j["backward_s"] = r.backward.value;
    j["recompute_s"] = r.recompute.value;
    j["activation_bytes"] = r.activation_bytes.value;
    nlohmann::ordered_json ops = nlohmann::ordered_json::array();
    for (const LayerOpTiming& op : r.ops) {
        ops.push_back({{"name", op.name},
                       {"phase", op.phase},
                       {"category", op.category},
                       {"stream", op.stream},
                       {"start_s", op.start.value},
                       {"duration_s", op.duration.value},
                       {"flops", op.flops.value}});
    }
    j["ops"] = ops;
    j["warnings"] = r.warnings;
    return j;
}

}  // namespace trainsim::report
