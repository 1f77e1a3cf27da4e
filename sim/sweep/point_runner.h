// Simulates one scenario of a sweep or a plan, turning the errors of an invalid point into a message
// instead of an exception: one bad point must not end a run of thousands.
//
// Not thread-safe: the cost model collects warnings as it prices. Every worker thread owns its
// PointRunner; each point gets a fresh CostModel, so one point's warnings never leak into another's.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "sim/config/scenario.h"
#include "sim/cost/hardware_profile.h"
#include "sim/program/iteration_program.h"
#include "sim/report/iteration_report.h"

namespace trainsim::sweep {

struct PointOutcome {
    std::optional<report::IterationReport> report;  // set when the point simulated
    std::string error;                              // why not, otherwise: one line
};

class PointRunner {
public:
    /// Profiles named in scenarios are looked up in `profile_directory` (or read from a path).
    PointRunner(std::string profile_directory, program::Fold fold);

    /// Builds, simulates and reports `scenario`. Bad input (InputError), a run that cannot finish
    /// (SimulationError) and internal errors come back as the outcome's error.
    [[nodiscard]] PointOutcome simulate(const config::Scenario& scenario);

    /// Like simulate, but first makes the scenario: errors of `make` (InputError from parsing and
    /// validation) come back as the outcome's error too.
    template <typename MakeScenario> [[nodiscard]] PointOutcome simulate_made(MakeScenario&& make) {
        try {
            return simulate(make());
        } catch (const std::exception& e) {
            return failure(e);
        }
    }

private:
    [[nodiscard]] static PointOutcome failure(const std::exception& e);
    [[nodiscard]] const cost::HardwareProfile& profile(const std::string& name);

    std::string profile_directory_;
    program::Fold fold_;
    std::map<std::string, cost::HardwareProfile> profiles_;  // loaded once per worker
};

}  // namespace trainsim::sweep
