// The answer to "how long is an iteration, does it fit, where does the time go": metrics computed
// from the simulated timeline (DESIGN.md §5).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/cost/cost_model.h"
#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"
#include "sim/report/cp_ring_time.h"
#include "sim/report/embedding_wgrad_time.h"
#include "sim/report/fp8_time.h"
#include "sim/report/network_report.h"

namespace trainsim::report {

/// Where overlapped recomputation ran: in which kind of wait of the compute stream (issue 6, "windows").
/// Pipeline waits (bubble and exposed pipeline transfers) are split by the GPU's schedule phase: before
/// its first backward (warm-up), after its last forward (cool-down), or in between (steady state).
struct HiddenRecompute {
    Seconds tensor_parallel;  // waiting on a model-parallel collective (tensor, context or expert parallel)
    Seconds data_parallel;    // waiting on a data-parallel reduction (or embedding / gradient-norm one)
    Seconds pipeline_warmup, pipeline_steady, pipeline_cooldown;
    [[nodiscard]] Seconds total() const {
        return tensor_parallel + data_parallel + pipeline_warmup + pipeline_steady + pipeline_cooldown;
    }
};

/// Where one GPU's iteration goes, read off its compute stream: busy time by kind, and each idle gap
/// charged to what the compute stream waited for. The parts add up to the iteration time.
struct Breakdown {
    Seconds compute, recompute, optimizer;
    Seconds exposed_tp_comm, exposed_pp_comm, exposed_dp_comm;
    Seconds exposed_cp_comm;  // context parallelism's exchanges (counted with TP before they had a line)
    Seconds exposed_ep_comm;  // the MoE token dispatch and combine
    Seconds bubble;           // waiting for another stage's work (pipeline fill/drain, stragglers)
    /// The compute stream idle while the CPU launched the next kernels after a synchronisation
    /// (parallelism.batch_p2p_sync with the profile's host costs).
    Seconds host;
    /// The optimizer's extra memory passes, out of `optimizer`: the fp32 → 16-bit parameter copy after
    /// the step (training.optimizer_param_copy) and the gradient buffer's memset at the start of the
    /// iteration (training.zero_grad_buffer).
    Seconds param_copy, grad_zeroing;
    /// The part of this GPU's kernel time that is its slowdown from variability.mode (its kernels ran
    /// compute_slowdown times their price); taken out of compute, recompute and optimizer.
    Seconds variability;
    /// What per-launch kernel jitter (variability.kernel_jitter) added to this GPU's kernel time, net
    /// (negative when its draws came out fast on the whole); taken out of compute, recompute and
    /// optimizer. The waits it causes on other GPUs are in their bubble and exposed communication.
    Seconds kernel_jitter;
    /// What asynchronous collectives running beside kernels added to those kernels' times (the SMs and
    /// HBM bandwidth their NCCL kernels hold: hardware.collective_contention); taken out of compute,
    /// recompute and optimizer, each the part its own kernels lost.
    Seconds overlap_contention;
    /// Overlapped recomputation that ran while the compute stream waited anyway: it costs no time and
    /// is not part of total(). `recompute` holds what stayed exposed (inline, or waited for).
    Seconds hidden_recompute;
    HiddenRecompute hidden_in;  // hidden_recompute by the wait it filled; adds up to hidden_recompute
    [[nodiscard]] Seconds exposed_comm() const {
        return exposed_tp_comm + exposed_pp_comm + exposed_dp_comm + exposed_cp_comm + exposed_ep_comm;
    }
    [[nodiscard]] Seconds busy() const {
        return compute + recompute + optimizer + param_copy + grad_zeroing + variability + kernel_jitter +
               overlap_contention;
    }
    [[nodiscard]] Seconds total() const { return busy() + exposed_comm() + bubble + host; }
};

struct StageReport {
    std::int64_t stage = 0;
    std::int64_t layers = 0;  // transformer layers on this pipeline rank (all its chunks)
    Breakdown time;
    Bytes static_bytes{0};      // weights, gradients, optimizer state
    Bytes activation_bytes{0};  // activations held at the peak
    Bytes peak_memory_bytes{0};
    Bytes overflow_bytes{0};                  // how far the peak exceeds the usable memory (0 when it fits)
    std::int64_t microbatches_in_flight = 0;  // at the peak
};

struct IterationReport {
    std::string name;
    std::string profile;
    std::string schedule;
    Seconds iteration_time;
    double mfu = 0.0;  // against the profile's BF16 peak (gpu.peak_tflops), as NeMo reports FP8 runs too
    double hfu = 0.0;
    std::string precision;            // "bf16", or "fp8" with its format and recipe
    double mfu_fp8_peak = 0.0;        // the same model FLOPs against gpu.fp8_peak_tflops; 0 without FP8 peak
    std::optional<Fp8Time> fp8_time;  // with training.fp8_format: where FP8's GEMMs and kernels went
    // With context parallelism over the p2p ring: TE's kernels around the ring steps (cp_ring_time.h).
    std::optional<Seconds> cp_ring_kernels;
    // The embedding's dense weight gradient: its zero-fill and its add into main_grad
    // (embedding_wgrad_time.h), every micro-batch.
    Seconds embedding_wgrad{0.0};
    double tflops_per_gpu = 0.0;
    double tokens_per_s = 0.0;
    Flops model_flops;
    Flops hardware_flops;
    std::string model_flops_convention;
    std::string hardware_flops_convention;
    Bytes peak_memory_bytes{0};
    Bytes memory_capacity_bytes{0};  // visible to CUDA minus the profile's reservation
    Bytes memory_visible_bytes{0};
    Bytes memory_reserved_bytes{0};
    bool fits_in_memory = true;
    // Whether the text report gives context- and expert-parallel communication their own lines.
    bool has_context_parallel = false;
    bool has_expert_parallel = false;
    std::vector<StageReport> stages;
    Breakdown breakdown;  // mean over pipeline stages
    std::int64_t num_gpus = 0;
    std::int64_t simulated_gpus = 0;
    std::int64_t num_microbatches = 0;
    std::uint64_t events = 0;
    std::string fingerprint;  // of every task's timing: changes whenever behaviour does
    // Overlapped recomputation: the plan a scheduler chose, and what choosing it cost.
    std::string recompute_plan;
    std::string recompute_scheduler;
    std::int64_t recompute_plans_simulated = 0;
    Seconds recompute_search_time;
    /// With variability.kernel_jitter: this iteration's time minus the same run's without the jitter
    /// (same seed, same per-GPU slowdowns), i.e. what this seed's kernel jitter cost the iteration.
    std::optional<Seconds> kernel_jitter_cost;
    NetworkReport network;
    std::vector<std::string> warnings;
};

/// Breakdown of every simulated GPU over [0, makespan], indexed like IterationProgram::gpus.
[[nodiscard]] std::vector<Breakdown> breakdowns(const program::IterationProgram& program,
                                                const engine::RunResult& run);

[[nodiscard]] IterationReport make_iteration_report(const config::Scenario& scenario,
                                                    const cost::CostModel& cost,
                                                    const program::IterationProgram& program,
                                                    const engine::RunResult& run);

}  // namespace trainsim::report
