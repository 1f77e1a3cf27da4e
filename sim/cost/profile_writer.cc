#include "sim/cost/profile_writer.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "sim/cost/cost_model.h"

namespace trainsim::cost {

namespace {

class Writer {
public:
    explicit Writer(const ProfileProvenance& provenance) : provenance_(provenance) {}

    // An object at `path` gets its note, if the file had one, after its other keys.
    void note(Json& object, const std::string& path) const {
        if (const auto it = provenance_.notes.find(path); it != provenance_.notes.end()) {
            object["note"] = it->second;
        }
    }

    // A double as the file spelled it: a whole number written "312" stays 312, "5.0" stays 5.0.
    [[nodiscard]] Json number(double v, const std::string& path) const {
        constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
        if (provenance_.integer_spelling.count(path) != 0 && v == std::floor(v) &&
            std::fabs(v) < kExactIntegers) {
            return static_cast<std::int64_t>(v);
        }
        return v;
    }

    void add_provenance(Json& object, const std::string& path) const {
        const auto it = provenance_.values.find(path);
        if (it != provenance_.values.end()) {
            object["kind"] = it->second.kind;
            object["source"] = it->second.source;
        }
    }

    // {"value", "kind", "source"[, "note"]} under `section[key]`.
    template <typename T>
    void value(Json& section, const std::string& section_path, const std::string& key, T v) const {
        const std::string path = join_path(section_path, key);
        Json object = Json::object();
        if constexpr (std::is_floating_point_v<T>) {
            object["value"] = number(v, path + ".value");
        } else {
            object["value"] = v;
        }
        add_provenance(object, path);
        note(object, path);
        section[key] = std::move(object);
    }

    void curve(Json& section, const std::string& section_path, const std::string& key, const Curve& c) const {
        const std::string path = join_path(section_path, key);
        Json object = Json::object();
        add_provenance(object, path);
        Json points = Json::array();
        for (std::size_t i = 0; i < c.x.size(); ++i) {
            const std::string p_path = path + ".points[" + std::to_string(i) + "]";
            Json point = Json::object();
            point["x"] = number(c.x[i], p_path + ".x");
            point["y"] = number(c.y[i], p_path + ".y");
            add_provenance(point, p_path);
            note(point, p_path);
            points.push_back(std::move(point));
        }
        object["points"] = std::move(points);
        note(object, path);
        section[key] = std::move(object);
    }

