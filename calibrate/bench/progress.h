// What a calibration run shows while it runs: an estimate of its length before it starts (from a probe of
// the backend's GEMM, copy and collective rates), then a progress line per benchmark with the time left.
// Google Benchmark's console output is replaced: it prints nothing a user needs, and with the Debian build
// of the library a "Library was built as DEBUG" warning that does not apply (every time here is manual,
// taken by the backend's own clock, not by the library's loop).
#pragma once

#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>

#include "calibrate/bench/backend.h"

namespace benchmark {
class BenchmarkReporter;
}

namespace trainsim::calibrate {

/// Seconds the plan should take on `backend`: every case's expected call time (a fixed cost plus the
/// case's FLOPs, bytes or message size at a rate, both from two probes, a small and a large case) times its
/// iterations and repetitions, or the minimum time of adaptive benchmarks (preparing a case, its buffers
/// and operands, is not counted).
/// `benchmarks` counts what the harness registered (the plan's cases and the FP8 twins of its dense GEMMs,
/// timed like the GEMM they repeat). A guess within a factor of two, for the user to decide whether to wait.
struct RunEstimate {
    double seconds = 0.0;
    std::string how;  // the probe's rates, e.g. "GEMM 21 GFLOP/s, copy 9.1 GB/s, all_reduce 64 KiB 41 us"
};
[[nodiscard]] RunEstimate estimate_run(Backend& backend, const BenchPlan& plan, std::size_t benchmarks);

/// The display reporter: one line per finished benchmark (redrawn in place on a terminal, every tenth
/// otherwise), benchmarks that failed by name, and the elapsed and remaining time.
[[nodiscard]] std::unique_ptr<benchmark::BenchmarkReporter>
make_progress_reporter(std::size_t total, double estimate_s, std::ostream& out, bool terminal);

}  // namespace trainsim::calibrate
