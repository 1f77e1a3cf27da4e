#include "calibrate/measure/measurement_file.h"

#include <algorithm>
#include <map>
#include <set>

#include "calibrate/measure/measurement_schema.h"
#include "calibrate/measure/source_id.h"
#include "calibrate/measure/strict_json.h"
#include "sim/core/units.h"

namespace trainsim::calibrate {

namespace {

// The keys of one object as the schema (measurements.schema.json) gives them: unknown keys are errors that
// suggest or list the valid ones.
void expect_schema_keys(const StrictJson& json, const OrderedJson& object, const std::string& path,
                        const std::string& definition) {
    const SchemaKeys& keys = measurement_schema_keys(definition);
    json.expect_keys(object, path, {keys.required.begin(), keys.required.end()},
                     {keys.optional.begin(), keys.optional.end()});
}

// Reads the records of one file; `file_id` is the file's own source id.
class RecordReader {
public:
    RecordReader(const StrictJson& json, std::set<std::string> table_ids, std::string file_id)
        : json_(json), table_ids_(std::move(table_ids)), file_id_(std::move(file_id)) {}

    Origin origin(const OrderedJson& r, const std::string& path) {
        Origin o;
        o.source_id = file_id_;
        o.record = path;
        if (r.contains("id")) {
            o.record = json_.text(r, path, "id");
            if (!ids_.insert(o.record).second) {
                json_.fail(member_path(path, "id"), "repeats the id '" + o.record + "' of an earlier record");
            }
        }
        o.source = json_.text(r, path, "source");
        const std::vector<std::string> cited = cited_source_ids(o.source);
        if (cited.empty()) {
            json_.fail(member_path(path, "source"), "must cite an id of the file's sources table (S-...)");
        }
        for (const std::string& id : cited) {
            if (table_ids_.count(id) == 0) {
                json_.fail(member_path(path, "source"),
                           "cites '" + id + "', which is not in the sources table");
            }
        }
        return o;
    }

    std::vector<std::string> tags(const OrderedJson& r, const std::string& path) const {
        return r.contains("tags") ? json_.text_list(r, path, "tags") : std::vector<std::string>{};
    }

    // Exactly one of `keys` must be present; returns its index.
    std::size_t one_of(const OrderedJson& r, const std::string& path,
                       const std::vector<std::string>& keys) const {
        std::size_t found = keys.size();
        for (std::size_t i = 0; i < keys.size(); ++i) {
            if (r.contains(keys[i])) {
                if (found != keys.size()) {
                    json_.fail(path, "must give only one of " + list(keys) + ", got " + keys[found] +
                                         " and " + keys[i]);
                }
                found = i;
            }
        }
        if (found == keys.size()) {
            json_.fail(path, "must give one of " + list(keys));
        }
        return found;
    }

private:
    static std::string list(const std::vector<std::string>& keys) {
        std::string s;
        for (const auto& k : keys) {
            s += (s.empty() ? "" : ", ") + k;
        }
        return s;
    }

