#include "calibrate/bench/progress.h"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <vector>

#include <benchmark/benchmark.h>

namespace trainsim::calibrate {

namespace {

constexpr std::int64_t kProbeDim = 128;                // a GEMM a CPU core runs in a millisecond
constexpr std::int64_t kProbeLargeDim = 4096;          // and a GPU's rate, where the plan goes that far
constexpr std::int64_t kProbeElements = 1 << 18;       // a copy past the caches' fastest levels
constexpr std::int64_t kProbeLargeElements = 1 << 26;  // and HBM's rate, where the plan goes that far
constexpr std::int64_t kProbeSmallBytes = 1 << 10;     // a collective's latency
constexpr std::int64_t kProbeLargeBytes = 1 << 20;     // and its bandwidth
constexpr double kAdaptiveOverrun = 1.5;               // Google Benchmark overshoots its minimum time
constexpr int kBarWidth = 30;

double probe(TimedOp& op) {
    (void)op.seconds_per_call(1);  // warm, as the harness does
    return op.seconds_per_call(3);
}

// One benchmark: a warm call when it is prepared, then per repetition a warm call and its timed
// iterations of `calls_per_iteration` calls, at least one iteration, or the minimum time (which the harness
// asks of the calls' summed time: harness.cc).
double case_seconds(double call_s, const Timing& t) {
    const double iteration_s = t.calls_per_iteration * call_s;
    const double per_repetition = t.iterations > 0 ? t.iterations * iteration_s
                                                   : std::max(t.min_time_s * kAdaptiveOverrun, iteration_s);
    return call_s + (per_repetition + call_s) * std::max(1, t.repetitions);
}

// A case's call time as a fixed cost plus a time per unit (FLOP, byte), from a small and a large probe;
// the large probe's own rate is what the estimate reports.
struct LinearTime {
    double fixed_s = 0.0;
    double per_unit_s = 0.0;
    double large_units = 0.0;
    double large_s = 0.0;
    [[nodiscard]] double at(double units) const { return fixed_s + units * per_unit_s; }
    [[nodiscard]] double large_rate() const { return large_units / large_s; }
};

// `time(size)` probes one case and gives its units and seconds. When the plan goes no further than the
// small case, that one probe is all rate.
template <typename Probe> LinearTime linear_time(const Probe& time, std::int64_t small, std::int64_t large) {
    const auto [small_units, small_s] = time(small);
    if (large <= small) {
        return {0.0, small_s / small_units, small_units, small_s};
    }
    const auto [large_units, large_s] = time(large);
    const double per_unit = std::max(0.0, (large_s - small_s) / (large_units - small_units));
    return {std::max(0.0, small_s - per_unit * small_units), per_unit, large_units, large_s};
}

std::string seconds_text(double s) {
    char buffer[32];
    if (s < 90.0) {
        std::snprintf(buffer, sizeof buffer, "%.0f s", s);
    } else {
        std::snprintf(buffer, sizeof buffer, "%.1f min", s / 60.0);
    }
    return buffer;
}

class ProgressReporter : public benchmark::BenchmarkReporter {
public:
    ProgressReporter(std::size_t total, double estimate_s, std::ostream& out, bool terminal)
        : total_(std::max<std::size_t>(total, 1)), estimate_s_(estimate_s), out_(out), terminal_(terminal) {}

    bool ReportContext(const Context&) override {
        start_ = std::chrono::steady_clock::now();
        return true;
    }

    void ReportRuns(const std::vector<Run>& runs) override {
        if (runs.empty()) {
            return;
        }
        ++done_;
        for (const Run& r : runs) {
            if (r.error_occurred) {
                failed_.push_back(r.benchmark_name() + ": " + r.error_message);
                break;
            }
        }
        const std::size_t step = std::max<std::size_t>(total_ / 10, 1);
        if (terminal_ || done_ % step == 0 || done_ == total_) {
            draw(runs.front().benchmark_name());
        }
    }

    void Finalize() override {
        if (terminal_) {
            out_ << "\n";
        }
        for (const std::string& f : failed_) {
            out_ << "trainsim-calibrate run: failed " << f << "\n";
        }
        out_.flush();
    }

private:
    void draw(const std::string& name) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        const double fraction = std::min(1.0, static_cast<double>(done_) / static_cast<double>(total_));
        // Past the first tenth the measured pace is the better guess; before it, the probe's estimate, or the
        // pace when the run is already behind the estimate (a loaded machine).
        const double pace = fraction > 0.0 ? elapsed / fraction - elapsed : estimate_s_;
        const double left = fraction >= 0.1 ? pace : std::max(estimate_s_ - elapsed, pace);
        const auto filled =
            static_cast<std::size_t>(std::clamp(static_cast<int>(fraction * kBarWidth), 0, kBarWidth));
        std::string line = "[" + std::string(filled, '=') + std::string(kBarWidth - filled, ' ') + "] " +
                           std::to_string(done_) + "/" + std::to_string(total_) + ", " +
                           seconds_text(elapsed) + ", about " + seconds_text(left) + " left";
        if (terminal_) {
            out_ << "\r" << line << "  " << name.substr(0, 40) << "\x1b[K";
        } else {
            out_ << "trainsim-calibrate run: " << line << "\n";
        }
        out_.flush();
    }

