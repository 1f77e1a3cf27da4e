#include "sim/plan/explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "sim/plan/pipeline_splits.h"

namespace trainsim::plan {
namespace {

std::string seconds_text(double s, bool sign) {
    char text[32];
    std::snprintf(text, sizeof text, sign ? "%+.3g s" : "%.3g s", s);
    return text;
}

std::string knob_differences(const config::Scenario& a, const config::Scenario& b) {
    std::vector<std::string> parts;
    auto compare = [&](const char* name, const std::string& x, const std::string& y) {
        if (x != y) {
            parts.push_back(std::string(name) + " " + x + " vs " + y);
        }
    };
    const auto& pa = a.parallelism;
    const auto& pb = b.parallelism;
    compare("t", std::to_string(pa.tensor_model_parallel_size),
            std::to_string(pb.tensor_model_parallel_size));
    compare("p", std::to_string(pa.pipeline_model_parallel_size),
            std::to_string(pb.pipeline_model_parallel_size));
    compare("d", std::to_string(pa.data_parallel_size), std::to_string(pb.data_parallel_size));
    compare("v", std::to_string(pa.virtual_pipeline_model_parallel_size),
            std::to_string(pb.virtual_pipeline_model_parallel_size));
    const std::string split_a = split_label(pa);
    const std::string split_b = split_label(pb);
    compare("split", split_a.empty() ? "even" : split_a, split_b.empty() ? "even" : split_b);
    if (a.model.moe) {
        compare("ep", std::to_string(pa.expert_model_parallel_size),
                std::to_string(pb.expert_model_parallel_size));
    }
    compare("b", std::to_string(a.training.micro_batch_size), std::to_string(b.training.micro_batch_size));
    compare("recompute", config::to_string(a.training.recompute_granularity),
            config::to_string(b.training.recompute_granularity));
    compare("sp", pa.sequence_parallel ? "on" : "off", pb.sequence_parallel ? "on" : "off");
    compare("distopt", a.training.use_distributed_optimizer ? "on" : "off",
            b.training.use_distributed_optimizer ? "on" : "off");
    compare("fp8", a.training.fp8_format ? "on" : "off", b.training.fp8_format ? "on" : "off");
    compare("sharding", config::to_string(pa.data_parallel_sharding_strategy),
            config::to_string(pb.data_parallel_sharding_strategy));
    std::string text;
    for (const std::string& p : parts) {
        text += (text.empty() ? "" : ", ") + p;
    }
    return text;
}

}  // namespace

std::string explain_win(const RankedLayout& best, const RankedLayout& runner_up) {
    const report::Breakdown& x = best.report.breakdown;
    const report::Breakdown& y = runner_up.report.breakdown;
    // Each part's change from the runner-up to the best (negative: the best spends less there).
    std::vector<std::pair<std::string, double>> parts{
        {"compute", x.compute.value - y.compute.value},
        {"recompute", x.recompute.value - y.recompute.value},
        {"exposed TP comm", x.exposed_tp_comm.value - y.exposed_tp_comm.value},
        {"exposed PP comm", x.exposed_pp_comm.value - y.exposed_pp_comm.value},
        {"exposed DP comm", x.exposed_dp_comm.value - y.exposed_dp_comm.value},
        {"exposed CP comm", x.exposed_cp_comm.value - y.exposed_cp_comm.value},
        {"exposed EP comm", x.exposed_ep_comm.value - y.exposed_ep_comm.value},
        {"bubble", x.bubble.value - y.bubble.value},
        {"optimizer", x.optimizer.value - y.optimizer.value},
        {"param copy", x.param_copy.value - y.param_copy.value},
        {"grad zeroing", x.grad_zeroing.value - y.grad_zeroing.value},
        {"host (CPU-bound)", x.host.value - y.host.value},
        {"GPU variability", x.variability.value - y.variability.value},
        {"kernel jitter", x.kernel_jitter.value - y.kernel_jitter.value},
    };
    std::stable_sort(parts.begin(), parts.end(),
                     [](const auto& a, const auto& b) { return std::fabs(a.second) > std::fabs(b.second); });
    const double gain = runner_up.report.iteration_time.value - best.report.iteration_time.value;
    char percent[32];
    std::snprintf(percent, sizeof percent, " (%.2g%%)", 100.0 * gain / runner_up.report.iteration_time.value);
    std::string text = best.scenario.name + " is " + seconds_text(gain, false) + percent + " faster than " +
                       runner_up.scenario.name;
    const std::string knobs = knob_differences(best.scenario, runner_up.scenario);
    if (!knobs.empty()) {
        text += " (" + knobs + ")";
    }
    std::string reasons;
    const double threshold = 0.05 * std::max(std::fabs(parts.front().second), 1e-12);
    for (std::size_t i = 0; i < parts.size() && i < 3; ++i) {
        if (std::fabs(parts[i].second) < threshold || std::fabs(parts[i].second) < 5e-7) {
            break;
        }
        reasons += (reasons.empty() ? "" : ", ") + parts[i].first + " " + seconds_text(parts[i].second, true);
    }
    text += reasons.empty() ? ": the same breakdown" : ": per stage, " + reasons;
    return text;
}

}  // namespace trainsim::plan
