// `trainsim sweep`: runs every point of a sweep's grid that the output does not hold yet, on worker
// threads, and appends one CSV row per point in grid order.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/program/iteration_program.h"
#include "sim/sweep/point_runner.h"
#include "sim/sweep/sweep_spec.h"

namespace trainsim::sweep {

struct SweepOptions {
    std::string output_path;           // "" writes the CSV to the `out` stream of run_sweep (no resume)
    std::string output_option = "-o";  // names the output in messages
    unsigned jobs = 1;                 // worker threads
    program::Fold fold;
    std::string profile_directory;     // where profile names are looked up
    std::ostream* progress = nullptr;  // progress lines go here (none when null)
    bool progress_terminal = false;    // redraw a bar in place instead of printing lines
};

struct SweepSummary {
    std::size_t points = 0;     // in the grid
    std::size_t skipped = 0;    // already in the output (resumed)
    std::size_t simulated = 0;  // run now, including failed ones
    std::size_t failed = 0;     // rows with an error
};

/// The scenario of grid point `point`: the base with the point's overrides. Throws InputError.
[[nodiscard]] config::Scenario load_point(const SweepSpec& spec, std::size_t point);

/// Simulates point `point` and returns its whole CSV row.
[[nodiscard]] std::string evaluate_point(const SweepSpec& spec, std::size_t point, PointRunner& runner,
                                         bool* failed = nullptr);

/// What is left to do for an output: the grid points not in it, in grid order.
struct SweepWork {
    std::string header;
    std::vector<std::size_t> todo;
    std::size_t keep_bytes = 0;  // the existing output's whole rows (anything after is cut off)
    bool write_header = true;
};

/// Reads the existing output (if any) and lists the points still to run. Throws InputError for an
/// output that belongs to another sweep.
[[nodiscard]] SweepWork plan_work(const SweepSpec& spec, const SweepOptions& options);

/// Runs the sweep. Input errors of the sweep itself (not of one point) are thrown as InputError before
/// the output is touched.
SweepSummary run_sweep(const SweepSpec& spec, const SweepOptions& options, std::ostream& out);

}  // namespace trainsim::sweep
