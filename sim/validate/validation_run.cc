#include "sim/validate/validation_run.h"

#include <cmath>
#include <map>
#include <optional>

#include "sim/core/input_error.h"
#include "sim/program/iteration_program.h"
#include "sim/program/layer_program.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/report/iteration_report.h"
#include "sim/report/layer_report.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"

namespace trainsim::validate {

namespace {

using config::Override;

std::string cache_key(const std::string& path, const std::vector<Override>& overrides) {
    std::string key = path;
    for (const Override& o : overrides) {
        key += '\n' + o.key + '=' + o.value;
    }
    return key;
}

std::vector<Override> with(std::vector<Override> overrides, const std::vector<Override>& more) {
    overrides.insert(overrides.end(), more.begin(), more.end());
    return overrides;
}

// Simulations shared between cases: Table 4's forward, backward and sum come from one layer run.
class Evaluator {
public:
    explicit Evaluator(std::string profile_dir) : profile_dir_(std::move(profile_dir)) {}

    const config::Scenario& scenario(const std::string& path, const std::vector<Override>& overrides) {
        const std::string key = cache_key(path, overrides);
        auto it = scenarios_.find(key);
        if (it == scenarios_.end()) {
            it = scenarios_.emplace(key, config::load_scenario(path, overrides)).first;
        }
        return it->second;
    }

    const cost::HardwareProfile& profile(const config::Scenario& sc) {
        auto it = profiles_.find(sc.hardware.profile);
        if (it == profiles_.end()) {
            it = profiles_
                     .emplace(sc.hardware.profile,
                              cost::load_hardware_profile(sc.hardware.profile, profile_dir_))
                     .first;
        }
        return it->second;
    }

    const report::LayerReport& layer(const std::string& path, const std::vector<Override>& overrides) {
        const std::string key = cache_key(path, overrides);
        auto it = layers_.find(key);
        if (it == layers_.end()) {
            const config::Scenario& sc = scenario(path, overrides);
            const cost::CostModel cost(profile(sc));
            const program::IterationProgram prog = program::build_single_layer(sc, cost);
            const engine::RunResult run = program::simulate(prog);
            it = layers_.emplace(key, report::make_layer_report(sc, cost, prog, run)).first;
        }
        return it->second;
    }

