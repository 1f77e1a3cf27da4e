#include "calibrate/fit/base_merge.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "calibrate/fit/datasheet_peaks.h"
#include "calibrate/fit/gemm_fit.h"
#include "calibrate/fit/memory_bound_fit.h"
#include "calibrate/fit/profile_fitter.h"
#include "sim/core/input_error.h"

namespace trainsim::calibrate {

namespace {

using Collective = CollectiveMeasurement;

bool any_kernel(const MeasurementSet& m, KernelKind kind) {
    return std::any_of(m.kernels.begin(), m.kernels.end(),
                       [&](const KernelMeasurement& k) { return k.kind == kind; });
}

bool any_gemm(const MeasurementSet& m, cost::GemmClass cls,
              GemmRecordPrecision precision = GemmRecordPrecision::Bits16) {
    return std::any_of(m.gemms.begin(), m.gemms.end(), [&](const GemmMeasurement& g) {
        return g.cls == cls && gemm_record_precision(g) == precision;
    });
}

// The records the default (out-of-place) collective fits read.
std::vector<const Collective*> collectives(const MeasurementSet& m, cost::Scope scope,
                                           std::initializer_list<cost::CollectiveKind> ops) {
    std::vector<const Collective*> out;
    for (const Collective& c : m.collectives) {
        if (c.scope() == scope && c.placement == Placement::OutOfPlace && c.time_seconds() &&
            std::find(ops.begin(), ops.end(), c.op) != ops.end()) {
            out.push_back(&c);
        }
    }
    return out;
}

int largest_group(const std::vector<const Collective*>& records) {
    int n = 0;
    for (const auto* c : records) {
        n = std::max(n, c->ranks);
    }
    return n;
}

const OrderedJson* at(const OrderedJson& doc, const std::string& dotted) {
    const OrderedJson* node = &doc;
    std::size_t start = 0;
    while (start <= dotted.size()) {
        const std::size_t dot = dotted.find('.', start);
        const std::string key =
            dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (!node->is_object() || !node->contains(key)) {
            return nullptr;
        }
        node = &node->at(key);
        start = dot == std::string::npos ? dotted.size() + 1 : dot + 1;
    }
    return node;
}

std::string section_of(const std::string& path) {
    for (const char* s : {"compute.gemm", "compute.attention", "network.intra_node", "network.inter_node"}) {
        if (path.rfind(std::string(s) + ".", 0) == 0) {
            return s;
        }
    }
    return path.substr(0, path.find('.'));
}

}  // namespace

std::vector<std::string> add_base_directives(OrderedJson& base, const MeasurementSet& m,
                                             const FitOptions& options) {
    const auto& device = m.device;
    // FP8 rates are fractions of the FP8 peak; a base without one would leave them out of every curve
    // silently (the 16-bit curve takes none of them), so the user would fit less than was measured.
    if (const auto fp8 = std::find_if(
            m.gemms.begin(), m.gemms.end(),
            [](const GemmMeasurement& g) { return gemm_record_precision(g) != GemmRecordPrecision::Bits16; });
        fp8 != m.gemms.end() && at(base, "gpu.fp8_peak_tflops") == nullptr) {
        const std::string first = fp8->origin.source.empty()
                                      ? fp8->origin.source_id + " " + fp8->origin.record
                                      : fp8->origin.source;
        throw InputError("the inputs have FP8 GEMM records (" + first +
                         ") but the base profile has no gpu.fp8_peak_tflops to fit them against; use a base "
                         "with FP8 tensor cores (h100-80gb-dgx, h200-141gb-dgx, b200-dgx) or leave them out");
    }
    const auto intra_ar = collectives(m, cost::Scope::IntraNode, {cost::CollectiveKind::AllReduce});
    const auto intra_all = collectives(m, cost::Scope::IntraNode,
                                       {cost::CollectiveKind::AllReduce, cost::CollectiveKind::AllGather,
                                        cost::CollectiveKind::ReduceScatter});
    const auto intra_p2p = collectives(m, cost::Scope::IntraNode, {cost::CollectiveKind::SendRecv});
    const auto inter_ar = collectives(m, cost::Scope::InterNode, {cost::CollectiveKind::AllReduce});
    int n0 = largest_group(intra_ar);
    if (n0 == 0) {
        if (const OrderedJson* g = at(base, "network.intra_node.measured_group_size.value");
            g && g->is_number()) {
            n0 = g->get<int>();
        }
    }
    const bool latency_rows = std::any_of(intra_all.begin(), intra_all.end(), [&](const Collective* c) {
        return !(c->op == cost::CollectiveKind::AllReduce && c->ranks == n0);
    });
    const bool other_groups =
        std::any_of(intra_all.begin(), intra_all.end(), [&](const Collective* c) { return c->ranks != n0; });
    std::set<std::int64_t> p2p_sizes;
    for (const auto* c : intra_p2p) {
        p2p_sizes.insert(c->bytes);
    }

    std::map<std::string, std::function<bool()>> can_fit = {
        {"memory_bound.launch_us", [&] { return any_kernel(m, KernelKind::Empty); }},
        {"gpu.peak_tflops",
         [&] {
             return options.peak_tflops ||
                    (device && (device->peak_tflops || (device->peak_is_best_measured && !m.gemms.empty()) ||
                                (!device->peak_is_best_measured && datasheet_peak(device->name))));
         }},
        {"gpu.hbm_GBps",
         [&] {
             return device &&
                    (device->hbm_GBps || (device->hbm_is_best_measured && any_kernel(m, KernelKind::Copy)));
         }},
        {"gpu.memory_visible_bytes", [&] { return device && device->memory_bytes.has_value(); }},
        {"gpu.compute_capability", [&] { return device && device->compute_capability.has_value(); }},
        // A run on one GPU (of a node, or of a one-GPU machine) that measured no collective times its
        // compute, not the base's NVLink domain: the base's node stays. Any other count is the node's.
        {"node.gpus_per_node",
         [&] {
             return device && device->gpus_per_node.has_value() &&
                    (device->gpus_per_node->value > 1 || !m.collectives.empty());
         }},
        {"compute.gemm.wave_quantization.num_sms", [&] { return device && device->num_sms.has_value(); }},
        {"compute.gemm.efficiency_vs_flops", [&] { return any_gemm(m, cost::GemmClass::Dense); }},
        // FP8 GEMMs refit the FP8 curve of a base that has one (its peak is the base's datasheet value).
        {"compute.gemm_fp8.efficiency_vs_flops",
         [&] {
             return any_gemm(m, cost::GemmClass::Dense, GemmRecordPrecision::Fp8Fast) &&
                    at(base, "gpu.fp8_peak_tflops") != nullptr;
         }},
        {"compute.gemm_fp8.split_accumulator_slowdown",
         [&] {
             return std::any_of(m.gemms.begin(), m.gemms.end(),
                                [](const GemmMeasurement& g) {
                                    return gemm_record_precision(g) ==
                                           GemmRecordPrecision::Fp8SplitAccumulator;
                                }) &&
                    at(base, "compute.gemm_fp8") != nullptr;
         }},
        {"compute.gemm.min_kernel_us", [&] { return !m.gemms.empty(); }},
        {"compute.attention.score_efficiency", [&] { return any_gemm(m, cost::GemmClass::AttentionScore); }},
        {"compute.attention.over_value_efficiency",
         [&] { return any_gemm(m, cost::GemmClass::AttentionOverValue); }},
        {"memory_bound.efficiency_vs_bytes", [&] { return any_kernel(m, KernelKind::Copy); }},
        {"network.intra_node.busbw_GBps_vs_bytes", [&] { return !intra_ar.empty(); }},
        {"network.intra_node.measured_group_size", [&] { return !intra_ar.empty(); }},
        {"network.intra_node.latency_base_us", [&] { return latency_rows; }},
        {"network.intra_node.latency_per_hop_us", [&] { return other_groups; }},
        {"network.intra_node.p2p_GBps", [&] { return !intra_p2p.empty(); }},
        {"network.intra_node.p2p_latency_us", [&] { return p2p_sizes.size() >= 2; }},
        {"network.inter_node.nic_GBps", [&] { return !inter_ar.empty(); }},
        {"network.inter_node.busbw_efficiency_vs_bytes", [&] { return !inter_ar.empty(); }},
    };
    for (const cost::MemoryBoundKind k : cost::kMemoryBoundKinds) {
        can_fit[kind_factor_path(k)] = [&m, k] { return any_kernel(m, kernel_measuring(k)); };
    }
    std::vector<std::string> marked;
    for (const std::string& path : fittable_paths()) {
        if (!can_fit.at(path)()) {
            continue;
        }
        OrderedJson directive;
        directive["fit"] = OrderedJson::object();
        base[OrderedJson::json_pointer("/" + [&] {
            std::string p = path;
            std::replace(p.begin(), p.end(), '.', '/');
            return p;
        }())] = directive;
        marked.push_back(path);
    }
    return marked;
}

std::vector<std::string> kind_factors_kept_over_a_refit_curve(const OrderedJson& base,
                                                              const std::vector<std::string>& fitted) {
    const auto refit = [&](const std::string& path) {
        return std::find(fitted.begin(), fitted.end(), path) != fitted.end();
    };
    std::vector<std::string> kept;
    if (!refit("memory_bound.efficiency_vs_bytes")) {
        return kept;
    }
    for (const cost::MemoryBoundKind k : cost::kMemoryBoundKinds) {
        const std::string path = kind_factor_path(k);
        const OrderedJson* kind = at(base, path + ".kind");
        if (!refit(path) && kind != nullptr && kind->is_string() &&
            (*kind == "measured" || *kind == "derived")) {
            kept.push_back(path);
        }
    }
    return kept;
}

void describe_merge(OrderedJson& profile, const std::string& base_name,
                    const std::vector<std::string>& fitted, const MeasurementSet& measurements) {
    std::string files;
    std::vector<std::string> ids;
    for (const InputFile& f : measurements.files) {
        files += (files.empty() ? "" : ", ") + f.path;
        ids.push_back(f.source_id);
    }
    const std::string base_description = profile.value("description", std::string());
    std::string device;
    if (measurements.device) {
        device = measurements.device->name + " (" + measurements.device->backend + " backend), ";
    }
    profile["description"] = device + "fitted by trainsim-calibrate from " + files +
                             "; values not measured are " + base_name + "'s: " + base_description;

    std::map<std::string, std::vector<std::string>> by_section;
    std::vector<std::string> order;
    for (const std::string& path : fitted) {
        const std::string section = section_of(path);
        if (by_section[section].empty()) {
            order.push_back(section);
        }
        by_section[section].push_back(path.substr(section.size() + 1));
    }
    for (const std::string& section : order) {
        OrderedJson* node = &profile;
        std::size_t start = 0;
        while (start <= section.size()) {
            const std::size_t dot = section.find('.', start);
            node =
                &node->at(section.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
            start = dot == std::string::npos ? section.size() + 1 : dot + 1;
        }
        std::string members;
        for (const auto& m : by_section[section]) {
            members += (members.empty() ? "" : ", ") + m;
        }
        (*node)["note"] = "Fitted by trainsim-calibrate from " + joined_ids(ids) + ": " + members +
                          ". The other members" +
                          std::string(node->contains("assumptions") ? " and the assumptions" : "") + " are " +
                          base_name + "'s.";
    }
}

}  // namespace trainsim::calibrate
