#include "sim/cost/hardware_profile.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/core/input_error.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/format_number.h"
#include "sim/cost/profile_reader.h"

namespace trainsim::cost {

namespace {

namespace fs = std::filesystem;

// The format version this loader reads; a file written for another version fails with a clear message.
constexpr std::string_view kSchema = "trainsim-hardware-profile/1";

bool is_bare_name(const std::string& s) {
    return s.find('/') == std::string::npos && !s.ends_with(".json");
}

std::string available_profiles(const std::string& dir) {
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() == ".json") {
            names.push_back(it->path().stem().string());
        }
    }
    std::sort(names.begin(), names.end());  // directory order is not deterministic
    std::string list;
    for (const auto& n : names) {
        list += (list.empty() ? "" : ", ") + n;
    }
    return list.empty() ? "none" : list;
}

int to_int(const ProfileReader& r, std::int64_t v, const std::string& path) {
    if (v > INT_MAX) {
        r.fail(path, "is too large, got " + std::to_string(v));
    }
    return static_cast<int>(v);
}

void read_gemm(const ProfileReader& r, const ProfileJson& compute, HardwareProfile& p) {
    const std::string path = "compute.gemm";
    const ProfileJson& gemm = r.section(compute, "compute", "gemm");
    r.expect_keys(gemm, path, {"efficiency_vs_flops", "min_kernel_us", "wave_quantization"}, {"assumptions"});
    p.gemm_efficiency_vs_flops = r.curve(gemm, path, "efficiency_vs_flops", YRule::Efficiency);
    p.gemm_min_kernel_us = r.positive(gemm, path, "min_kernel_us");
    const std::string wq_path = path + ".wave_quantization";
    const ProfileJson& wq = r.section(gemm, path, "wave_quantization");
    r.expect_keys(wq, wq_path, {"num_sms", "tile_m", "tile_n"});
    p.num_sms = to_int(r, r.positive_integer(wq, wq_path, "num_sms"), wq_path + ".num_sms.value");
    p.tile_m = to_int(r, r.positive_integer(wq, wq_path, "tile_m"), wq_path + ".tile_m.value");
    p.tile_n = to_int(r, r.positive_integer(wq, wq_path, "tile_n"), wq_path + ".tile_n.value");
    r.assumptions(gemm, path);

    // FP8 GEMMs (Hopper and later): their own curve against their own peak, since an FP8 GEMM reaches a
    // different fraction of a peak twice as high (hardware.md §2.4: 0.71 of 1979 at best on H100, BF16
    // 0.80 of 989). Optional: a profile without it cannot run training.fp8_format.
    const bool fp8_curve = compute.contains("gemm_fp8");
    if (fp8_curve != p.has_fp8()) {
        r.fail(fp8_curve ? "compute.gemm_fp8" : "gpu.fp8_peak_tflops",
               fp8_curve ? "requires gpu.fp8_peak_tflops (the peak its efficiencies are fractions of)"
                         : "requires compute.gemm_fp8 (the FP8 GEMM efficiency curve)");
    }
    if (fp8_curve) {
        const std::string f_path = "compute.gemm_fp8";
        const ProfileJson& fp8 = r.section(compute, "compute", "gemm_fp8");
        r.expect_keys(fp8, f_path, {"efficiency_vs_flops"}, {"assumptions", "split_accumulator_slowdown"});
        p.fp8_gemm_efficiency_vs_flops = r.curve(fp8, f_path, "efficiency_vs_flops", YRule::Efficiency);
        if (fp8.contains("split_accumulator_slowdown")) {
            // A time factor: promoting partial sums adds work, so it cannot make the GEMM faster.
            const double x = r.positive(fp8, f_path, "split_accumulator_slowdown");
            if (x < 1.0) {
                r.fail(
                    f_path + ".split_accumulator_slowdown.value",
                    "must be at least 1 (the time of a split-accumulator FP8 GEMM over the fast-accumulation "
                    "curve's), got " +
                        format_number(x));
            }
            p.fp8_split_accumulator_slowdown = x;
        }
        r.assumptions(fp8, f_path);
    }

    const std::string a_path = "compute.attention";
    const ProfileJson& attention = r.section(compute, "compute", "attention");
    r.expect_keys(attention, a_path, {"score_efficiency", "over_value_efficiency"},
                  {"flash_forward_efficiency_vs_seq_length", "flash_backward_efficiency_vs_seq_length",
                   "flash_head_dim_64"});
    p.attention_score_efficiency = r.efficiency(attention, a_path, "score_efficiency");
    p.attention_over_value_efficiency = r.efficiency(attention, a_path, "over_value_efficiency");
    if (attention.contains("flash_forward_efficiency_vs_seq_length") ||
        attention.contains("flash_backward_efficiency_vs_seq_length")) {
        p.flash_forward_efficiency_vs_seq_length =
            r.curve(attention, a_path, "flash_forward_efficiency_vs_seq_length", YRule::Efficiency);
        p.flash_backward_efficiency_vs_seq_length =
            r.curve(attention, a_path, "flash_backward_efficiency_vs_seq_length", YRule::Efficiency);
    }
    if (attention.contains("flash_head_dim_64")) {
        if (p.flash_forward_efficiency_vs_seq_length.x.empty()) {
            r.fail(
                a_path + ".flash_head_dim_64",
                "requires flash_forward_efficiency_vs_seq_length and flash_backward_efficiency_vs_seq_length "
                "(the head-dimension-128 curves it is interpolated against)");
        }
        const std::string h_path = a_path + ".flash_head_dim_64";
        const ProfileJson& h64 = r.section(attention, a_path, "flash_head_dim_64");
        r.expect_keys(h64, h_path, {"forward_efficiency_vs_seq_length", "backward_efficiency_vs_seq_length"});
        p.flash_forward_efficiency_vs_seq_length_head_dim_64 =
            r.curve(h64, h_path, "forward_efficiency_vs_seq_length", YRule::Efficiency);
        p.flash_backward_efficiency_vs_seq_length_head_dim_64 =
            r.curve(h64, h_path, "backward_efficiency_vs_seq_length", YRule::Efficiency);
    }
}

