// `trainsim plan --model PRESET|--scenario FILE --gpus N --global-batch B [--profile NAME] [--top N]
// [--memory-headroom P%] [--max-expert-parallel N] [--max-expert-tensor-parallel N]`:
// the fastest layouts for a model on N GPUs, each simulated, with why the best wins.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "sim/cli/command_line.h"
#include "sim/cli/commands.h"
#include "sim/config/scenario_enums.h"
#include "sim/core/input_error.h"
#include "sim/core/units.h"
#include "sim/plan/explain.h"
#include "sim/plan/pipeline_splits.h"
#include "sim/plan/planner.h"
#include "sim/sweep/worker_pool.h"

namespace trainsim::cli {

namespace po = boost::program_options;

namespace {

std::string gib(Bytes b) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", to_gib(b));
    return text;
}

void print_text(std::ostream& out, const plan::PlanResult& r, std::size_t top, unsigned jobs) {
    char line[320];
    std::snprintf(line, sizeof line, "%4s  %-44s %6s %10s %7s %10s\n", "rank", "layout", "gpus", "iter (s)",
                  "MFU", "peak GiB");
    out << line;
    for (std::size_t i = 0; i < r.ranked.size() && i < top; ++i) {
        const report::IterationReport& rep = r.ranked[i].report;
        std::snprintf(line, sizeof line, "%4zu  %-44s %6lld %10.3f %6.1f%% %10s\n", i + 1,
                      r.ranked[i].scenario.name.c_str(), static_cast<long long>(rep.num_gpus),
                      rep.iteration_time.value, 100.0 * rep.mfu, gib(rep.peak_memory_bytes).c_str());
        out << line;
    }
    if (r.ranked.empty()) {
        out << "no layout fits in " << gib(r.budget) << " GiB per GPU\n";
    } else if (r.ranked.size() >= 2) {
        out << "why: " << plan::explain_win(r.ranked[0], r.ranked[1]) << "\n";
    }
    std::snprintf(line, sizeof line, "memory budget %s GiB per GPU: %s GiB usable less %g%% headroom%s\n",
                  gib(r.budget).c_str(), gib(r.capacity).c_str(), 100.0 * r.memory_headroom,
                  r.memory_headroom == plan::kDefaultMemoryHeadroom
                      ? " (the default: the simulated peak omits allocator fragmentation and transient "
                        "workspaces; --memory-headroom 0% plans to the full capacity)"
                      : "");
    out << line;
    const std::string failed = r.failed ? ", " + std::to_string(r.failed) + " failed" : "";
    std::snprintf(
        line, sizeof line,
        "searched %zu layouts (%zu valid): %zu over the memory bound of the %s GiB budget; %zu simulated "
        "(%zu fit%s), "
        "%zu provably slower than the top %zu; %.2f s on %u threads\n",
        r.considered, r.valid, r.pruned_by_memory, gib(r.budget).c_str(), r.simulated, r.fit, failed.c_str(),
        r.skipped_by_time, top, r.seconds, jobs);
    out << line;
    for (const std::string& e : r.errors) {
        out << "  failed: " << e << "\n";
    }
}

void print_json(std::ostream& out, const plan::PlanResult& r, std::size_t top) {
    nlohmann::ordered_json j;
    j["considered"] = r.considered;
    j["valid"] = r.valid;
    j["pruned_by_memory"] = r.pruned_by_memory;
    j["skipped_by_time"] = r.skipped_by_time;
    j["simulated"] = r.simulated;
    j["fit"] = r.fit;
    j["failed"] = r.failed;
    j["capacity_bytes"] = r.capacity.value;
    j["memory_headroom"] = r.memory_headroom;
    j["budget_bytes"] = r.budget.value;
    j["seconds"] = r.seconds;
    nlohmann::ordered_json ranked = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < r.ranked.size() && i < top; ++i) {
        const config::Scenario& sc = r.ranked[i].scenario;
        const report::IterationReport& rep = r.ranked[i].report;
        const std::string split = plan::split_label(sc.parallelism);
        ranked.push_back(
            {{"layout", sc.name},
             {"tensor_model_parallel_size", sc.parallelism.tensor_model_parallel_size},
             {"pipeline_model_parallel_size", sc.parallelism.pipeline_model_parallel_size},
             {"data_parallel_size", sc.parallelism.data_parallel_size},
             {"context_parallel_size", sc.parallelism.context_parallel_size},
             {"virtual_pipeline_model_parallel_size", sc.parallelism.virtual_pipeline_model_parallel_size},
             {"pipeline_split", split.empty() ? "even" : split},
             {"layers_per_pipeline_rank", sc.pipeline_split()},
             {"expert_model_parallel_size", sc.parallelism.expert_model_parallel_size},
             {"micro_batch_size", sc.training.micro_batch_size},
             {"recompute_granularity", config::to_string(sc.training.recompute_granularity)},
             {"sequence_parallel", sc.parallelism.sequence_parallel},
             {"use_distributed_optimizer", sc.training.use_distributed_optimizer},
             {"data_parallel_sharding_strategy",
              config::to_string(sc.parallelism.data_parallel_sharding_strategy)},
             {"fp8_format", sc.training.fp8_format
                                ? nlohmann::ordered_json(config::to_string(*sc.training.fp8_format))
                                : nlohmann::ordered_json()},
             {"num_gpus", rep.num_gpus},
             {"iteration_time_s", rep.iteration_time.value},
             {"mfu", rep.mfu},
             {"peak_memory_bytes", rep.peak_memory_bytes.value}});
    }
    j["ranked"] = ranked;
    j["why"] = r.ranked.size() >= 2 ? plan::explain_win(r.ranked[0], r.ranked[1]) : "";
    out << j.dump(2) << "\n";
}