    const StrictJson& json_;
    std::set<std::string> table_ids_;
    std::string file_id_;
    std::set<std::string> ids_;
};

GemmMeasurement read_gemm(const StrictJson& json, RecordReader& records, const OrderedJson& r,
                          const std::string& path) {
    expect_schema_keys(json, r, path, "gemm");
    GemmMeasurement g;
    g.origin = records.origin(r, path);
    g.shape.m = json.integer(r, path, "m", 1);
    g.shape.n = json.integer(r, path, "n", 1);
    g.shape.k = json.integer(r, path, "k", 1);
    g.shape.batch = r.contains("batch") ? json.integer(r, path, "batch", 1) : 1;
    if (r.contains("class")) {
        const std::string name = json.text(r, path, "class");
        const auto cls = gemm_class_from(name);
        if (!cls) {
            json.fail(member_path(path, "class"),
                      "must be one of dense, attention_score, attention_over_value, got '" + name + "'");
        }
        g.cls = *cls;
    }
    if (r.contains("dtype")) {
        g.dtype = json.text(r, path, "dtype");
    }
    if (records.one_of(r, path, {"time_us", "tflops"}) == 0) {
        g.seconds = json.positive_number(r, path, "time_us") * kSecondsPerMicrosecond;
    } else {
        g.tflops = json.positive_number(r, path, "tflops");
        g.seconds = g.shape.flops().value / (*g.tflops * kFlopsPerTflop);
    }
    g.tags = records.tags(r, path);
    return g;
}

KernelMeasurement read_kernel(const StrictJson& json, RecordReader& records, const OrderedJson& r,
                              const std::string& path) {
    expect_schema_keys(json, r, path, "kernel");
    KernelMeasurement k;
    k.origin = records.origin(r, path);
    const std::string name = json.text(r, path, "kernel");
    const auto kind = kernel_kind_from(name);
    if (!kind) {
        std::string all;
        for (const auto& n : kernel_kind_names()) {
            all += (all.empty() ? "" : ", ") + n;
        }
        json.fail(member_path(path, "kernel"), "must be one of " + all + ", got '" + name + "'");
    }
    k.kind = *kind;
    k.bytes_moved = json.integer(r, path, "bytes_moved", k.kind == KernelKind::Empty ? 0 : 1);
    if (records.one_of(r, path, {"time_us", "GBps"}) == 0) {
        k.seconds = json.positive_number(r, path, "time_us") * kSecondsPerMicrosecond;
    } else {
        if (k.kind == KernelKind::Empty) {
            json.fail(member_path(path, "GBps"), "has no meaning for the empty kernel; give time_us");
        }
        k.GBps = json.positive_number(r, path, "GBps");
        k.seconds = static_cast<double>(k.bytes_moved) / (*k.GBps * kBytesPerGB);
    }
    k.tags = records.tags(r, path);
    return k;
}

CollectiveMeasurement read_collective(const StrictJson& json, RecordReader& records, const OrderedJson& r,
                                      const std::string& path) {
    expect_schema_keys(json, r, path, "collective");
    CollectiveMeasurement c;
    c.origin = records.origin(r, path);
    const std::string name = json.text(r, path, "op");
    const auto op = collective_kind_from(name);
    if (!op) {
        json.fail(member_path(path, "op"),
                  "must be one of all_reduce, all_gather, reduce_scatter, send_recv, got '" + name + "'");
    }
    c.op = *op;
    c.ranks = static_cast<int>(json.integer(r, path, "ranks", 2, kMaxRanks));
    c.nodes = r.contains("nodes") ? static_cast<int>(json.integer(r, path, "nodes", 1, kMaxRanks)) : 1;
    if (c.nodes > c.ranks) {
        json.fail(member_path(path, "nodes"),
                  "must not exceed ranks (" + std::to_string(c.ranks) + "), got " + std::to_string(c.nodes));
    }
    c.bytes = json.integer(r, path, "bytes", 1);
    if (r.contains("placement")) {
        const std::string p = json.text(r, path, "placement");
        if (p != "out_of_place" && p != "in_place") {
            json.fail(member_path(path, "placement"), "must be out_of_place or in_place, got '" + p + "'");
        }
        c.placement = p == "in_place" ? Placement::InPlace : Placement::OutOfPlace;
    }
    if (r.contains("busbw_fraction")) {
        if (r.contains("time_us") || r.contains("busbw_GBps")) {
            json.fail(member_path(path, "busbw_fraction"),
                      "is a relative bandwidth; it cannot come with time_us or "
                      "busbw_GBps");
        }
        c.busbw_fraction = json.positive_number(r, path, "busbw_fraction");
    } else if (!r.contains("time_us") && !r.contains("busbw_GBps")) {
        json.fail(path, "must give time_us, busbw_GBps (or both), or busbw_fraction");
    }
    if (r.contains("time_us")) {
        c.seconds = json.positive_number(r, path, "time_us") * kSecondsPerMicrosecond;
    }
    if (r.contains("busbw_GBps")) {
        c.busbw_GBps = json.positive_number(r, path, "busbw_GBps");
    }
    c.tags = records.tags(r, path);
    return c;
}

std::optional<DeviceFact> read_fact(const StrictJson& json, const OrderedJson& device,
                                    const std::string& path, std::string_view key) {
    if (!device.contains(key)) {
        return std::nullopt;
    }
    const std::string p = member_path(path, key);
    const OrderedJson& f = json.object(device, path, key);
    expect_schema_keys(json, f, p, "fact");
    DeviceFact fact{json.positive_number(f, p, "value"), json.text(f, p, "kind"), json.text(f, p, "how")};
    if (fact.kind != "measured" && fact.kind != "derived") {
        json.fail(member_path(p, "kind"), "must be measured or derived, got '" + fact.kind + "'");
    }
    return fact;
}

DeviceFacts read_device(const StrictJson& json, const OrderedJson& root, const std::string& file_id) {
    const std::string path = "device";
    const OrderedJson& d = json.object(root, "", path);
    expect_schema_keys(json, d, path, "device");
    DeviceFacts facts;
    facts.source_id = file_id;
    facts.backend = json.text(d, path, "backend");
    facts.name = json.text(d, path, "name");
    facts.peak_tflops = read_fact(json, d, path, "peak_tflops");
    facts.hbm_GBps = read_fact(json, d, path, "hbm_GBps");
    facts.memory_bytes = read_fact(json, d, path, "memory_bytes");
    facts.num_sms = read_fact(json, d, path, "num_sms");
    facts.gpus_per_node = read_fact(json, d, path, "gpus_per_node");
    facts.compute_capability = read_fact(json, d, path, "compute_capability");
    if (d.contains("best_measured")) {
        for (const std::string& what : json.text_list(d, path, "best_measured")) {
            if (what == "peak_tflops") {
                facts.peak_is_best_measured = true;
            } else if (what == "hbm_GBps") {
                facts.hbm_is_best_measured = true;
            } else {
                json.fail(member_path(path, "best_measured"),
                          "may list peak_tflops and hbm_GBps, got '" + what + "'");
            }
        }
    }
    return facts;
}

OrderedJson fact_json(const DeviceFact& f) {
    OrderedJson j;
    j["value"] = f.value;
    j["kind"] = f.kind;
    j["how"] = f.how;
    return j;
}

OrderedJson tags_json(const std::vector<std::string>& tags) {
    OrderedJson j = OrderedJson::array();
    for (const auto& t : tags) {
        j.push_back(t);
    }
    return j;
}

std::string record_source(const Origin& o) {
    return o.source.empty() ? o.source_id + ": " + o.record : o.source;
}

}  // namespace

MeasurementSet parse_measurement_file(const std::string& text, const std::string& path) {
    const StrictJson json(path);
    const OrderedJson root = json.parse(text);
    expect_schema_keys(json, root, "", "");
    if (json.text(root, "", "schema") != kMeasurementSchema) {
        json.fail("schema", std::string("must be \"") + kMeasurementSchema + "\", got " +
                                describe_json(root.at("schema")));
    }
    (void)json.text(root, "", "description");

    MeasurementSet set;
    // The file's own id, unless its table already cites another file by that id (what `import x.log
    // --output x.json` writes): then the file is S-DATA-X-FILE, so that neither id is lost.
    std::string file_id = source_id_for_path(path);
    if (root.at("sources").is_object() && root.at("sources").contains(file_id)) {
        file_id += "-FILE";
    }
    set.files.push_back(
        {path, file_id,
         "measurement file " + display_path(path) + ": " + root.at("description").get<std::string>()});
    std::set<std::string> table_ids{file_id};
    for (const auto& [id, citation] : json.object(root, "", "sources").items()) {
        const std::string p = member_path("sources", id);
        if (!is_source_id(id)) {
            json.fail(p,
                      "is not a source id: ids are 'S-' then upper-case words joined by '-', e.g. S-AZURE");
        }
        if (!citation.is_string() || citation.get_ref<const std::string&>().empty()) {
            json.fail(p, "must be a non-empty citation string, got " + describe_json(citation));
        }
        table_ids.insert(id);
        set.sources.emplace_back(id, citation.get<std::string>());
    }
    RecordReader records(json, table_ids, file_id);
    if (root.contains("device")) {
        set.device = read_device(json, root, file_id);
    }
    if (root.contains("gemm")) {
        const OrderedJson& list = json.array(root, "", "gemm");
        for (std::size_t i = 0; i < list.size(); ++i) {
            set.gemms.push_back(read_gemm(json, records, list[i], element_path("gemm", i)));
        }
    }
    if (root.contains("kernels")) {
        const OrderedJson& list = json.array(root, "", "kernels");
        for (std::size_t i = 0; i < list.size(); ++i) {
            set.kernels.push_back(read_kernel(json, records, list[i], element_path("kernels", i)));
        }
    }
    if (root.contains("collectives")) {
        const OrderedJson& list = json.array(root, "", "collectives");
        for (std::size_t i = 0; i < list.size(); ++i) {
            set.collectives.push_back(
                read_collective(json, records, list[i], element_path("collectives", i)));
        }
    }
    if (set.empty()) {
        json.fail("", "has no records (gemm, kernels or collectives)");
    }
    return set;
}

MeasurementSet read_measurement_file(const std::string& path) {
    return parse_measurement_file(read_text_file(path), path);
}

namespace {

template <typename F> void for_each_origin(const MeasurementSet& set, F&& f) {
    for (const GemmMeasurement& g : set.gemms) {
        f(g.origin);
    }
    for (const KernelMeasurement& k : set.kernels) {
        f(k.origin);
    }
    for (const CollectiveMeasurement& c : set.collectives) {
        f(c.origin);
    }
}

}  // namespace

OrderedJson to_measurement_json(const MeasurementSet& set, const std::string& description) {
    OrderedJson root;
    root["schema"] = kMeasurementSchema;
    root["description"] = description;
    OrderedJson sources = OrderedJson::object();
    for (const InputFile& f : set.files) {
        sources[f.source_id] = f.citation;
    }
    for (const auto& [id, citation] : set.sources) {
        sources[id] = citation;
    }
    root["sources"] = sources;
    if (set.device) {
        const DeviceFacts& d = *set.device;
        OrderedJson device;
        device["backend"] = d.backend;
        device["name"] = d.name;
        const std::pair<const char*, const std::optional<DeviceFact>*> facts[] = {
            {"peak_tflops", &d.peak_tflops},     {"hbm_GBps", &d.hbm_GBps},
            {"memory_bytes", &d.memory_bytes},   {"num_sms", &d.num_sms},
            {"gpus_per_node", &d.gpus_per_node}, {"compute_capability", &d.compute_capability}};
        for (const auto& [key, fact] : facts) {
            if (*fact) {
                device[key] = fact_json(**fact);
            }
        }
        OrderedJson best = OrderedJson::array();
        if (d.peak_is_best_measured) {
            best.push_back("peak_tflops");
        }
        if (d.hbm_is_best_measured) {
            best.push_back("hbm_GBps");
        }
        if (!best.empty()) {
            device["best_measured"] = best;
        }
        root["device"] = device;
    }
    // Ids are unique within one input ("line 31") but not across inputs of one format; the reader wants
    // them unique in the file, so a repeated one is qualified with its input's source id.
    std::map<std::string, int> id_count;
    for_each_origin(set, [&](const Origin& o) { ++id_count[o.record]; });
    const auto record_id = [&](const Origin& o) {
        return id_count.at(o.record) > 1 ? o.source_id + " " + o.record : o.record;
    };
    if (!set.gemms.empty()) {
        OrderedJson list = OrderedJson::array();
        for (const GemmMeasurement& g : set.gemms) {
            OrderedJson r;
            r["id"] = record_id(g.origin);
            r["m"] = g.shape.m;
            r["n"] = g.shape.n;
            r["k"] = g.shape.k;
            r["batch"] = g.shape.batch;
            r["class"] = to_string(g.cls);
            if (!g.dtype.empty()) {
                r["dtype"] = g.dtype;
            }
            if (g.tflops) {
                r["tflops"] = *g.tflops;
            } else {
                r["time_us"] = g.seconds / kSecondsPerMicrosecond;
            }
            if (!g.tags.empty()) {
                r["tags"] = tags_json(g.tags);
            }
            r["source"] = record_source(g.origin);
            list.push_back(r);
        }
        root["gemm"] = list;
    }
    if (!set.kernels.empty()) {
        OrderedJson list = OrderedJson::array();
        for (const KernelMeasurement& k : set.kernels) {
            OrderedJson r;
            r["id"] = record_id(k.origin);
            r["kernel"] = to_string(k.kind);
            r["bytes_moved"] = k.bytes_moved;
            if (k.GBps) {
                r["GBps"] = *k.GBps;
            } else {
                r["time_us"] = k.seconds / kSecondsPerMicrosecond;
            }
            if (!k.tags.empty()) {
                r["tags"] = tags_json(k.tags);
            }
            r["source"] = record_source(k.origin);
            list.push_back(r);
        }
        root["kernels"] = list;
    }
    if (!set.collectives.empty()) {
        OrderedJson list = OrderedJson::array();
        for (const CollectiveMeasurement& c : set.collectives) {
            OrderedJson r;
            r["id"] = record_id(c.origin);
            r["op"] = cost::to_string(c.op);
            r["ranks"] = c.ranks;
            r["nodes"] = c.nodes;
            r["bytes"] = c.bytes;
            r["placement"] = to_string(c.placement);
            if (c.seconds) {
                r["time_us"] = *c.seconds / kSecondsPerMicrosecond;
            }
            if (c.busbw_GBps) {
                r["busbw_GBps"] = *c.busbw_GBps;
            }
            if (c.busbw_fraction) {
                r["busbw_fraction"] = *c.busbw_fraction;
            }
            if (!c.tags.empty()) {
                r["tags"] = tags_json(c.tags);
            }
            r["source"] = record_source(c.origin);
            list.push_back(r);
        }
        root["collectives"] = list;
    }
    return root;
}

}  // namespace trainsim::calibrate
