#include "sim/sweep/point_runner.h"

#include "sim/core/input_error.h"
#include "sim/cost/cost_model.h"
#include "sim/engine/simulator.h"
#include "sim/experiment/simulate_scenario.h"

namespace trainsim::sweep {

PointRunner::PointRunner(std::string profile_directory, program::Fold fold)
    : profile_directory_(std::move(profile_directory)), fold_(fold) {}

const cost::HardwareProfile& PointRunner::profile(const std::string& name) {
    auto it = profiles_.find(name);
    if (it == profiles_.end()) {
        it = profiles_.emplace(name, cost::load_hardware_profile(name, profile_directory_)).first;
    }
    return it->second;
}

PointOutcome PointRunner::failure(const std::exception& e) {
    // The same words the CLI uses for each kind of error, so a row reads like the failed `run` would.
    if (dynamic_cast<const InputError*>(&e) != nullptr) {
        return {std::nullopt, e.what()};
    }
    if (dynamic_cast<const engine::SimulationError*>(&e) != nullptr) {
        return {std::nullopt, std::string("simulation cannot finish: ") + e.what()};
    }
    return {std::nullopt, std::string("internal error: ") + e.what()};
}

PointOutcome PointRunner::simulate(const config::Scenario& scenario) {
    try {
        const cost::CostModel cost(profile(scenario.hardware.profile));
        experiment::SimulationOptions options;
        options.fold = fold_;
        return {experiment::simulate_scenario(scenario, cost, options).report, {}};
    } catch (const std::exception& e) {
        return failure(e);
    }
}

}  // namespace trainsim::sweep
