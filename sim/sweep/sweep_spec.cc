#include "sim/sweep/sweep_spec.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "sim/config/scenario_schema.h"
#include "sim/core/did_you_mean.h"
#include "sim/core/input_error.h"
#include "sim/sweep/csv.h"

namespace trainsim::sweep {
namespace {


const std::vector<std::string>& top_level_keys() {
    static const std::vector<std::string> keys{"base", "axes", "description"};
    return keys;
}

const std::vector<std::string>& range_keys() {
    static const std::vector<std::string> keys{"values", "from", "to", "step", "factor"};
    return keys;
}

class SpecReader {
public:
    explicit SpecReader(std::string source) : source_(std::move(source)) {}

    [[noreturn]] void fail(const std::string& message) const { throw InputError(source_ + ": " + message); }

    void check_keys(const Json& object, const std::vector<std::string>& allowed,
                    const std::string& where) const {
        for (const auto& [key, value] : object.items()) {
            if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) {
                continue;
            }
            const std::string path = where.empty() ? key : where + "." + key;
            const std::string guess = closest_match(key, allowed);
            fail(printable_key(path) + ": unknown key" +
                 (guess.empty() ? " (allowed: " + comma_list(allowed) + ")"
                                : " (did you mean " + guess + "?)"));
        }
    }

    [[nodiscard]] std::int64_t integer(const Json& object, const std::string& key,
                                       const std::string& where) const {
        const Json& v = object.at(key);
        if (!v.is_number_integer()) {
            fail(where + "." + key + ": expected an integer, got " + describe_json(v));
        }
        return v.get<std::int64_t>();
    }

    [[nodiscard]] std::vector<Json> list(const Json& values, const std::string& where) const {
        if (!values.is_array() || values.empty()) {
            fail(where + ": expected a non-empty list of values, got " + describe_json(values));
        }
        return {values.begin(), values.end()};
    }

    // {"from": A, "to": B, "step": S} or {"from": A, "to": B, "factor": F}: A, A+S, ... ≤ B or A, A·F, ... ≤
    // B.
    [[nodiscard]] std::vector<Json> range(const Json& spec, const std::string& where) const {
        if (!spec.contains("from") || !spec.contains("to")) {
            fail(where + ": a range needs both \"from\" and \"to\" (or give \"values\")");
        }
        if (spec.contains("step") && spec.contains("factor")) {
            fail(where + ": give \"step\" or \"factor\", not both");
        }
        const std::int64_t from = integer(spec, "from", where);
        const std::int64_t to = integer(spec, "to", where);
        if (to < from) {
            fail(where + ".to=" + std::to_string(to) + " must be ≥ " + where +
                 ".from=" + std::to_string(from));
        }
        std::vector<Json> values;
        if (spec.contains("factor")) {
            const std::int64_t factor = integer(spec, "factor", where);
            if (factor < 2) {
                fail(where + ".factor=" + std::to_string(factor) + " must be ≥ 2");
            }
            if (from < 1) {
                fail(where + ".from=" + std::to_string(from) + " must be ≥ 1 with a factor");
            }
            for (std::int64_t x = from;; x *= factor) {
                values.emplace_back(x);
                if (x > to / factor) {  // the next value would pass `to` (or overflow)
                    break;
                }
            }
            return values;
        }
        const std::int64_t step = spec.contains("step") ? integer(spec, "step", where) : 1;
        if (step < 1) {
            fail(where + ".step=" + std::to_string(step) + " must be ≥ 1");
        }
        // Counted, not looped, so that a typo such as "to": 1e12 is caught before any allocation.
        const auto count = static_cast<std::uint64_t>(to - from) / static_cast<std::uint64_t>(step) + 1;
        if (count > kMaxSweepPoints) {
            fail(where + ": the range has " + std::to_string(count) + " values, more than the " +
                 std::to_string(kMaxSweepPoints) + " a sweep may have");
        }
        for (std::uint64_t i = 0; i < count; ++i) {
            values.emplace_back(from + static_cast<std::int64_t>(i) * step);
        }
        return values;
    }

