// `trainsim whatif`: the scenario re-simulated once per Variation on the sweep's worker pool, each
// through experiment::simulate_scenario, and ranked by how much it moves the iteration time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/cost/hardware_profile.h"
#include "sim/program/iteration_program.h"
#include "sim/report/critical_path.h"
#include "sim/report/iteration_report.h"
#include "sim/whatif/variation.h"

namespace trainsim::whatif {

struct WhatIfOptions {
    double profile_factor = 1.1;  // +10 %
    bool layout = true;           // also move the layout knobs
    unsigned jobs = 1;            // worker threads (sweep::parallel_for)
    program::Fold fold;
};

/// One variation's result against the baseline.
struct Sensitivity {
    std::string knob;
    std::string label;
    bool profile = false;  // a profile parameter (else a layout knob)
    std::string error;     // set when the variation could not be simulated (then nothing below is)
    Seconds iteration_time;
    double change = 0.0;  // relative change of the iteration time (−0.021: 2.1 % faster)
    std::int64_t num_gpus = 0;
    /// Relative change of GPU-seconds per iteration (time × GPUs): the change a move of d, which changes
    /// the GPU count, is ranked by; equal to `change` when the GPU count stays.
    double gpu_time_change = 0.0;
    Bytes peak_memory{0};
    Bytes peak_change{0};         // against the baseline's peak
    std::int64_t peak_stage = 0;  // the stage holding the new peak
    bool fits_in_memory = true;
    Bytes overflow{0};  // how far the new peak exceeds the usable memory
};

struct WhatIf {
    report::IterationReport baseline;
    report::CriticalPath critical_path;  // the baseline's
    /// Ranked: the largest saving of GPU-seconds per iteration first; variations that do not fit in
    /// memory (when the baseline does) after those that do, and those that could not be simulated last.
    std::vector<Sensitivity> rows;
};

/// Simulates the baseline and every variation. `profile` is the scenario's loaded profile.
[[nodiscard]] WhatIf run_whatif(const config::Scenario& scenario, const cost::HardwareProfile& profile,
                                const WhatIfOptions& options);

}  // namespace trainsim::whatif
