#include "sim/report/report_text.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "sim/core/units.h"

namespace trainsim::report {
namespace {

std::string fmt(const char* format, double v) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, v);
    return buffer;
}

std::string gib(Bytes b) {
    return fmt("%.2f GiB", to_gib(b));
}
std::string ms(Seconds s) {
    return fmt("%.3f ms", s.value * 1e3);
}

void breakdown_line(std::ostream& out, const char* what, Seconds part, Seconds total) {
    out << "    " << what << std::string(22 - std::string(what).size(), ' ')
        << fmt("%12.3f ms", part.value * 1e3)
        << fmt("  %5.1f %%", total.value > 0 ? 100.0 * part.value / total.value : 0.0) << "\n";
}

}  // namespace

void write_text(std::ostream& out, const IterationReport& r) {
    out << "trainsim run: " << r.name << "  (profile " << r.profile << ", schedule " << r.schedule << ")\n";
    out << "  GPUs " << r.num_gpus << " (simulated " << r.simulated_gpus << "), micro-batches per pipeline "
        << r.num_microbatches << "\n";
    out << "  iteration time   " << fmt("%.4f s", r.iteration_time.value) << "\n";
    if (r.kernel_jitter_cost) {
        out << "  kernel jitter    " << fmt("%+.4f s", r.kernel_jitter_cost->value)
            << "   (this iteration minus the same run without per-launch jitter)\n";
    }
    out << "  MFU              " << fmt("%.1f %%", 100.0 * r.mfu) << "   (model FLOPs, "
        << r.model_flops_convention << ")\n";
    if (r.mfu_fp8_peak > 0.0) {
        out << "  MFU vs FP8 peak  " << fmt("%.1f %%", 100.0 * r.mfu_fp8_peak)
            << "   (the same model FLOPs against the profile's dense FP8 peak; MFU above is against BF16)\n";
    }
    out << "  HFU              " << fmt("%.1f %%", 100.0 * r.hfu) << "   (" << r.hardware_flops_convention
        << ")\n";
    if (r.fp8_time) {
        out << "  precision        " << r.precision << "\n";
    }
    // Below 1 TFLOP/s (a CPU-fitted profile) one decimal would print 0.0 beside a large MFU: keep 3 digits.
    out << "  per-GPU          "
        << fmt(r.tflops_per_gpu >= 1.0 ? "%.1f TFLOP/s" : "%.3g TFLOP/s", r.tflops_per_gpu) << "\n";
    out << "  throughput       "
        << fmt(r.tokens_per_s >= 10.0 ? "%.0f tokens/s" : "%.3g tokens/s", r.tokens_per_s) << "\n";
    out << "  peak memory      " << gib(r.peak_memory_bytes) << " of " << gib(r.memory_capacity_bytes)
        << " usable: " << (r.fits_in_memory ? "fits" : "DOES NOT FIT") << "\n";
    out << "                   (usable = " << gib(r.memory_visible_bytes) << " CUDA sees − "
        << gib(r.memory_reserved_bytes)
        << " reserved for the CUDA context, NCCL buffers and fragmentation)\n";
    for (const StageReport& s : r.stages) {
        if (s.overflow_bytes.value > 0) {
            out << "  stage " << s.stage << " is over by " << gib(s.overflow_bytes) << " ("
                << s.overflow_bytes.value << " bytes)\n";
        }
    }
    if (!r.recompute_scheduler.empty()) {
        out << "  recompute plan   " << r.recompute_plan << "\n";
        out << "                   (" << r.recompute_scheduler << " scheduler, "
            << r.recompute_plans_simulated << " plans simulated in "
            << fmt("%.2f s", r.recompute_search_time.value) << ")\n";
    }
    out << "  where the time goes (mean over pipeline stages):\n";
    const Breakdown& b = r.breakdown;
    const Seconds total = r.iteration_time;
    breakdown_line(out, "compute", b.compute, total);
    breakdown_line(out, "recompute", b.recompute, total);
    breakdown_line(out, "exposed TP comm", b.exposed_tp_comm, total);
    breakdown_line(out, "exposed PP comm", b.exposed_pp_comm, total);
    breakdown_line(out, "exposed DP comm", b.exposed_dp_comm, total);
    if (r.has_context_parallel) {
        breakdown_line(out, "exposed CP comm", b.exposed_cp_comm, total);
    }
    if (r.has_expert_parallel) {
        breakdown_line(out, "exposed EP comm", b.exposed_ep_comm, total);
    }
    breakdown_line(out, "pipeline bubble", b.bubble, total);
    breakdown_line(out, "optimizer", b.optimizer, total);
    if (b.param_copy.value != 0.0) {
        breakdown_line(out, "fp32->bf16 param copy", b.param_copy, total);
    }
    if (b.grad_zeroing.value != 0.0) {
        breakdown_line(out, "grad buffer zeroing", b.grad_zeroing, total);
    }
    if (b.host.value != 0.0) {
        breakdown_line(out, "host (CPU-bound)", b.host, total);
    }
    if (b.variability.value != 0.0) {
        breakdown_line(out, "GPU variability", b.variability, total);
    }
    if (b.kernel_jitter.value != 0.0) {
        breakdown_line(out, "kernel jitter", b.kernel_jitter, total);
    }
    if (b.overlap_contention.value != 0.0) {
        breakdown_line(out, "overlap contention", b.overlap_contention, total);
    }
    if (b.hidden_recompute.value > 0) {
        out << "    (overlapped recompute hidden in waits: " << ms(b.hidden_recompute)
            << "; exposed: " << ms(b.recompute) << ")\n";
        const HiddenRecompute& h = b.hidden_in;
        out << "    (hidden in: pipeline warm-up " << ms(h.pipeline_warmup) << ", steady state "
            << ms(h.pipeline_steady) << ", cool-down " << ms(h.pipeline_cooldown) << "; TP collectives "
            << ms(h.tensor_parallel) << "; DP reduction " << ms(h.data_parallel) << ")\n";
    }
    if (r.fp8_time) {
        out << "    (of the compute: FP8 GEMMs " << ms(r.fp8_time->fp8_gemm)
            << " (of which split accumulator " << ms(r.fp8_time->split_accumulator) << "), BF16 GEMMs "
            << ms(r.fp8_time->bf16_gemm) << ", FP8 cast/transpose/amax kernels " << ms(r.fp8_time->overhead)
            << ")\n";
    }
    if (r.cp_ring_kernels) {
        out << "    (of the compute: TE's context-parallel ring kernels " << ms(*r.cp_ring_kernels)
            << ": K/V packing, half-chunk copies, output merge, dQ/dKV accumulation)\n";
    }
    if (r.embedding_wgrad.value > 0.0) {
        out << "    (of the compute: the embedding's dense weight gradient " << ms(r.embedding_wgrad)
            << ": zero-filled every micro-batch and added into main_grad)\n";
    }
    if (r.network.model == "flow") {
        const NetworkReport& n = r.network;
        out << "  network (flow model): contention added " << ms(n.contention())
            << " of communication per GPU (TP " << ms(n.contention_tp) << ", CP " << ms(n.contention_cp)
            << ", EP " << ms(n.contention_ep) << ", PP " << ms(n.contention_pp) << ", DP "
            << ms(n.contention_dp) << "; the exposed part is in the lines above)\n";
        for (std::size_t i = 0; i < std::min<std::size_t>(3, n.busiest_links.size()); ++i) {
            out << "    busiest link " << n.busiest_links[i].link << ": "
                << fmt("%.1f %%", 100.0 * n.busiest_links[i].utilization) << " utilised\n";
        }
    }
    out << "  per stage:\n";
    out << "    stage  layers      busy ms    bubble ms   exp.comm ms  recompute ms  weights+optim   "
           "activations     "
           " peak mem  "
           "in-flight\n";
    for (const StageReport& s : r.stages) {
        char line[240];
        std::snprintf(
            line, sizeof line, "    %5lld %7lld %12.3f %12.3f %13.3f %13.3f %14s %13s %13s %10lld%s\n",
            static_cast<long long>(s.stage), static_cast<long long>(s.layers), s.time.busy().value * 1e3,
            s.time.bubble.value * 1e3, s.time.exposed_comm().value * 1e3, s.time.recompute.value * 1e3,
            gib(s.static_bytes).c_str(), gib(s.activation_bytes).c_str(), gib(s.peak_memory_bytes).c_str(),
            static_cast<long long>(s.microbatches_in_flight), s.overflow_bytes.value > 0 ? "  over" : "");
        out << line;
    }
    for (const std::string& w : r.warnings) {
        out << "  warning: " << w << "\n";
    }
}