    std::size_t total_;
    double estimate_s_;
    std::ostream& out_;
    bool terminal_;
    std::size_t done_ = 0;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    std::vector<std::string> failed_;
};

}  // namespace

RunEstimate estimate_run(Backend& backend, const BenchPlan& plan, std::size_t benchmarks) {
    RunEstimate e;
    // Two probes each: a small case's time is the fixed cost (a GPU's launch and a library's host time, which
    // dominate there), a large one's the rate. The first H200 run probed one 128^3 GEMM (11 us: 0.37
    // TFLOP/s) and scaled it to 16384^3: 58 minutes estimated for a plan of 545 benchmarks that ran 1.6 s
    // each (about 15 min).
    std::int64_t large_dim = kProbeDim;
    for (const GemmCase& c : plan.gemms) {
        if (c.shape.m == c.shape.n && c.shape.n == c.shape.k && c.shape.batch == 1) {
            large_dim = std::max(large_dim, std::min(c.shape.m, kProbeLargeDim));
        }
    }
    const auto gemm_time = [&backend](std::int64_t d) {
        const GemmCase g{{d, d, d, 1}, cost::GemmClass::Dense};
        return std::pair{g.shape.flops().value, probe(*backend.gemm(g))};
    };
    const LinearTime gemm = linear_time(gemm_time, kProbeDim, large_dim);
    std::int64_t large_elements = kProbeElements;
    for (const KernelCase& k : plan.kernels) {
        large_elements = std::max(large_elements, std::min(k.elements, kProbeLargeElements));
    }
    const auto copy_time = [&backend](std::int64_t elements) {
        const KernelCase k{KernelKind::Copy, elements, 1};
        return std::pair{static_cast<double>(backend.bytes_moved(k)), probe(*backend.kernel(k))};
    };
    const LinearTime copy = linear_time(copy_time, kProbeElements, large_elements);
    double dense_s = 0.0;
    std::size_t dense = 0;
    for (const GemmCase& c : plan.gemms) {
        const double t = case_seconds(gemm.at(c.shape.flops().value), plan.timing);
        e.seconds += t;
        if (c.cls == cost::GemmClass::Dense) {
            dense_s += t;
            ++dense;
        }
    }
    // The harness's FP8 twins of the dense GEMMs (fast and split accumulator), timed as their BF16 GEMM:
    // FP8's higher rate against the adaptive minimum time, which dominates most cases.
    const std::size_t cases = plan.gemms.size() + plan.kernels.size() + plan.collectives.size();
    if (benchmarks > cases && dense > 0) {
        e.seconds += dense_s / static_cast<double>(dense) * static_cast<double>(benchmarks - cases);
    }
    for (const KernelCase& k : plan.kernels) {
        e.seconds += case_seconds(copy.at(static_cast<double>(backend.bytes_moved(k))), plan.timing);
    }
    char buffer[160];
    std::snprintf(buffer, sizeof buffer, "GEMM %.3g us + %.3g GFLOP/s, copy %.3g us + %.3g GB/s",
                  gemm.fixed_s * 1e6, gemm.large_rate() / 1e9, copy.fixed_s * 1e6, copy.large_rate() / 1e9);
    e.how = buffer;
    if (plan.collectives.empty()) {
        return e;
    }
    // Collectives: latency + size / bandwidth from two all-reduces over the largest group. Every rank of a
    // multi-process run reaches this point, so the probe's collectives match across processes.
    int ranks = 2;
    for (const CollectiveCase& c : plan.collectives) {
        ranks = std::max(ranks, c.ranks);
    }
    const std::int64_t unit = 4 * std::int64_t{ranks};  // whole 4-byte elements on every rank, as the plan
    const std::int64_t small = kProbeSmallBytes / unit * unit;
    const std::int64_t large = kProbeLargeBytes / unit * unit;
    const double small_s = probe(*backend.collective({cost::CollectiveKind::AllReduce, ranks, small}));
    const double large_s = probe(*backend.collective({cost::CollectiveKind::AllReduce, ranks, large}));
    const double per_byte = std::max(0.0, (large_s - small_s) / static_cast<double>(large - small));
    for (const CollectiveCase& c : plan.collectives) {
        e.seconds += case_seconds(small_s + per_byte * static_cast<double>(c.bytes), plan.collective_timing);
    }
    std::snprintf(buffer, sizeof buffer, ", all_reduce over %d: %.3g us at 1 KiB, %.3g us at 1 MiB", ranks,
                  small_s * 1e6, large_s * 1e6);
    e.how += buffer;
    return e;
}

std::unique_ptr<benchmark::BenchmarkReporter> make_progress_reporter(std::size_t total, double estimate_s,
                                                                     std::ostream& out, bool terminal) {
    return std::make_unique<ProgressReporter>(total, estimate_s, out, terminal);
}

}  // namespace trainsim::calibrate