void read_memory_bound(const ProfileReader& r, const ProfileJson& root, HardwareProfile& p) {
    const std::string path = "memory_bound";
    const ProfileJson& mb = r.section(root, "", path);
    r.expect_keys(mb, path, {"efficiency_vs_bytes", "launch_us", "kind_factors"}, {"assumptions"});
    p.memory_bound_efficiency_vs_bytes = r.curve(mb, path, "efficiency_vs_bytes", YRule::Efficiency);
    p.memory_bound_launch_us = r.positive(mb, path, "launch_us");
    const std::string f_path = path + ".kind_factors";
    const ProfileJson& factors = r.section(mb, path, "kind_factors");
    std::vector<std::string_view> keys;
    for (const MemoryBoundKind k : kMemoryBoundKinds) {
        keys.emplace_back(to_string(k));
    }
    r.expect_keys(factors, f_path, keys);
    p.memory_bound_kind_factor.clear();
    for (const MemoryBoundKind k : kMemoryBoundKinds) {
        p.memory_bound_kind_factor.push_back(r.efficiency(factors, f_path, to_string(k)));
    }
    r.assumptions(mb, path);
}

// The fraction of the GPU's compute a running collective takes from kernels that overlap it.
double read_share(const ProfileReader& r, const ProfileJson& s, const std::string& path) {
    const double share = r.positive(s, path, "compute_share_while_overlapped");
    if (share >= 1.0) {
        r.fail(path + ".compute_share_while_overlapped.value",
               "must be less than 1, got " + format_number(share));
    }
    return share;
}

void read_intra_node(const ProfileReader& r, const ProfileJson& network, HardwareProfile& p) {
    const std::string path = "network.intra_node";
    const ProfileJson& s = r.section(network, "network", "intra_node");
    r.expect_keys(s, path,
                  {"busbw_GBps_vs_bytes", "measured_group_size", "latency_base_us", "latency_per_hop_us",
                   "p2p_GBps", "p2p_latency_us", "compute_share_while_overlapped"},
                  {"assumptions"});
    IntraNodeLinks& l = p.intra_node;
    l.compute_share_while_overlapped = read_share(r, s, path);
    l.busbw_GBps_vs_bytes = r.curve(s, path, "busbw_GBps_vs_bytes", YRule::Positive);
    const std::string n_path = path + ".measured_group_size.value";
    l.measured_group_size = to_int(r, r.positive_integer(s, path, "measured_group_size"), n_path);
    if (l.measured_group_size < 2 || l.measured_group_size > p.gpus_per_node) {
        r.fail(n_path, "must be between 2 and node.gpus_per_node (" + std::to_string(p.gpus_per_node) +
                           "), got " + std::to_string(l.measured_group_size));
    }
    l.latency_base_us = r.positive(s, path, "latency_base_us");
    l.latency_per_hop_us = r.positive(s, path, "latency_per_hop_us");
    l.p2p_GBps = r.positive(s, path, "p2p_GBps");
    l.p2p_latency_us = r.positive(s, path, "p2p_latency_us");
    r.assumptions(s, path);

    // The cost model splits each measured time into this latency and a bandwidth part (README "Costs"),
    // so the latency must be below every measured time.
    const int n = l.measured_group_size;
    const double latency_us = l.ring_latency_us(2 * (n - 1));
    const double factor = 2.0 * (n - 1) / n;
    const Curve& c = l.busbw_GBps_vs_bytes;
    for (std::size_t i = 0; i < c.x.size(); ++i) {
        const double measured_us = c.x[i] * factor / (c.y[i] * 1e9) * 1e6;  // bytes / (GB/s) in µs
        if (!(latency_us < measured_us)) {
            r.fail(
                path + ".latency_base_us",
                "gives an all-reduce latency of " + format_number(latency_us) +
                    " us at n=" + std::to_string(n) +
                    " (latency_base_us + 2(n-1)*latency_per_hop_us), which must be less than every measured "
                    "time; busbw_GBps_vs_bytes.points[" +
                    std::to_string(i) + "] takes " + format_number(measured_us) + " us");
        }
    }
}