// "10%" or "10": a percentage in [0, 100), as a share.
double parse_headroom(const std::string& text) {
    const std::string number = !text.empty() && text.back() == '%' ? text.substr(0, text.size() - 1) : text;
    std::size_t used = 0;
    double percent = -1.0;
    try {
        percent = std::stod(number, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (number.empty() || used != number.size() || !(percent >= 0.0 && percent < 100.0)) {
        throw InputError("--memory-headroom=" + text + " must be a percentage in [0%, 100%), e.g. 10%");
    }
    return percent / 100.0;
}

}  // namespace

int plan_command(const std::vector<std::string>& args) {
    std::string model;
    std::string scenario_path;
    std::string profile;
    std::string format = "text";
    long long gpus = 0;
    long long global_batch = 0;
    long long top = 5;
    long long max_micro = 16;
    long long max_expert = std::numeric_limits<long long>::max();
    long long max_expert_tensor = std::numeric_limits<long long>::max();
    int jobs = 0;
    std::string schedules = "auto";
    std::string headroom = "10%";
    po::options_description options(
        "trainsim plan (--model PRESET | --scenario FILE) --gpus N --global-batch B");
    options.add_options()("help,h", "show this help")(
        "model", po::value<std::string>(&model), "a model preset (gpt-22b, gpt3-175b, mt-nlg-530b, gpt-1t)")(
        "scenario", po::value<std::string>(&scenario_path),
        "a scenario file: its model, hardware and unsearched training knobs (its layout is ignored)")(
        "gpus", po::value<long long>(&gpus), "GPUs available (a layout uses at most this many)")(
        "global-batch", po::value<long long>(&global_batch), "global batch size (default: the scenario's)")(
        "profile", po::value<std::string>(&profile),
        "hardware profile (default: the scenario's, or a100-80gb-selene)")("top", po::value<long long>(&top),
                                                                           "layouts to print (default 5)")(
        "max-micro-batch", po::value<long long>(&max_micro),
        "largest micro-batch size searched (default 16)")(
        "max-expert-parallel", po::value<long long>(&max_expert),
        "largest expert-parallel size searched for a mixture-of-experts model (default: every one that "
        "divides num_experts and t·c·d)")(
        "max-expert-tensor-parallel", po::value<long long>(&max_expert_tensor),
        "largest expert tensor-parallel size searched for a mixture-of-experts model (default: every power "
        "of two up to a node that divides moe_ffn_hidden_size)")(
        "jobs,j", po::value<int>(&jobs), "worker threads (default 0: one per hardware thread)")(
        "format", po::value<std::string>(&format), "text (default) or json")(
        "memory-headroom", po::value<std::string>(&headroom),
        "share of the usable GPU memory a layout must leave free, e.g. 10% (default 10%: the simulated "
        "peak omits allocator fragmentation and transient workspaces)")(
        "exhaustive",
        "simulate every layout within the memory bound, not only those that could reach the top")(
        "schedules", po::value<std::string>(&schedules),
        "comma-separated schedules to search (default auto: Megatron's for each v; e.g. "
        "auto,zb-h1,zb-h2,zb-v,dualpipe,dualpipev)");
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(options).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
        std::cout << options;
        return 0;
    }
    if (model.empty() == scenario_path.empty()) {
        throw InputError("trainsim plan: give exactly one of --model PRESET and --scenario FILE");
    }
    if (!vm.count("gpus") || gpus < 1) {
        throw InputError("--gpus=" + std::to_string(gpus) + " must be an integer ≥ 1");
    }
    for (const auto& [name, value] : {std::pair{"--top", top},
                                      {"--max-micro-batch", max_micro},
                                      {"--max-expert-parallel", max_expert},
                                      {"--max-expert-tensor-parallel", max_expert_tensor}}) {
        if (value < 1) {
            throw InputError(std::string(name) + "=" + std::to_string(value) + " must be ≥ 1");
        }
    }
    if (jobs < 0) {
        throw InputError("--jobs=" + std::to_string(jobs) + " must be ≥ 0 (0: one per hardware thread)");
    }
    if (format != "text" && format != "json") {
        throw InputError("--format=" + format + " must be one of text, json");
    }
    plan::PlanRequest request;
    if (!scenario_path.empty()) {
        CommonOptions common;
        common.scenario_path = scenario_path;
        if (!profile.empty()) {
            common.overrides.push_back("hardware.profile=" + profile);
        }
        request.base = load_scenario(common);
        if (!vm.count("global-batch")) {
            global_batch = request.base.training.global_batch_size;
        }
    } else {
        if (!vm.count("global-batch")) {
            throw InputError("trainsim plan: --global-batch B is required with --model");
        }
        // The smallest valid layout around the preset; the planner replaces every searched knob.
        nlohmann::json doc = {
            {"model", {{"preset", model}}},
            {"parallelism", {{"tensor_model_parallel_size", 1}, {"pipeline_model_parallel_size", 1}}},
            {"training", {{"micro_batch_size", 1}, {"global_batch_size", 1}}},
            {"hardware", {{"profile", profile.empty() ? "a100-80gb-selene" : profile}}}};
        request.base = config::parse_scenario(doc.dump(), model);
    }
    for (const char* flag : {"max-expert-parallel", "max-expert-tensor-parallel"}) {
        if (vm.count(flag) && !request.base.model.moe) {
            throw InputError(std::string("--") + flag +
                             " applies only to a mixture-of-experts model (model.num_experts)");
        }
    }
    if (global_batch < 1) {
        throw InputError("--global-batch=" + std::to_string(global_batch) + " must be an integer ≥ 1");
    }
    request.gpus = gpus;
    request.global_batch = global_batch;
    request.max_micro_batch = max_micro;
    request.max_expert_parallel = max_expert;
    request.max_expert_tensor_parallel = max_expert_tensor;
    request.schedules.clear();
    for (std::size_t from = 0; from <= schedules.size();) {
        const std::size_t comma = std::min(schedules.find(',', from), schedules.size());
        const std::string name = schedules.substr(from, comma - from);
        const auto known = std::find_if(config::kScheduleNames.begin(), config::kScheduleNames.end(),
                                        [&](const auto& e) { return name == e.name; });
        if (known == config::kScheduleNames.end()) {
            throw InputError("--schedules: unknown schedule \"" + name +
                             "\" (auto, gpipe, 1f1b, interleaved, breadth_first, zb-h1, zb-h2, zb-v, "
                             "dualpipe, dualpipev)");
        }
        request.schedules.push_back(known->value);
        from = comma + 1;
    }
    plan::PlanOptions run;
    run.jobs = jobs == 0 ? sweep::default_jobs() : static_cast<unsigned>(jobs);
    run.profile_directory = profile_directory();
    run.top = static_cast<std::size_t>(top);
    run.exhaustive = vm.count("exhaustive") > 0;
    run.memory_headroom = parse_headroom(headroom);
    const plan::PlanResult result = plan::run_plan(request, run);
    if (format == "json") {
        print_json(std::cout, result, static_cast<std::size_t>(top));
    } else {
        print_text(std::cout, result, static_cast<std::size_t>(top), run.jobs);
    }
    return 0;
}

}  // namespace trainsim::cli
