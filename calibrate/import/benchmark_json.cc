#include "calibrate/import/benchmark_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include "calibrate/measure/benchmark_name.h"
#include "calibrate/measure/run_context.h"
#include "calibrate/measure/source_id.h"
#include "calibrate/measure/strict_json.h"

namespace trainsim::calibrate {

namespace {

double seconds_per_unit(const StrictJson& json, const std::string& path, const std::string& unit) {
    if (unit == "ns") {
        return 1e-9;
    }
    if (unit == "us") {
        return 1e-6;
    }
    if (unit == "ms") {
        return 1e-3;
    }
    if (unit == "s") {
        return 1.0;
    }
    json.fail(member_path(path, "time_unit"), "must be ns, us, ms or s, got '" + unit + "'");
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The fields of one parsed name, checked against what its family needs.
class Fields {
public:
    Fields(const StrictJson& json, std::string path, const BenchmarkName& name)
        : json_(json), path_(std::move(path)), name_(name) {}

    std::string text(const std::string& key) const {
        for (const auto& [k, v] : name_.fields) {
            if (k == key) {
                return v;
            }
        }
        json_.fail(path_, "'" + name_.text() + "' has no " + key + ":VALUE field");
    }

    std::int64_t integer(const std::string& key, std::int64_t minimum,
                         std::int64_t maximum = std::numeric_limits<std::int64_t>::max()) const {
        const std::string v = text(key);
        std::int64_t i = 0;
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), i);
        if (ec != std::errc() || end != v.data() + v.size() || i < minimum || i > maximum) {
            const bool bounded = maximum < std::numeric_limits<std::int64_t>::max();
            json_.fail(path_,
                       "'" + name_.text() + "': " + key + " must be an integer " +
                           (bounded ? "from " + std::to_string(minimum) + " to " + std::to_string(maximum)
                                    : ">= " + std::to_string(minimum)) +
                           ", got '" + v + "'");
        }
        return i;
    }

    void only(const std::vector<std::string>& keys) const {
        for (const auto& [k, v] : name_.fields) {
            if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
                json_.fail(path_, "'" + name_.text() + "': unknown field " + k + " for a " + name_.family);
            }
        }
    }

    [[noreturn]] void fail(const std::string& rule) const {
        json_.fail(path_, "'" + name_.text() + "': " + rule);
    }

private:
    const StrictJson& json_;
    std::string path_;
    const BenchmarkName& name_;
};

std::optional<DeviceFact> context_fact(const StrictJson& json, const OrderedJson& context,
                                       std::string_view fact) {
    const std::string key = std::string(run_context::kPrefix) + std::string(fact);
    if (!context.contains(key)) {
        return std::nullopt;
    }
    const std::string path = member_path("context", key);
    const std::string text = json.text(context, "context", key);
    double value = 0.0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || !(value > 0.0) || !std::isfinite(value)) {
        json.fail(path, "must be a positive number, got '" + text + "'");
    }
    DeviceFact f;
    f.value = value;
    f.kind = context.contains(key + "_kind") ? json.text(context, "context", key + "_kind") : "measured";
    f.how = context.contains(key + "_how") ? json.text(context, "context", key + "_how") : "not stated";
    if (f.kind != "measured" && f.kind != "derived") {
        json.fail(path + "_kind", "must be measured or derived, got '" + f.kind + "'");
    }
    return f;
}

DeviceFacts read_context(const StrictJson& json, const OrderedJson& context, const std::string& file_id) {
    const std::string backend_key(run_context::kBackend);
    if (!context.contains(backend_key)) {
        json.fail(
            member_path("context", backend_key),
            "is missing: this file was not written by trainsim-calibrate run (its benchmark names are the "
            "records)");
    }
    DeviceFacts d;
    d.source_id = file_id;
    d.backend = json.text(context, "context", backend_key);
    const std::string device_key(run_context::kDevice);
    d.name = context.contains(device_key) ? json.text(context, "context", device_key) : d.backend;
    d.peak_tflops = context_fact(json, context, run_context::kFacts[0]);
    d.hbm_GBps = context_fact(json, context, run_context::kFacts[1]);
    d.memory_bytes = context_fact(json, context, run_context::kFacts[2]);
    d.num_sms = context_fact(json, context, run_context::kFacts[3]);
    d.gpus_per_node = context_fact(json, context, run_context::kFacts[4]);
    d.compute_capability = context_fact(json, context, run_context::kFacts[5]);
    const std::string best_key(run_context::kBestMeasured);
    if (context.contains(best_key)) {
        const std::string best = json.text(context, "context", best_key);
        d.peak_is_best_measured = best.find("peak_tflops") != std::string::npos;
        d.hbm_is_best_measured = best.find("hbm_GBps") != std::string::npos;
    }
    return d;
}