    // As `trainsim run` does it, folded (tp,dp).
    const report::IterationReport& iteration(const std::string& path,
                                             const std::vector<Override>& overrides) {
        const std::string key = cache_key(path, overrides);
        auto it = iterations_.find(key);
        if (it == iterations_.end()) {
            const config::Scenario& sc = scenario(path, overrides);
            const cost::CostModel cost(profile(sc));
            it = iterations_.emplace(key, experiment::simulate_scenario(sc, cost).report).first;
        }
        return it->second;
    }

private:
    std::string profile_dir_;
    std::map<std::string, config::Scenario> scenarios_;
    std::map<std::string, cost::HardwareProfile> profiles_;
    std::map<std::string, report::LayerReport> layers_;
    std::map<std::string, report::IterationReport> iterations_;
};

double layer_bytes(const config::Scenario& sc) {
    return static_cast<double>(
        workload::layer_activation_bytes(workload::layer_shape_of(sc), sc.training.recompute_granularity)
            .value);
}

// Korthikanti's baseline for overheads and memory shares: tensor parallelism only, nothing recomputed.
const std::vector<Override> kTensorParallelOnly = {{"training.recompute_granularity", "none"},
                                                   {"training.recompute_method", "null"},
                                                   {"training.recompute_num_layers", "null"},
                                                   {"parallelism.sequence_parallel", "false"}};

// The metric's value in its base unit (seconds, fraction, bytes, FLOP/s, tokens/s).
double measure(Evaluator& ev, const ValidationCase& c, std::vector<std::string>& warnings) {
    const std::string& path = c.scenario_path;
    const std::vector<Override>& set = c.overrides;
    auto layer = [&](const std::vector<Override>& overrides) -> const report::LayerReport& {
        const report::LayerReport& r = ev.layer(path, overrides);
        warnings.insert(warnings.end(), r.warnings.begin(), r.warnings.end());
        return r;
    };
    auto iteration = [&](const std::vector<Override>& overrides) -> const report::IterationReport& {
        const report::IterationReport& r = ev.iteration(path, overrides);
        warnings.insert(warnings.end(), r.warnings.begin(), r.warnings.end());
        return r;
    };
    switch (c.metric) {
    case Metric::PerLayerForwardTime:
        return layer(set).forward.value;
    case Metric::PerLayerBackwardTime:
        return layer(set).backward.value;
    case Metric::PerLayerFwdPlusBwdTime: {
        const report::LayerReport& r = layer(set);
        return r.forward.value + r.backward.value;
    }
    case Metric::PerLayerRecomputeTime:
        return layer(set).recompute.value;
    case Metric::PerLayerTimeOverheadVsNoRecomputeNoSp: {
        const report::LayerReport& r = layer(set);
        const report::LayerReport& base = layer(with(set, kTensorParallelOnly));
        return (r.forward.value + r.backward.value) / (base.forward.value + base.backward.value) - 1.0;
    }
    case Metric::PerLayerActivationMemory:
        return layer_bytes(ev.scenario(path, set));
    case Metric::ActivationMemoryFractionOfTpOnlyBaseline:
        return layer_bytes(ev.scenario(path, set)) /
               layer_bytes(ev.scenario(path, with(set, kTensorParallelOnly)));
    case Metric::ActivationMemorySavedBySelectiveVsStoringAll: {
        const double selective =
            layer_bytes(ev.scenario(path, with(set, {{"training.recompute_granularity", "selective"},
                                                     {"training.recompute_method", "null"},
                                                     {"training.recompute_num_layers", "null"}})));
        const double all =
            layer_bytes(ev.scenario(path, with(set, {{"training.recompute_granularity", "none"},
                                                     {"training.recompute_method", "null"},
                                                     {"training.recompute_num_layers", "null"}})));
        return 1.0 - selective / all;
    }
    case Metric::IterationTime:
        return iteration(set).iteration_time.value;
    case Metric::Mfu:
        return iteration(set).mfu;
    case Metric::Hfu:
        return iteration(set).hfu;
    case Metric::TflopsPerGpu:
        return iteration(set).tflops_per_gpu * 1e12;
    case Metric::TokensPerSecond:
        return iteration(set).tokens_per_s;
    case Metric::PeakMemory:
        return static_cast<double>(iteration(set).peak_memory_bytes.value);
    case Metric::FirstStageActivationMemorySavingOutputTensorDealloc: {
        const report::IterationReport& kept =
            iteration(with(set, {{"training.deallocate_pipeline_outputs", "false"}}));
        const report::IterationReport& freed =
            iteration(with(set, {{"training.deallocate_pipeline_outputs", "true"}}));
        return static_cast<double>(kept.stages.at(0).activation_bytes.value -
                                   freed.stages.at(0).activation_bytes.value);
    }
    }
    throw std::logic_error("validate: metric without a measurement");
}

}  // namespace

std::size_t ValidationReport::failures() const {
    std::size_t n = 0;
    for (const CaseResult& r : results) {
        n += r.pass ? 0 : 1;
    }
    return n;
}

bool passes(const ValidationCase& spec, double simulated) {
    const double allowed = spec.tolerance.allowed(spec.value);
    // A hair of slack so that a value printed as exactly on the tolerance passes.
    const double slack = 1e-9 * std::max(1.0, std::abs(spec.value));
    switch (spec.comparison) {
    case Comparison::Equal:
        return std::abs(simulated - spec.value) <= allowed + slack;
    case Comparison::AtMost:
        return simulated <= spec.value + allowed + slack;
    case Comparison::AtLeast:
        return simulated >= spec.value - allowed - slack;
    }
    return false;
}

ValidationReport run_validation(const ValidationFile& file, const std::string& profile_dir) {
    ValidationReport report{file.path, file.description, {}};
    Evaluator ev(profile_dir);
    for (const ValidationCase& c : file.cases) {
        CaseResult r;
        r.spec = c;
        try {
            r.profile = ev.scenario(c.scenario_path, c.overrides).hardware.profile;
            r.simulated = measure(ev, c, r.warnings) * c.unit.per_base;
        } catch (const InputError& e) {
            throw InputError(file.path + ": case " + c.id + ": " + e.what());
        }
        r.error = r.simulated - c.value;
        r.relative_error = c.value == 0.0 ? 0.0 : r.error / std::abs(c.value);
        r.allowed = c.tolerance.allowed(c.value);
        r.pass = passes(c, r.simulated);
        report.results.push_back(std::move(r));
    }
    return report;
}

}  // namespace trainsim::validate
