#include "calibrate/fit/profile_fitter.h"

#include <filesystem>
#include <fstream>
#include <random>

#include "calibrate/fit/device_fit.h"
#include "calibrate/fit/gemm_fit.h"
#include "calibrate/fit/inter_node_fit.h"
#include "calibrate/fit/intra_node_fit.h"
#include "calibrate/fit/memory_bound_fit.h"
#include "sim/core/input_error.h"
#include "sim/cost/hardware_profile.h"
#include "sim/cost/profile_writer.h"

namespace trainsim::calibrate {

namespace {

namespace fs = std::filesystem;

// Any directive left after the fits sits where no fit goes: name the first.
void check_no_directive_left(const OrderedJson& node, const std::string& path, const StrictJson& json) {
    if (!node.is_object()) {
        if (node.is_array()) {
            for (std::size_t i = 0; i < node.size(); ++i) {
                check_no_directive_left(node[i], element_path(path, i), json);
            }
        }
        return;
    }
    if (node.contains("fit")) {
        std::string list;
        for (const auto& p : fittable_paths()) {
            list += (list.empty() ? "" : ", ") + p;
        }
        json.fail(member_path(path, "fit"),
                  "asks to fit " + path + ", which is not fittable (fittable: " + list + ")");
    }
    for (const auto& [key, value] : node.items()) {
        check_no_directive_left(value, member_path(path, key), json);
    }
}

void add_source(OrderedJson& sources, const std::string& id, const std::string& citation,
                const StrictJson& json) {
    if (sources.contains(id)) {
        if (sources.at(id) != citation) {
            json.fail(member_path("sources", id), "is cited by the inputs as '" + citation +
                                                      "', but the profile has '" +
                                                      sources.at(id).get<std::string>() + "'");
        }
        return;
    }
    sources[id] = citation;
}

}  // namespace

const std::vector<std::string>& fittable_paths() {
    static const std::vector<std::string> paths = [] {
        std::vector<std::string> p = {
            "memory_bound.launch_us",
            "gpu.peak_tflops",
            "gpu.hbm_GBps",
            "gpu.memory_visible_bytes",
            "gpu.compute_capability",
            "node.gpus_per_node",
            "compute.gemm.wave_quantization.num_sms",
            "compute.gemm.efficiency_vs_flops",
            "compute.gemm_fp8.efficiency_vs_flops",
            "compute.gemm_fp8.split_accumulator_slowdown",
            "compute.gemm.min_kernel_us",
            "compute.attention.score_efficiency",
            "compute.attention.over_value_efficiency",
            "memory_bound.efficiency_vs_bytes",
        };
        for (const cost::MemoryBoundKind k : cost::kMemoryBoundKinds) {
            p.push_back(kind_factor_path(k));  // each kind's factor, after the curve it scales
        }
        p.insert(p.end(), {
                              "network.intra_node.busbw_GBps_vs_bytes",
                              "network.intra_node.measured_group_size",
                              "network.intra_node.latency_base_us",
                              "network.intra_node.latency_per_hop_us",
                              "network.intra_node.p2p_GBps",
                              "network.intra_node.p2p_latency_us",
                              "network.inter_node.nic_GBps",
                              "network.inter_node.busbw_efficiency_vs_bytes",
                          });
        return p;
    }();
    return paths;
}

FitResult fit_profile(OrderedJson doc, const MeasurementSet& measurements, const StrictJson& json,
                      const FitOptions& options, const std::string& name) {
    if (!doc.is_object()) {
        json.fail("", "must be a profile object");
    }
    FitState state(std::move(doc), measurements, json, options);
    fit_launch_target(state);
    fit_device_targets(state);
    fit_gemm_targets(state);
    fit_memory_bound_targets(state);
    fit_intra_node_targets(state);
    fit_inter_node_targets(state);
    check_no_directive_left(state.doc(), "", json);

    OrderedJson& profile = state.doc();
    profile["name"] = name;
    if (!profile.contains("sources") || !profile.at("sources").is_object()) {
        json.fail("sources", "must be an object of source ids and citations");
    }
    OrderedJson& sources = profile.at("sources");
    for (const auto& [id, citation] : measurements.sources) {
        add_source(sources, id, citation, json);
    }
    for (const InputFile& f : measurements.files) {
        add_source(sources, f.source_id, f.citation, json);
    }
    if (options.peak_tflops) {
        add_source(sources, "S-USER", "given on the trainsim-calibrate fit command line", json);
    }
    FitResult result{profile, state.report()};
    result.report.warnings = measurements.warnings;
    return result;
}

void write_profile_checked(const OrderedJson& profile, const std::string& path) {
    const fs::path target(path);
    const std::string name = profile.value("name", std::string());
    if (target.extension() != ".json" || target.stem().string() != name) {
        throw InputError("--output=" + path + ": a profile's file is its name plus .json, here " + name +
                         ".json");
    }
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        throw InputError("--output=" + path + ": directory " + dir.string() + " does not exist");
    }
    // Written through the struct the simulator reads: what does not load is never written, and the file
    // has the loader's layout whatever order the fits left the keys in.
    std::string text;
    try {
        text = to_profile_style_json(cost::profile_to_json(cost::profile_from_json(name, profile)));
    } catch (const InputError& e) {
        throw InputError(std::string("the fitted profile does not load, nothing written: ") + e.what());
    }
    std::random_device random;
    const fs::path temp_dir = dir / (".trainsim-fit-" + std::to_string(random()));
    if (!fs::create_directory(temp_dir, ec)) {
        throw InputError("--output=" + path + ": cannot write in " + dir.string() + " (" + ec.message() +
                         ")");
    }
    const fs::path temp = temp_dir / target.filename();
    try {
        {
            std::ofstream out(temp, std::ios::binary | std::ios::trunc);
            out << text;
            out.flush();
            if (!out) {
                throw InputError("--output=" + path + ": write failed (disk full?)");
            }
        }
        fs::rename(temp, target, ec);
        if (ec) {
            throw InputError("--output=" + path + ": cannot be written (" + ec.message() + ")");
        }
    } catch (...) {
        fs::remove_all(temp_dir, ec);
        throw;
    }
    fs::remove_all(temp_dir, ec);
}

}  // namespace trainsim::calibrate