    void assumptions(Json& section, const std::string& path) const {
        const auto it = provenance_.assumptions.find(path);
        if (it == provenance_.assumptions.end()) {
            return;
        }
        Json list = Json::array();
        for (std::size_t i = 0; i < it->second.size(); ++i) {
            const Assumption& a = it->second[i];
            Json object = {{"what", a.what}, {"kind", a.provenance.kind}, {"source", a.provenance.source}};
            note(object, path + ".assumptions[" + std::to_string(i) + "]");
            list.push_back(std::move(object));
        }
        section["assumptions"] = std::move(list);
    }

private:
    const ProfileProvenance& provenance_;
};

Json compute_section(const Writer& w, const HardwareProfile& p) {
    Json compute = Json::object();
    Json gemm = Json::object();
    w.curve(gemm, "compute.gemm", "efficiency_vs_flops", p.gemm_efficiency_vs_flops);
    w.value(gemm, "compute.gemm", "min_kernel_us", p.gemm_min_kernel_us);
    Json wq = Json::object();
    w.value(wq, "compute.gemm.wave_quantization", "num_sms", p.num_sms);
    w.value(wq, "compute.gemm.wave_quantization", "tile_m", p.tile_m);
    w.value(wq, "compute.gemm.wave_quantization", "tile_n", p.tile_n);
    w.note(wq, "compute.gemm.wave_quantization");
    gemm["wave_quantization"] = std::move(wq);
    w.assumptions(gemm, "compute.gemm");
    w.note(gemm, "compute.gemm");
    compute["gemm"] = std::move(gemm);

    Json attention = Json::object();
    w.value(attention, "compute.attention", "score_efficiency", p.attention_score_efficiency);
    w.value(attention, "compute.attention", "over_value_efficiency", p.attention_over_value_efficiency);
    if (!p.flash_forward_efficiency_vs_seq_length.x.empty()) {
        w.curve(attention, "compute.attention", "flash_forward_efficiency_vs_seq_length",
                p.flash_forward_efficiency_vs_seq_length);
        w.curve(attention, "compute.attention", "flash_backward_efficiency_vs_seq_length",
                p.flash_backward_efficiency_vs_seq_length);
    }
    if (!p.flash_forward_efficiency_vs_seq_length_head_dim_64.x.empty()) {
        const std::string h_path = "compute.attention.flash_head_dim_64";
        Json h64 = Json::object();
        w.curve(h64, h_path, "forward_efficiency_vs_seq_length",
                p.flash_forward_efficiency_vs_seq_length_head_dim_64);
        w.curve(h64, h_path, "backward_efficiency_vs_seq_length",
                p.flash_backward_efficiency_vs_seq_length_head_dim_64);
        w.note(h64, h_path);
        attention["flash_head_dim_64"] = std::move(h64);
    }
    w.note(attention, "compute.attention");
    compute["attention"] = std::move(attention);
    if (p.has_fp8()) {
        Json fp8 = Json::object();
        w.curve(fp8, "compute.gemm_fp8", "efficiency_vs_flops", p.fp8_gemm_efficiency_vs_flops);
        if (p.fp8_split_accumulator_slowdown != 1.0) {
            w.value(fp8, "compute.gemm_fp8", "split_accumulator_slowdown", p.fp8_split_accumulator_slowdown);
        }
        w.assumptions(fp8, "compute.gemm_fp8");
        w.note(fp8, "compute.gemm_fp8");
        compute["gemm_fp8"] = std::move(fp8);
    }

    w.note(compute, "compute");
    return compute;
}

Json memory_bound_section(const Writer& w, const HardwareProfile& p) {
    Json mb = Json::object();
    w.curve(mb, "memory_bound", "efficiency_vs_bytes", p.memory_bound_efficiency_vs_bytes);
    w.value(mb, "memory_bound", "launch_us", p.memory_bound_launch_us);
    Json factors = Json::object();
    std::size_t i = 0;
    for (const MemoryBoundKind k : kMemoryBoundKinds) {
        w.value(factors, "memory_bound.kind_factors", to_string(k), p.memory_bound_kind_factor.at(i++));
    }
    w.note(factors, "memory_bound.kind_factors");
    mb["kind_factors"] = std::move(factors);
    w.assumptions(mb, "memory_bound");
    w.note(mb, "memory_bound");
    return mb;
}

Json network_section(const Writer& w, const HardwareProfile& p) {
    Json intra = Json::object();
    const std::string ip = "network.intra_node";
    const IntraNodeLinks& a = p.intra_node;
    w.curve(intra, ip, "busbw_GBps_vs_bytes", a.busbw_GBps_vs_bytes);
    w.value(intra, ip, "measured_group_size", a.measured_group_size);
    w.value(intra, ip, "latency_base_us", a.latency_base_us);
    w.value(intra, ip, "latency_per_hop_us", a.latency_per_hop_us);
    w.value(intra, ip, "p2p_GBps", a.p2p_GBps);
    w.value(intra, ip, "p2p_latency_us", a.p2p_latency_us);
    w.value(intra, ip, "compute_share_while_overlapped", a.compute_share_while_overlapped);
    w.assumptions(intra, ip);
    w.note(intra, ip);

    Json inter = Json::object();
    const std::string ep = "network.inter_node";
    const InterNodeLinks& e = p.inter_node;
    w.value(inter, ep, "nic_GBps", e.nic_GBps);
    w.value(inter, ep, "nics_per_node", e.nics_per_node);
    w.curve(inter, ep, "busbw_efficiency_vs_bytes", e.busbw_efficiency_vs_bytes);
    w.value(inter, ep, "latency_base_us", e.latency_base_us);
    w.value(inter, ep, "ring_hop_latency_us", e.ring_hop_latency_us);
    w.value(inter, ep, "tree_hop_latency_us", e.tree_hop_latency_us);
    w.value(inter, ep, "p2p_latency_us", e.p2p_latency_us);
    w.value(inter, ep, "compute_share_while_overlapped", e.compute_share_while_overlapped);
    w.assumptions(inter, ep);
    w.note(inter, ep);

    Json network = Json::object();
    network["intra_node"] = std::move(intra);
    network["inter_node"] = std::move(inter);
    if (p.collective_contention) {
        Json contention = Json::object();
        const std::string cp = "network.collective_contention";
        const CollectiveContention& c = *p.collective_contention;
        w.value(contention, cp, "intra_node_channels", c.intra_node_channels);
        w.value(contention, cp, "inter_node_channels", c.inter_node_channels);
        w.value(contention, cp, "hbm_bytes_per_reduced_byte", c.hbm_bytes_per_reduced_byte);
        w.value(contention, cp, "hbm_bytes_per_copied_byte", c.hbm_bytes_per_copied_byte);
        w.assumptions(contention, cp);
        w.note(contention, cp);
        network["collective_contention"] = std::move(contention);
    }
    w.note(network, "network");
    return network;
}

}  // namespace

Json profile_to_json(const HardwareProfile& p) {
    const Writer w(p.provenance);
    Json root = Json::object();
    root["schema"] = "trainsim-hardware-profile/1";
    root["name"] = p.name;
    root["description"] = p.description;
    Json sources = Json::object();
    for (const auto& [id, citation] : p.provenance.sources) {
        sources[id] = citation;
    }
    root["sources"] = std::move(sources);

    Json gpu = Json::object();
    w.value(gpu, "gpu", "peak_tflops", p.peak_tflops);
    if (p.has_fp8()) {
        w.value(gpu, "gpu", "fp8_peak_tflops", p.fp8_peak_tflops);
    }
    if (p.compute_capability > 0.0) {
        w.value(gpu, "gpu", "compute_capability", p.compute_capability);
    }
    w.value(gpu, "gpu", "hbm_GBps", p.hbm_GBps);
    w.value(gpu, "gpu", "memory_visible_bytes", p.memory_visible.value);
    w.value(gpu, "gpu", "memory_reserved_bytes", p.memory_reserved.value);
    w.note(gpu, "gpu");
    root["gpu"] = std::move(gpu);

    Json node = Json::object();
    w.value(node, "node", "gpus_per_node", p.gpus_per_node);
    w.note(node, "node");
    root["node"] = std::move(node);

    root["compute"] = compute_section(w, p);
    root["memory_bound"] = memory_bound_section(w, p);
    root["network"] = network_section(w, p);

    if (p.host) {
        Json host = Json::object();
        w.value(host, "host", "kernel_launch_us", p.host->kernel_launch_us);
        w.value(host, "host", "op_dispatch_us", p.host->op_dispatch_us);
        w.value(host, "host", "collective_dispatch_us", p.host->collective_dispatch_us);
        w.note(host, "host");
        root["host"] = std::move(host);
    }
    if (p.variability) {
        Json variability = Json::object();
        w.value(variability, "variability", "gpu_slowdown_stddev", p.variability->gpu_slowdown_stddev);
        if (p.variability->kernel_jitter_stddev) {
            w.value(variability, "variability", "kernel_jitter_stddev", *p.variability->kernel_jitter_stddev);
        }
        w.note(variability, "variability");
        root["variability"] = std::move(variability);
    }
    w.note(root, "");
    return root;
}

}  // namespace trainsim::cost