    [[nodiscard]] Axis axis(const std::string& key, const Json& spec) const {
        const std::string where = "axes." + printable_key(key);
        if (!config::is_known_path(key)) {
            fail("axes: " + config::unknown_key_message(key));
        }
        Axis axis{key, {}};
        if (spec.is_array()) {
            axis.values = list(spec, where);
        } else if (spec.is_object()) {
            check_keys(spec, range_keys(), where);
            if (spec.contains("values")) {
                if (spec.size() != 1) {
                    fail(where +
                         ": give \"values\" or a range (\"from\", \"to\", \"step\"/\"factor\"), not both");
                }
                axis.values = list(spec.at("values"), where + ".values");
            } else {
                axis.values = range(spec, where);
            }
        } else {
            fail(where + ": expected a list of values or an object with \"values\" or \"from\"/\"to\", got " +
                 describe_json(spec));
        }
        // Rows are keyed by their axis cells when a sweep resumes, so two values must not print alike.
        std::set<std::string> cells;
        for (const Json& v : axis.values) {
            if (!cells.insert(value_text(v)).second) {
                fail(where + ": the value " + describe_json(v) + " appears twice (each value once)");
            }
        }
        return axis;
    }

private:
    std::string source_;
};

std::string read_text(const std::string& path, const std::string& what) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        throw InputError(path + ": is a directory, not a " + what);
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw InputError(path + ": cannot open " + what + " (" +
                         (std::filesystem::exists(path, ec) ? "permission denied?" : "no such file") + ")");
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

std::size_t SweepSpec::size() const {
    std::size_t n = 1;
    for (const Axis& a : axes) {
        n *= a.values.size();
    }
    return n;
}

SweepSpec parse_sweep(const std::string& json_text, const std::string& source) {
    const SpecReader reader(source);
    const Json doc = parse_strict_json(json_text, source);
    if (!doc.is_object()) {
        reader.fail("expected a JSON object at the top level, got " + describe_json(doc));
    }
    reader.check_keys(doc, top_level_keys(), "");
    SweepSpec spec;
    spec.source = source;
    spec.default_name = std::filesystem::path(source).stem().string();
    if (!doc.contains("base")) {
        reader.fail("base: missing (a scenario file path, relative to this file, or a scenario object)");
    }
    const Json& base = doc.at("base");
    if (base.is_string()) {
        const std::filesystem::path p(base.get<std::string>());
        if (p.empty()) {
            reader.fail("base: must not be empty");
        }
        spec.base_path =
            (p.is_absolute() ? p : std::filesystem::path(source).parent_path() / p).lexically_normal();
        std::error_code ec;
        if (!std::filesystem::is_regular_file(spec.base_path, ec)) {
            reader.fail("base=" + describe_json(base) + ": no such scenario file (" + spec.base_path + ")");
        }
        spec.default_name = std::filesystem::path(spec.base_path).stem().string();
        // Read once: every point re-parses this text with its own overrides.
        spec.base_text = read_text(spec.base_path, "scenario file");
        const Json base_doc = parse_strict_json(spec.base_text, spec.base_path);
        if (!base_doc.is_object()) {
            throw InputError(spec.base_path + ": expected a JSON object at the top level, got " +
                             describe_json(base_doc));
        }
    } else if (base.is_object()) {
        spec.base_text = base.dump();
    } else {
        reader.fail("base: expected a scenario file path or a scenario object, got " + describe_json(base));
    }
    if (!doc.contains("axes")) {
        reader.fail("axes: missing (an object of scenario key → values)");
    }
    const Json& axes = doc.at("axes");
    if (!axes.is_object() || axes.empty()) {
        reader.fail("axes: expected a non-empty object of scenario key → values, got " + describe_json(axes));
    }
    std::size_t points = 1;
    for (const auto& [key, value] : axes.items()) {
        spec.axes.push_back(reader.axis(key, value));
        points *= spec.axes.back().values.size();
        if (points > kMaxSweepPoints) {
            reader.fail("axes: the grid has more than the " + std::to_string(kMaxSweepPoints) +
                        " points a sweep may have");
        }
    }
    if (doc.contains("description") && !doc.at("description").is_string()) {
        reader.fail("description: expected a string, got " + describe_json(doc.at("description")));
    }
    return spec;
}

SweepSpec load_sweep(const std::string& path) {
    return parse_sweep(read_text(path, "sweep file"), path);
}

}  // namespace trainsim::sweep