void read_inter_node(const ProfileReader& r, const ProfileJson& network, HardwareProfile& p) {
    const std::string path = "network.inter_node";
    const ProfileJson& s = r.section(network, "network", "inter_node");
    r.expect_keys(s, path,
                  {"nic_GBps", "nics_per_node", "busbw_efficiency_vs_bytes", "latency_base_us",
                   "ring_hop_latency_us", "tree_hop_latency_us", "p2p_latency_us",
                   "compute_share_while_overlapped"},
                  {"assumptions"});
    InterNodeLinks& l = p.inter_node;
    l.compute_share_while_overlapped = read_share(r, s, path);
    l.nic_GBps = r.positive(s, path, "nic_GBps");
    l.nics_per_node = to_int(r, r.positive_integer(s, path, "nics_per_node"), path + ".nics_per_node.value");
    l.busbw_efficiency_vs_bytes = r.curve(s, path, "busbw_efficiency_vs_bytes", YRule::Efficiency);
    l.latency_base_us = r.positive(s, path, "latency_base_us");
    l.ring_hop_latency_us = r.positive(s, path, "ring_hop_latency_us");
    l.tree_hop_latency_us = r.positive(s, path, "tree_hop_latency_us");
    l.p2p_latency_us = r.positive(s, path, "p2p_latency_us");
    r.assumptions(s, path);
}

// Optional sections: older profiles without them still load; the scenario keys that need them say so.
void read_collective_contention(const ProfileReader& r, const ProfileJson& network, HardwareProfile& p) {
    if (!network.contains("collective_contention")) {
        return;
    }
    const std::string path = "network.collective_contention";
    const ProfileJson& s = r.section(network, "network", "collective_contention");
    r.expect_keys(s, path,
                  {"intra_node_channels", "inter_node_channels", "hbm_bytes_per_reduced_byte",
                   "hbm_bytes_per_copied_byte"},
                  {"assumptions"});
    // NCCL runs at most MAXCHANNELS (src/include/device.h: 64) channels, one CTA each. That compute keeps
    // an SM is checked where the model is used (check_fits_profile): a profile fitted on a CPU keeps its
    // base's section beside its one "SM".
    constexpr int kNcclMaxChannels = 64;
    auto channels = [&](std::string_view key) {
        const std::string v_path = path + "." + std::string(key) + ".value";
        const int c = to_int(r, r.positive_integer(s, path, key), v_path);
        if (c > kNcclMaxChannels) {
            r.fail(v_path, "must be at most NCCL's 64 channels (MAXCHANNELS), got " + std::to_string(c));
        }
        return c;
    };
    CollectiveContention c;
    c.intra_node_channels = channels("intra_node_channels");
    c.inter_node_channels = channels("inter_node_channels");
    c.hbm_bytes_per_reduced_byte = r.positive(s, path, "hbm_bytes_per_reduced_byte");
    c.hbm_bytes_per_copied_byte = r.positive(s, path, "hbm_bytes_per_copied_byte");
    r.assumptions(s, path);
    p.collective_contention = c;
}

void read_host(const ProfileReader& r, const ProfileJson& root, HardwareProfile& p) {
    if (!root.contains("host")) {
        return;
    }
    const ProfileJson& s = r.section(root, "", "host");
    r.expect_keys(s, "host", {"kernel_launch_us", "op_dispatch_us", "collective_dispatch_us"});
    HostCosts h;
    h.kernel_launch_us = r.positive(s, "host", "kernel_launch_us");
    h.op_dispatch_us = r.positive(s, "host", "op_dispatch_us");
    h.collective_dispatch_us = r.positive(s, "host", "collective_dispatch_us");
    p.host = h;
}

