#include "calibrate/import/kineto_trace_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "calibrate/import/kineto_compressed_input.h"
#include "calibrate/import/kineto_event_stream.h"
#include "sim/core/input_error.h"

namespace trainsim::kineto {

namespace {

using Json = nlohmann::json;

// A number of the file's time unit as a whole part and thousandths, from an integer or from the number's
// text ("4458676522690.655").
struct Fixed {
    std::int64_t whole = 0;
    std::int64_t thousandths = 0;  // same sign as whole
};

Fixed fixed(const Json& v) {
    if (v.is_number_integer()) {
        return {v.get<std::int64_t>(), 0};
    }
    double d = 0.0;
    if (v.is_number()) {
        d = v.get<double>();
    } else if (v.is_string()) {
        const std::string& s = v.get_ref<const std::string&>();
        if (s.find_first_of("eE") == std::string::npos) {
            const std::size_t dot = s.find('.');
            Fixed f;
            std::from_chars(s.data(), s.data() + (dot == std::string::npos ? s.size() : dot), f.whole);
            if (dot != std::string::npos) {
                std::string digits = s.substr(dot + 1, 4);
                digits.resize(4, '0');
                std::int64_t four = 0;
                std::from_chars(digits.data(), digits.data() + 4, four);
                f.thousandths = (four + 5) / 10;  // three decimals, rounded
                if (!s.empty() && s[0] == '-') {
                    f.thousandths = -f.thousandths;
                }
            }
            return f;
        }
        d = std::strtod(s.c_str(), nullptr);
    }
    if (!std::isfinite(d) || std::fabs(d) > 9e15) {
        return {0, 0};  // not a time any trace writes; read as 0 rather than overflow
    }
    const double whole = std::trunc(d);
    return {static_cast<std::int64_t>(whole), std::llround((d - whole) * 1000.0)};
}

std::int64_t integer(const Json& object, const char* key, std::int64_t fallback) {
    const auto it = object.find(key);
    if (it == object.end()) {
        return fallback;
    }
    if (it->is_number_integer()) {
        return it->get<std::int64_t>();
    }
    if (it->is_number()) {
        const double d = it->get<double>();
        return std::isfinite(d) && std::fabs(d) < 9e18 ? static_cast<std::int64_t>(d) : fallback;
    }
    return fallback;
}

std::string text(const Json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string lowercase(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

Vendor vendor_of(const std::string& device_name) {
    const std::string n = lowercase(device_name);
    if (n.find("mtia") != std::string::npos) {
        return Vendor::Mtia;
    }
    if (n.find("amd") != std::string::npos || n.find("instinct") != std::string::npos ||
        n.find("radeon") != std::string::npos || n.find("gfx") != std::string::npos) {
        return Vendor::Rocm;
    }
    if (n.find("nvidia") != std::string::npos || n.find("tesla") != std::string::npos ||
        n.find("geforce") != std::string::npos || n.find("quadro") != std::string::npos) {
        return Vendor::Nvidia;
    }
    return Vendor::Unknown;
}

const char* to_string(Vendor v) {
    switch (v) {
    case Vendor::Nvidia:
        return "NVIDIA";
    case Vendor::Rocm:
        return "ROCm";
    case Vendor::Mtia:
        return "MTIA";
    case Vendor::Unknown:
        break;
    }
    return "unknown vendor";
}

std::vector<std::int64_t> dims_of(const Json& v) {
    std::vector<std::int64_t> dims;
    if (!v.is_array()) {
        return dims;
    }
    for (const Json& d : v) {
        if (!d.is_number_integer()) {
            return {};  // a list of tensors, or something else: no single shape
        }
        dims.push_back(d.get<std::int64_t>());
    }
    return dims;
}

// Turns trace events into the Trace's records, one at a time.
class EventSink : public EventConsumer {
public:
    explicit EventSink(Trace& trace) : trace_(trace) {}

    [[nodiscard]] bool wants_member(const std::string& key) const override {
        return key == "deviceProperties" || key == "distributedInfo" || key == "displayTimeUnit";
    }

    void event(const Json& e) override {
        ++trace_.events;
        if (!e.is_object() || text(e, "ph") != "X") {
            return;
        }
        static const Json kNoArgs = Json::object();
        const auto args_it = e.find("args");
        const Json& args = args_it != e.end() && args_it->is_object() ? *args_it : kNoArgs;
        const std::string cat = lowercase(text(e, "cat"));
        if (args.contains("phase") && args.contains("category")) {
            labelled(e, args);
        } else if (cat == "kernel" || cat == "gpu_memcpy" || cat == "memcpy" || cat == "gpu_memset" ||
                   cat == "memset") {
            gpu(e, args, cat);
        } else if (cat == "cuda_runtime" || cat == "runtime" || cat == "cuda_driver") {
            launch(e, args);
        } else if (cat == "cpu_op" || cat == "operator" || cat == "user_annotation") {
            cpu_op(e, args);
        } else if (cat.rfind("mtia", 0) == 0) {
            ++mtia_events_;
        }
    }

    // Top-level members other than traceEvents.
    void member(const std::string& key, const Json& v) override {
        if (key == "deviceProperties" && v.is_array()) {
            for (const Json& d : v) {
                if (d.is_object()) {
                    Device device{integer(d, "id", 0), text(d, "name"), Vendor::Unknown};
                    device.vendor = vendor_of(device.name);
                    trace_.devices.push_back(device);
                }
            }
        } else if (key == "distributedInfo" && v.is_object()) {
            if (v.contains("rank")) {
                trace_.rank = static_cast<int>(integer(v, "rank", 0));
            }
            if (v.contains("world_size")) {
                trace_.world_size = static_cast<int>(integer(v, "world_size", 0));
            }
        } else if (key == "displayTimeUnit" && v.is_string()) {
            trace_.nanosecond_clock = v.get<std::string>() == "ns";
        }
    }

    // Clock unit and vendors are known only once the whole file is read (Kineto writes
    // displayTimeUnit after the events). Until then times are thousandths of the file's unit, timestamps
    // relative to the first one read: a nanosecond timestamp of 1.7e18 times 1000 would overflow.
    void finish() {
        const bool ns = trace_.nanosecond_clock;
        if (!ns && (base_ > kMaxMicroseconds || base_ < -kMaxMicroseconds)) {
            throw InputError(trace_.path + ": timestamps of " + std::to_string(base_) +
                             " are too large for microseconds (a nanosecond trace without "
                             "\"displayTimeUnit\": \"ns\"?)");
        }
        auto at = [&](std::int64_t& t) { t = ns ? base_ + t / 1000 : base_ * 1000 + t; };
        auto span = [&](std::int64_t& t) { t = ns ? t / 1000 : t; };
        for (GpuEvent& g : trace_.gpu) {
            at(g.ts_ns);
            span(g.dur_ns);
        }
        for (CpuOp& op : trace_.cpu_ops) {
            at(op.ts_ns);
            span(op.dur_ns);
        }
        for (RuntimeLaunch& l : trace_.launches) {
            at(l.ts_ns);
        }
        for (Step& s : trace_.steps) {
            at(s.ts_ns);
            span(s.dur_ns);
        }
        for (LabelledSlice& s : trace_.labelled) {
            at(s.ts_ns);
            span(s.dur_ns);
        }
        skip_other_vendors();
    }

private:
    // Beyond this a microsecond timestamp times 1000 leaves int64 nanoseconds (year 2262).
    static constexpr std::int64_t kMaxMicroseconds = 9'000'000'000'000'000;

    // A timestamp in thousandths of the file's unit after base_ (the first timestamp's whole part).
    std::int64_t timestamp(const Json& e) {
        const Fixed f = fixed(e.value("ts", Json(0)));
        if (!has_base_) {
            base_ = f.whole;
            has_base_ = true;
        }
        std::int64_t t = 0;
        if (__builtin_sub_overflow(f.whole, base_, &t) || __builtin_mul_overflow(t, 1000, &t)) {
            throw InputError(trace_.path + ": timestamps " + std::to_string(base_) + " and " +
                             std::to_string(f.whole) + " are too far apart to be one trace's");
        }
        return t + f.thousandths;
    }
    // A duration in thousandths of the file's unit.
    std::int64_t duration(const Json& e) const {
        const Fixed f = fixed(e.value("dur", Json(0)));
        std::int64_t t = 0;
        if (__builtin_mul_overflow(f.whole, 1000, &t)) {
            throw InputError(trace_.path + ": a duration of " + std::to_string(f.whole) + " is not a time");
        }
        return t + f.thousandths;
    }

    std::uint32_t intern(const std::string& name) {
        const auto [it, added] = index_.try_emplace(name, static_cast<std::uint32_t>(trace_.names.size()));
        if (added) {
            trace_.names.push_back(name);
        }
        return it->second;
    }

    std::int32_t collective(const Json& args) {
        if (!args.contains("Collective name")) {
            return -1;
        }
        CollectiveArgs c;
        c.name = text(args, "Collective name");
        c.in_nelems = integer(args, "In msg nelems", -1);
        c.out_nelems = integer(args, "Out msg nelems", -1);
        c.group_size = static_cast<int>(std::clamp<std::int64_t>(integer(args, "Group size", 0), 0, 1 << 30));
        c.dtype = text(args, "dtype");
        c.group_ranks = text(args, "Process Group Ranks");
        trace_.collectives.push_back(std::move(c));
        return static_cast<std::int32_t>(trace_.collectives.size() - 1);
    }

    void gpu(const Json& e, const Json& args, const std::string& cat) {
        GpuEvent g;
        g.activity = cat == "kernel"                           ? GpuActivity::Kernel
                     : cat.find("memcpy") != std::string::npos ? GpuActivity::Memcpy
                                                               : GpuActivity::Memset;
        const std::string name = text(e, "name");
        g.name = intern(name);
        g.ts_ns = timestamp(e);
        g.dur_ns = duration(e);
        g.device = integer(args, "device", integer(e, "pid", 0));
        g.stream = integer(args, "stream", integer(e, "tid", 0));
        g.correlation = integer(args, "correlation", -1);
        g.external_id = integer(args, "External id", -1);
        g.bytes = integer(args, "bytes", -1);
        g.collective = collective(args);
        if (g.activity == GpuActivity::Memcpy) {
            // "Memcpy DtoD (Device -> Device)" → "DtoD"
            const std::size_t start = name.find(' ');
            const std::size_t end = start == std::string::npos ? start : name.find(' ', start + 1);
            g.memcpy_kind = intern(start == std::string::npos ? "" : name.substr(start + 1, end - start - 1));
        }
        trace_.gpu.push_back(g);
    }

    void launch(const Json& e, const Json& args) {
        if (!args.contains("correlation")) {
            return;
        }
        if (!saw_hip_ && text(e, "name").rfind("hip", 0) == 0) {
            saw_hip_ = true;
        }
        RuntimeLaunch l;
        l.pid = integer(e, "pid", 0);
        l.tid = integer(e, "tid", 0);
        l.ts_ns = timestamp(e);
        l.correlation = integer(args, "correlation", -1);
        l.external_id = integer(args, "External id", -1);
        trace_.launches.push_back(l);
    }

    void cpu_op(const Json& e, const Json& args) {
        const std::string name = text(e, "name");
        if (name.rfind("ProfilerStep#", 0) == 0) {
            trace_.steps.push_back({timestamp(e), duration(e), integer(e, "tid", 0)});
            return;
        }
        if (!is_kept_cpu_op(name)) {
            return;
        }
        CpuOp op;
        op.name = intern(name);
        op.pid = integer(e, "pid", 0);
        op.tid = integer(e, "tid", 0);
        op.ts_ns = timestamp(e);
        op.dur_ns = duration(e);
        op.external_id = integer(args, "External id", -1);
        if (const auto it = args.find("Input Dims"); it != args.end() && it->is_array()) {
            for (const Json& d : *it) {
                op.input_dims.push_back(dims_of(d));
            }
        }
        if (const auto it = args.find("Input type"); it != args.end() && it->is_array()) {
            for (const Json& t : *it) {
                op.input_types.push_back(t.is_string() ? t.get<std::string>() : std::string());
            }
        }
        op.collective = collective(args);
        trace_.cpu_ops.push_back(std::move(op));
    }

    void labelled(const Json& e, const Json& args) {
        LabelledSlice s;
        s.gpu = integer(e, "pid", 0);
        s.name = intern(text(e, "name"));
        s.category = intern(text(args, "category"));
        s.phase = intern(text(args, "phase"));
        s.layer = static_cast<std::int32_t>(integer(args, "layer", -1));
        s.microbatch = static_cast<std::int32_t>(integer(args, "microbatch", -1));
        s.chunk = static_cast<std::int32_t>(integer(args, "chunk", -1));
        s.ts_ns = timestamp(e);
        s.dur_ns = duration(e);
        trace_.labelled.push_back(s);
    }

    void skip_other_vendors() {
        if (saw_hip_) {
            for (Device& d : trace_.devices) {
                if (d.vendor == Vendor::Unknown) {
                    d.vendor = Vendor::Rocm;  // HIP runtime calls: an AMD GPU whatever its name says
                }
            }
        }
        std::map<std::int64_t, const Device*> other;
        for (const Device& d : trace_.devices) {
            if (d.vendor == Vendor::Rocm || d.vendor == Vendor::Mtia) {
                other[d.id] = &d;
            }
        }
        if (saw_hip_ && trace_.devices.empty()) {
            trace_.skipped.push_back("all " + std::to_string(trace_.gpu.size()) +
                                     " GPU activities: the trace has HIP runtime calls (a ROCm device)");
            trace_.gpu.clear();
        }
        if (!other.empty()) {
            std::map<std::int64_t, std::int64_t> dropped;
            std::erase_if(trace_.gpu, [&](const GpuEvent& g) {
                if (other.count(g.device) == 0) {
                    return false;
                }
                ++dropped[g.device];
                return true;
            });
            for (const auto& [id, device] : other) {
                trace_.skipped.push_back("device " + std::to_string(id) + " (" + printable(device->name) +
                                         ", " + to_string(device->vendor) +
                                         "): " + std::to_string(dropped[id]) + " GPU activities");
            }
        }
        if (mtia_events_ > 0) {
            trace_.skipped.push_back(std::to_string(mtia_events_) + " MTIA events");
        }
    }

    Trace& trace_;
    std::unordered_map<std::string, std::uint32_t> index_;
    bool saw_hip_ = false;
    std::int64_t mtia_events_ = 0;
    bool has_base_ = false;
    std::int64_t base_ = 0;
};

}  // namespace

bool is_kept_cpu_op(const std::string& name) {
    static const char* const kKept[] = {
        "aten::mm",     "aten::addmm",      "aten::bmm",         "aten::baddbmm", "aten::linear",
        "aten::matmul", "aten::_scaled_mm", "aten::add",         "aten::add_",    "aten::mul",
        "aten::mul_",   "aten::copy_",      "record_param_comms"};
    for (const char* k : kKept) {
        if (name == k) {
            return true;
        }
    }
    return name.rfind("nccl:", 0) == 0 || name.rfind("c10d::", 0) == 0;
}

std::string printable(const std::string& text, std::size_t limit) {
    std::string out = text.substr(0, limit);
    for (char& c : out) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            c = '?';
        }
    }
    return out;
}

Trace read_trace(const std::string& path) {
    Trace trace;
    trace.path = path;
    CompressedInput buffer(path);
    EventSink sink(trace);
    if (!stream_trace_events(buffer, path, sink)) {
        throw InputError(path + ": not a PyTorch profiler trace (no \"traceEvents\" array)");
    }
    sink.finish();
    return trace;
}

}  // namespace trainsim::kineto