void write_text(std::ostream& out, const LayerReport& r) {
    out << "trainsim layer: " << r.name << " (one transformer layer, one GPU, one micro-batch)\n";
    out << "  forward          " << ms(r.forward) << "\n";
    out << "  backward         " << ms(r.backward) << "  (includes recompute)\n";
    out << "  recompute        " << ms(r.recompute) << "\n";
    out << "  activations kept " << fmt("%.1f MiB", static_cast<double>(r.activation_bytes.value) / 1048576.0)
        << "\n";
    out << "  ops:\n    phase     stream      start ms   duration ms  category   name\n";
    for (const LayerOpTiming& op : r.ops) {
        char line[240];
        std::snprintf(line, sizeof line, "    %-9s %-10s %9.3f %12.3f  %-10s %s\n", op.phase.c_str(),
                      op.stream.c_str(), op.start.value * 1e3, op.duration.value * 1e3, op.category.c_str(),
                      op.name.c_str());
        out << line;
    }
    for (const std::string& w : r.warnings) {
        out << "  warning: " << w << "\n";
    }
}

void write_csv(std::ostream& out, const IterationReport& r) {
    out << "name,profile,schedule,num_gpus,num_microbatches,iteration_time_s,mfu,hfu,tflops_per_gpu,tokens_"
           "per_s,"
           "peak_memory_bytes,fits_in_memory,compute_s,recompute_s,exposed_tp_comm_s,exposed_pp_comm_s,"
           "exposed_dp_comm_s,bubble_s,optimizer_s,host_s,variability_s,kernel_jitter_s,param_copy_s,"
           "grad_zeroing_s,exposed_cp_comm_s,exposed_ep_comm_s,overlap_contention_s\n";
    const Breakdown& b = r.breakdown;
    out << r.name << "," << r.profile << "," << r.schedule << "," << r.num_gpus << "," << r.num_microbatches
        << "," << fmt("%.9g", r.iteration_time.value) << "," << fmt("%.6g", r.mfu) << ","
        << fmt("%.6g", r.hfu) << "," << fmt("%.6g", r.tflops_per_gpu) << "," << fmt("%.6g", r.tokens_per_s)
        << "," << r.peak_memory_bytes.value << "," << (r.fits_in_memory ? "true" : "false") << ","
        << fmt("%.9g", b.compute.value) << "," << fmt("%.9g", b.recompute.value) << ","
        << fmt("%.9g", b.exposed_tp_comm.value) << "," << fmt("%.9g", b.exposed_pp_comm.value) << ","
        << fmt("%.9g", b.exposed_dp_comm.value) << "," << fmt("%.9g", b.bubble.value) << ","
        << fmt("%.9g", b.optimizer.value) << "," << fmt("%.9g", b.host.value) << ","
        << fmt("%.9g", b.variability.value) << "," << fmt("%.9g", b.kernel_jitter.value) << ","
        << fmt("%.9g", b.param_copy.value) << "," << fmt("%.9g", b.grad_zeroing.value) << ","
        << fmt("%.9g", b.exposed_cp_comm.value) << "," << fmt("%.9g", b.exposed_ep_comm.value) << ","
        << fmt("%.9g", b.overlap_contention.value) << "\n";
}

void write_csv(std::ostream& out, const LayerReport& r) {
    out << "name,phase,category,stream,start_s,duration_s,flops\n";
    for (const LayerOpTiming& op : r.ops) {
        out << op.name << "," << op.phase << "," << op.category << "," << op.stream << ","
            << fmt("%.9g", op.start.value) << "," << fmt("%.9g", op.duration.value) << ","
            << fmt("%.9g", op.flops.value) << "\n";
    }
}

}  // namespace trainsim::report
