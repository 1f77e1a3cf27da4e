#include "sim/sweep/sweep_table.h"

#include <cstdio>

#include "sim/sweep/csv.h"

namespace trainsim::sweep {
namespace {

std::string number(const char* format, double value) {
    char text[64];
    std::snprintf(text, sizeof text, format, value);
    return text;
}

// The same precision as `trainsim run --format csv`: nanoseconds for times, six digits for ratios.
std::vector<std::string> metric_cells(const report::IterationReport& r) {
    const report::Breakdown& b = r.breakdown;
    std::string warnings;
    for (const std::string& w : r.warnings) {
        warnings += (warnings.empty() ? "" : "; ") + w;
    }
    return {number("%.9g", r.iteration_time.value),
            number("%.6g", r.mfu),
            number("%.6g", r.hfu),
            number("%.6g", r.tflops_per_gpu),
            number("%.6g", r.tokens_per_s),
            std::to_string(r.peak_memory_bytes.value),
            r.fits_in_memory ? "true" : "false",
            number("%.9g", b.compute.value),
            number("%.9g", b.recompute.value),
            number("%.9g", b.exposed_tp_comm.value),
            number("%.9g", b.exposed_pp_comm.value),
            number("%.9g", b.exposed_dp_comm.value),
            number("%.9g", b.bubble.value),
            number("%.9g", b.optimizer.value),
            number("%.9g", b.host.value),
            number("%.9g", b.variability.value),
            number("%.9g", b.kernel_jitter.value),
            number("%.9g", b.param_copy.value),
            number("%.9g", b.grad_zeroing.value),
            number("%.9g", b.exposed_cp_comm.value),
            number("%.9g", b.exposed_ep_comm.value),
            number("%.9g", b.overlap_contention.value),
            std::to_string(r.num_gpus),
            std::to_string(r.num_microbatches),
            r.schedule,
            warnings,
            ""};
}

}  // namespace

const std::vector<std::string>& metric_columns() {
    // `resolved_schedule`, not `schedule`: that is a scenario key, and so may be an axis.
    static const std::vector<std::string> columns{"iteration_time_s",
                                                  "mfu",
                                                  "hfu",
                                                  "tflops_per_gpu",
                                                  "tokens_per_s",
                                                  "peak_memory_bytes",
                                                  "fits_in_memory",
                                                  "compute_s",
                                                  "recompute_s",
                                                  "exposed_tp_comm_s",
                                                  "exposed_pp_comm_s",
                                                  "exposed_dp_comm_s",
                                                  "bubble_s",
                                                  "optimizer_s",
                                                  "host_s",
                                                  "variability_s",
                                                  "kernel_jitter_s",
                                                  "param_copy_s",
                                                  "grad_zeroing_s",
                                                  "exposed_cp_comm_s",
                                                  "exposed_ep_comm_s",
                                                  "overlap_contention_s",
                                                  "num_gpus",
                                                  "num_microbatches",
                                                  "resolved_schedule",
                                                  "warnings",
                                                  "error"};
    return columns;
}

std::string header_line(const SweepSpec& spec) {
    std::string line;
    for (const Axis& a : spec.axes) {
        line += csv_cell(a.key) + ",";
    }
    for (std::size_t i = 0; i < metric_columns().size(); ++i) {
        line += (i ? "," : "") + metric_columns()[i];
    }
    return line + "\n";
}

std::string row_line(const std::vector<std::string>& cells, const PointOutcome& outcome) {
    std::string line;
    for (const std::string& c : cells) {
        line += csv_cell(c) + ",";
    }
    std::vector<std::string> metrics =
        outcome.report ? metric_cells(*outcome.report) : std::vector<std::string>(metric_columns().size());
    metrics.back() = outcome.report ? "" : outcome.error;
    for (std::size_t i = 0; i < metrics.size(); ++i) {
        line += (i ? "," : "") + csv_cell(metrics[i]);
    }
    return line + "\n";
}

}  // namespace trainsim::sweep