// One benchmark's selected time becomes one record.
void add_record(MeasurementSet& set, const StrictJson& json, const std::string& path,
                const std::string& run_name, double seconds, const std::string& file_id) {
    const BenchmarkName name = parse_benchmark_name(run_name);
    if (name.family.empty()) {
        json.fail(member_path(path, "name"), "'" + run_name +
                                                 "' is not a trainsim-calibrate benchmark name "
                                                 "(FAMILY/key:value/...)");
    }
    const Fields f(json, member_path(path, "name"), name);
    Origin origin{file_id, run_name, file_id + ": " + run_name};
    if (name.family == "gemm") {
        f.only({"m", "n", "k", "batch", "class", "dtype"});
        GemmMeasurement g;
        g.origin = origin;
        g.shape = {f.integer("m", 1), f.integer("n", 1), f.integer("k", 1), f.integer("batch", 1)};
        const auto cls = gemm_class_from(f.text("class"));
        if (!cls) {
            f.fail("class must be dense, attention_score or attention_over_value");
        }
        g.cls = *cls;
        g.dtype = f.text("dtype");
        g.seconds = seconds;
        set.gemms.push_back(g);
    } else if (name.family == "kernel") {
        f.only({"kind", "bytes", "dtype"});
        KernelMeasurement k;
        k.origin = origin;
        const auto kind = kernel_kind_from(f.text("kind"));
        if (!kind) {
            f.fail("kind '" + f.text("kind") + "' is not a kernel the benchmarks run");
        }
        k.kind = *kind;
        k.bytes_moved = f.integer("bytes", k.kind == KernelKind::Empty ? 0 : 1);
        k.seconds = seconds;
        set.kernels.push_back(k);
    } else if (name.family == "collective") {
        f.only({"op", "ranks", "nodes", "bytes", "dtype"});
        CollectiveMeasurement c;
        c.origin = origin;
        const auto op = collective_kind_from(f.text("op"));
        if (!op) {
            f.fail("op must be all_reduce, all_gather, reduce_scatter or send_recv");
        }
        c.op = *op;
        c.ranks = static_cast<int>(f.integer("ranks", 2, kMaxRanks));
        c.nodes = static_cast<int>(f.integer("nodes", 1, kMaxRanks));
        c.bytes = f.integer("bytes", 1);
        c.seconds = seconds;
        set.collectives.push_back(c);
    } else {
        f.fail("family must be gemm, kernel or collective");
    }
}

}  // namespace

MeasurementSet parse_benchmark_json(const std::string& text, const std::string& path) {
    const StrictJson json(path);
    const OrderedJson root = json.parse(text);
    json.expect_keys(root, "", {"context", "benchmarks"});
    const OrderedJson& context = json.object(root, "", "context");
    const std::string file_id = source_id_for_path(path);

    MeasurementSet set;
    set.device = read_context(json, context, file_id);
    std::string citation =
        "trainsim-calibrate run, " + set.device->backend + " backend on " + set.device->name;
    for (const char* key : {"date", "host_name"}) {
        if (context.contains(key) && context.at(key).is_string()) {
            citation += std::string(", ") + (std::string(key) == "date" ? "" : "host ") +
                        context.at(key).get<std::string>();
        }
    }
    set.files.push_back({path, file_id, citation + ", file " + display_path(path)});

    // Per benchmark: its median aggregate if written, else the median over its repetitions.
    std::map<std::string, std::vector<double>> iterations;
    std::map<std::string, double> medians;
    std::map<std::string, std::string> first_path;
    std::vector<std::string> order;
    const OrderedJson& benchmarks = json.array(root, "", "benchmarks");
    for (std::size_t i = 0; i < benchmarks.size(); ++i) {
        const std::string p = element_path("benchmarks", i);
        const OrderedJson& b = benchmarks[i];
        if (!b.is_object()) {
            json.fail(p, "must be an object, got " + describe_json(b));
        }
        const std::string name = json.text(b, p, "name");
        const std::string run_name = b.contains("run_name") ? json.text(b, p, "run_name") : name;
        if (b.value("error_occurred", false)) {
            set.warnings.push_back(path + ": " + run_name + " reported an error and was skipped: " +
                                   b.value("error_message", std::string("(no message)")));
            continue;
        }
        const std::string run_type = b.contains("run_type") ? json.text(b, p, "run_type") : "iteration";
        // Only the median is read: a stddev or cv aggregate of identical repetitions is legitimately 0.
        if (run_type == "aggregate" && json.text(b, p, "aggregate_name") != "median") {
            if (first_path.emplace(run_name, p).second) {
                order.push_back(run_name);
            }
            continue;
        }
        const double seconds =
            json.positive_number(b, p, "real_time") * seconds_per_unit(json, p, json.text(b, p, "time_unit"));
        if (first_path.emplace(run_name, p).second) {
            order.push_back(run_name);
        }
        if (run_type == "aggregate") {
            if (json.text(b, p, "aggregate_name") == "median") {
                medians[run_name] = seconds;
            }
        } else if (run_type == "iteration") {
            iterations[run_name].push_back(seconds);
        } else {
            json.fail(member_path(p, "run_type"), "must be iteration or aggregate, got '" + run_type + "'");
        }
    }
    for (const std::string& run_name : order) {
        const auto m = medians.find(run_name);
        const auto it = iterations.find(run_name);
        if (m == medians.end() && it == iterations.end()) {
            json.fail(first_path[run_name], "'" + run_name +
                                                "' has aggregates but no median (run with "
                                                "--repetitions and the default aggregates)");
        }
        const double seconds = m != medians.end() ? m->second : median(it->second);
        add_record(set, json, first_path[run_name], run_name, seconds, file_id);
    }
    if (set.empty()) {
        json.fail("benchmarks", "holds no measurement (every benchmark failed or none ran)");
    }
    return set;
}

MeasurementSet read_benchmark_json(const std::string& path) {
    return parse_benchmark_json(read_text_file(path), path);
}

}  // namespace trainsim::calibrate