void read_variability(const ProfileReader& r, const ProfileJson& root, HardwareProfile& p) {
    if (!root.contains("variability")) {
        return;
    }
    const ProfileJson& s = r.section(root, "", "variability");
    r.expect_keys(s, "variability", {"gpu_slowdown_stddev"}, {"kernel_jitter_stddev"});
    GpuVariability v;
    // A spread of half the median speed or more is a broken GPU (or a broken measurement), not jitter.
    auto spread = [&](std::string_view key) {
        const double x = r.positive(s, "variability", key);
        if (x >= 0.5) {
            r.fail("variability." + std::string(key) + ".value",
                   "must be less than 0.5 (a spread of half the median speed or more is a broken GPU, not "
                   "variability), got " +
                       format_number(x));
        }
        return x;
    };
    v.gpu_slowdown_stddev = spread("gpu_slowdown_stddev");
    if (s.contains("kernel_jitter_stddev")) {
        v.kernel_jitter_stddev = spread("kernel_jitter_stddev");
    }
    p.variability = v;
}

}  // namespace

HardwareProfile profile_from_json(const std::string& label, const ProfileJson& root) {
    ProfileProvenance provenance;
    const ProfileReader r(label, root, provenance);
    r.expect_keys(
        root, "",
        {"schema", "name", "description", "sources", "gpu", "node", "compute", "memory_bound", "network"},
        {"host", "variability"});
    if (r.text(root, "", "schema") != kSchema) {
        r.fail("schema", "must be \"" + std::string(kSchema) + "\", got \"" +
                             printable_key(root.at("schema").get<std::string>()) + "\"");
    }
    HardwareProfile p;
    p.name = r.text(root, "", "name");
    if (p.name != label) {
        r.fail("name", "must match the file name '" + printable_key(label) + "', got '" +
                           printable_key(p.name) + "'");
    }
    p.description = r.text(root, "", "description");

    const ProfileJson& gpu = r.section(root, "", "gpu");
    r.expect_keys(gpu, "gpu", {"peak_tflops", "hbm_GBps", "memory_visible_bytes", "memory_reserved_bytes"},
                  {"fp8_peak_tflops", "compute_capability"});
    p.peak_tflops = r.positive(gpu, "gpu", "peak_tflops");
    if (gpu.contains("fp8_peak_tflops")) {
        p.fp8_peak_tflops = r.positive(gpu, "gpu", "fp8_peak_tflops");
    }
    if (gpu.contains("compute_capability")) {
        p.compute_capability = r.positive(gpu, "gpu", "compute_capability");
    }
    p.hbm_GBps = r.positive(gpu, "gpu", "hbm_GBps");
    p.memory_visible = Bytes{r.positive_integer(gpu, "gpu", "memory_visible_bytes")};
    p.memory_reserved = Bytes{r.positive_integer(gpu, "gpu", "memory_reserved_bytes")};
    if (p.memory_reserved >= p.memory_visible) {
        r.fail("gpu.memory_reserved_bytes.value", "must be less than gpu.memory_visible_bytes (" +
                                                      std::to_string(p.memory_visible.value) + "), got " +
                                                      std::to_string(p.memory_reserved.value));
    }

    const ProfileJson& node = r.section(root, "", "node");
    r.expect_keys(node, "node", {"gpus_per_node"});
    p.gpus_per_node =
        to_int(r, r.positive_integer(node, "node", "gpus_per_node"), "node.gpus_per_node.value");

    const ProfileJson& compute = r.section(root, "", "compute");
    r.expect_keys(compute, "compute", {"gemm", "attention"}, {"gemm_fp8"});
    read_gemm(r, compute, p);
    read_memory_bound(r, root, p);

    const ProfileJson& network = r.section(root, "", "network");
    r.expect_keys(network, "network", {"intra_node", "inter_node"}, {"collective_contention"});
    read_intra_node(r, network, p);
    read_inter_node(r, network, p);
    read_collective_contention(r, network, p);
    read_host(r, root, p);
    read_variability(r, root, p);
    p.provenance = std::move(provenance);
    return p;
}

HardwareProfile load_hardware_profile(const std::string& name_or_path, const std::string& search_dir) {
    const bool bare = is_bare_name(name_or_path);
    const fs::path path = bare ? fs::path(search_dir) / (name_or_path + ".json") : fs::path(name_or_path);
    std::error_code ec;
    if (bare && !fs::is_regular_file(path, ec)) {
        throw InputError("hardware.profile: no profile named '" + printable_key(name_or_path) + "' in " +
                         search_dir + " (available: " + available_profiles(search_dir) + ")");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in || fs::is_directory(path, ec)) {
        throw InputError("hardware.profile: cannot open " + printable_key(path.string()));
    }
    std::ostringstream text;
    text << in.rdbuf();

    const std::string label = path.stem().string();
    const ProfileJson root = parse_profile_json(text.str(), printable_key(label));
    return profile_from_json(label, root);
}

}  // namespace trainsim::cost
