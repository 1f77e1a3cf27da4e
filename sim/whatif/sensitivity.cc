#include "sim/whatif/sensitivity.h"

#include <algorithm>
#include <cmath>

#include "sim/core/input_error.h"
#include "sim/cost/cost_model.h"
#include "sim/engine/simulator.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/sweep/worker_pool.h"

namespace trainsim::whatif {

namespace {

// The stage with the highest peak (the first of equals).
const report::StageReport* peak_stage(const report::IterationReport& r) {
    const report::StageReport* best = nullptr;
    for (const report::StageReport& s : r.stages) {
        if (best == nullptr || s.peak_memory_bytes > best->peak_memory_bytes) {
            best = &s;
        }
    }
    return best;
}

Sensitivity compare(const Variation& v, const report::IterationReport& base,
                    const report::IterationReport& r) {
    Sensitivity s;
    s.knob = v.knob;
    s.label = v.label;
    s.profile = v.parameter.has_value();
    s.iteration_time = r.iteration_time;
    s.change = r.iteration_time.value / base.iteration_time.value - 1.0;
    s.num_gpus = r.num_gpus;
    s.gpu_time_change = (r.iteration_time.value * static_cast<double>(r.num_gpus)) /
                            (base.iteration_time.value * static_cast<double>(base.num_gpus)) -
                        1.0;
    s.peak_memory = r.peak_memory_bytes;
    s.peak_change = Bytes{r.peak_memory_bytes.value - base.peak_memory_bytes.value};
    const report::StageReport* stage = peak_stage(r);
    s.peak_stage = stage != nullptr ? stage->stage : 0;
    s.fits_in_memory = r.fits_in_memory;
    s.overflow = stage != nullptr ? stage->overflow_bytes : Bytes{0};
    return s;
}

}  // namespace

WhatIf run_whatif(const config::Scenario& scenario, const cost::HardwareProfile& profile,
                  const WhatIfOptions& options) {
    experiment::SimulationOptions simulation;
    simulation.fold = options.fold;
    std::vector<Variation> variations = profile_variations(scenario, options.profile_factor);
    if (options.layout) {
        std::vector<Variation> layout = layout_variations(scenario);
        variations.insert(variations.end(), std::make_move_iterator(layout.begin()),
                          std::make_move_iterator(layout.end()));
    }
    // Item 0 is the baseline (its errors are the user's: they propagate); the rest are variations,
    // whose errors become their rows' messages.
    std::optional<experiment::Simulation> baseline;
    std::vector<std::optional<report::IterationReport>> reports(variations.size());
    std::vector<std::string> errors(variations.size());
    sweep::parallel_for(variations.size() + 1, options.jobs, [&](std::size_t item, unsigned /*worker*/) {
        if (item == 0) {
            const cost::CostModel cost(profile);
            baseline.emplace(experiment::simulate_scenario(scenario, cost, simulation));
            return;
        }
        const Variation& v = variations[item - 1];
        try {
            const cost::CostModel cost(v.parameter ? cost::scale_profile(profile, *v.parameter, v.factor)
                                                   : profile);
            reports[item - 1] = experiment::simulate_scenario(v.scenario, cost, simulation).report;
        } catch (const InputError& e) {
            errors[item - 1] = e.what();
        } catch (const engine::SimulationError& e) {
            errors[item - 1] = std::string("simulation cannot finish: ") + e.what();
        }
    });

    WhatIf out;
    out.baseline = baseline->report;
    out.critical_path = report::make_critical_path(baseline->program, baseline->run);
    for (std::size_t i = 0; i < variations.size(); ++i) {
        if (reports[i]) {
            out.rows.push_back(compare(variations[i], out.baseline, *reports[i]));
        } else {
            Sensitivity s;
            s.knob = variations[i].knob;
            s.label = variations[i].label;
            s.profile = variations[i].parameter.has_value();
            s.error = errors[i];
            out.rows.push_back(s);
        }
    }
    const bool baseline_fits = out.baseline.fits_in_memory;
    auto group = [baseline_fits](const Sensitivity& s) {
        if (!s.error.empty()) {
            return 2;
        }
        return baseline_fits && !s.fits_in_memory ? 1 : 0;
    };
    std::stable_sort(out.rows.begin(), out.rows.end(), [&](const Sensitivity& a, const Sensitivity& b) {
        if (group(a) != group(b)) {
            return group(a) < group(b);
        }
        return a.gpu_time_change < b.gpu_time_change;
    });
    return out;
}

}  // namespace trainsim::whatif
