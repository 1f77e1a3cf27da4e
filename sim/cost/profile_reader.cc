#include "sim/cost/profile_reader.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/did_you_mean.h"
#include "sim/core/input_error.h"
#include "sim/core/source_id.h"
#include "sim/cost/format_number.h"

namespace trainsim::cost {

namespace {

// The kinds of README "Values and their provenance". Kinds that report a fact must cite where it is written.
constexpr std::array<std::string_view, 5> kKinds = {"datasheet", "measured", "derived", "sim_config",
                                                    "assumed"};
constexpr std::array<std::string_view, 3> kCitingKinds = {"datasheet", "measured", "sim_config"};

std::string index_path(const std::string& path, std::size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

}  // namespace

ProfileJson parse_profile_json(const std::string& text, const std::string& label) {
    return parse_strict_json(text, "profile " + label);
}

ProfileReader::ProfileReader(std::string profile_name, const ProfileJson& root)
    : name_(printable_key(profile_name)) {
    if (!root.is_object()) {
        fail("the document", "must be a JSON object, got " + describe_json(root));
    }
    read_sources(root);
}

ProfileReader::ProfileReader(std::string profile_name, const ProfileJson& root, ProfileProvenance& record)
    : name_(printable_key(profile_name)), record_(&record) {
    if (!root.is_object()) {
        fail("the document", "must be a JSON object, got " + describe_json(root));
    }
    read_sources(root);
}

void ProfileReader::record(const std::string& path, const ProfileJson& object) const {
    if (record_ != nullptr) {
        record_->values[path] = {object.at("kind").get<std::string>(),
                                 object.at("source").get<std::string>()};
    }
}

void ProfileReader::fail(const std::string& path, const std::string& rule) const {
    throw InputError("profile " + name_ + ": " + path + " " + rule);
}

void ProfileReader::expect_keys(const ProfileJson& object, const std::string& path,
                                const std::vector<std::string_view>& required,
                                const std::vector<std::string_view>& optional) const {
    if (!object.is_object()) {
        fail(path.empty() ? "the document" : path, "must be an object, got " + describe_json(object));
    }
    std::vector<std::string> known(required.begin(), required.end());
    known.insert(known.end(), optional.begin(), optional.end());
    known.emplace_back("note");
    for (const auto& [key, value] : object.items()) {
        if (std::find(known.begin(), known.end(), key) == known.end()) {
            const std::string match = closest_match(key, known);
            fail(join_path(path, printable_key(key)),
                 "is not a known key" + (match.empty() ? std::string{} : " (did you mean '" + match + "'?)"));
        }
        if (key == "note" && !value.is_string()) {
            fail(join_path(path, key), "must be a string, got " + describe_json(value));
        }
        if (key == "note" && record_ != nullptr) {
            record_->notes[path] = value.get<std::string>();
        }
    }
    for (const std::string_view key : required) {
        if (!object.contains(key)) {
            fail(join_path(path, key), "is required");
        }
    }
}

const ProfileJson& ProfileReader::section(const ProfileJson& parent, const std::string& parent_path,
                                          std::string_view key) const {
    const ProfileJson& s = parent.at(key);  // present: the caller's expect_keys required it
    if (!s.is_object()) {
        fail(join_path(parent_path, key), "must be an object, got " + describe_json(s));
    }
    return s;
}

std::string ProfileReader::text(const ProfileJson& parent, const std::string& parent_path,
                                std::string_view key) const {
    const ProfileJson& s = parent.at(key);
    if (!s.is_string() || s.get_ref<const std::string&>().empty()) {
        fail(join_path(parent_path, key), "must be a non-empty string, got " + describe_json(s));
    }
    return s.get<std::string>();
}

void ProfileReader::read_sources(const ProfileJson& root) {
    if (!root.contains("sources")) {
        fail("sources", "is required (the table of source ids that values cite)");
    }
    const ProfileJson& sources = root.at("sources");
    if (!sources.is_object()) {
        fail("sources", "must be an object mapping source ids to citations, got " + describe_json(sources));
    }
    for (const auto& [id, citation] : sources.items()) {
        const std::string path = join_path("sources", printable_key(id));
        if (!is_source_id(id)) {
            fail(path,
                 "is not a source id: ids are 'S-' then upper-case words joined by '-', e.g. S-STAS-NET");
        }
        if (!citation.is_string() || citation.get_ref<const std::string&>().empty()) {
            fail(path, "must be a non-empty citation string, got " + describe_json(citation));
        }
        source_ids_.insert(id);
        if (record_ != nullptr) {
            record_->sources.emplace_back(id, citation.get<std::string>());
        }
    }
}

std::string ProfileReader::provenance(const ProfileJson& kind, const ProfileJson& source,
                                      const std::string& path) const {
    const std::vector<std::string> kinds(kKinds.begin(), kKinds.end());
    if (!kind.is_string() || std::find(kinds.begin(), kinds.end(), kind.get<std::string>()) == kinds.end()) {
        std::string rule =
            "must be one of datasheet, measured, derived, sim_config, assumed; got " + describe_json(kind);
        if (kind.is_string()) {
            const std::string match = closest_match(kind.get<std::string>(), kinds);
            rule += match.empty() ? "" : " (did you mean '" + match + "'?)";
        }
        fail(join_path(path, "kind"), rule);
    }
    if (!source.is_string() || source.get_ref<const std::string&>().empty()) {
        fail(join_path(path, "source"), "must be a non-empty string, got " + describe_json(source));
    }
    const std::string& text = source.get_ref<const std::string&>();
    const std::vector<std::string> ids(source_ids_.begin(), source_ids_.end());
    bool cites = false;
    for (const std::string& id : cited_source_ids(text)) {
        if (source_ids_.count(id) == 0) {
            const std::string match = closest_match(id, ids);
            fail(join_path(path, "source"),
                 "cites '" + id + "', which is not in the sources table" +
                     (match.empty() ? std::string{} : " (did you mean '" + match + "'?)"));
        }
        cites = true;
    }
    const std::string& k = kind.get_ref<const std::string&>();
    if (!cites && std::find(kCitingKinds.begin(), kCitingKinds.end(), k) != kCitingKinds.end()) {
        fail(join_path(path, "source"), "must cite an id from the sources table for kind '" + k + "'");
    }
    return text;
}

const ProfileJson& ProfileReader::value_of(const ProfileJson& parent, const std::string& parent_path,
                                           std::string_view key) const {
    const std::string path = join_path(parent_path, key);
    const ProfileJson& v = parent.at(key);
    expect_keys(v, path, {"value", "kind", "source"});
    provenance(v.at("kind"), v.at("source"), path);
    record(path, v);
    return v.at("value");
}

double ProfileReader::number(const ProfileJson& value, const std::string& path) const {
    if (!value.is_number()) {
        fail(path, "must be a number, got " + describe_json(value));
    }
    if (value.is_number_integer() && record_ != nullptr) {
        record_->integer_spelling.insert(path);
    }
    const double v = value.get<double>();
    if (!std::isfinite(v)) {
        fail(path, "must be a finite number, got " + describe_json(value));
    }
    return v;
}

double ProfileReader::positive(const ProfileJson& parent, const std::string& parent_path,
                               std::string_view key) const {
    const std::string path = join_path(join_path(parent_path, key), "value");
    const double v = number(value_of(parent, parent_path, key), path);
    if (!(v > 0.0)) {
        fail(path, "must be greater than 0, got " + format_number(v));
    }
    return v;
}

double ProfileReader::efficiency(const ProfileJson& parent, const std::string& parent_path,
                                 std::string_view key) const {
    const std::string path = join_path(join_path(parent_path, key), "value");
    const double v = number(value_of(parent, parent_path, key), path);
    if (!(v > 0.0 && v <= 1.0)) {
        fail(path, "must be an efficiency in (0, 1], got " + format_number(v));
    }
    return v;
}

std::int64_t ProfileReader::positive_integer(const ProfileJson& parent, const std::string& parent_path,
                                             std::string_view key) const {
    const std::string path = join_path(join_path(parent_path, key), "value");
    const ProfileJson& v = value_of(parent, parent_path, key);
    if (v.is_number_unsigned() &&
        v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        fail(path, "is too large, got " + describe_json(v));
    }
    if (!v.is_number_integer()) {
        fail(path, "must be an integer (no decimal point or exponent), got " + describe_json(v));
    }
    const auto i = v.get<std::int64_t>();
    if (i < 1) {
        fail(path, "must be greater than 0, got " + std::to_string(i));
    }
    return i;
}

Curve ProfileReader::curve(const ProfileJson& parent, const std::string& parent_path, std::string_view key,
                           YRule rule) const {
    const std::string path = join_path(parent_path, key);
    const ProfileJson& c = parent.at(key);
    expect_keys(c, path, {"points"}, {"kind", "source"});
    if (c.contains("kind") != c.contains("source")) {
        fail(join_path(path, c.contains("kind") ? "source" : "kind"),
             "is required when the curve gives a default " +
                 std::string(c.contains("kind") ? "kind" : "source"));
    }
    Curve out;
    if (c.contains("kind")) {
        out.source = provenance(c.at("kind"), c.at("source"), path);
        record(path, c);
    }
    const ProfileJson& points = c.at("points");
    const std::string points_path = join_path(path, "points");
    if (!points.is_array() || points.empty()) {
        fail(points_path, "must be a non-empty array of {x, y} points, got " + describe_json(points));
    }
    std::vector<std::string> point_sources;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const ProfileJson& p = points[i];
        const std::string p_path = index_path(points_path, i);
        const bool own_provenance = p.is_object() && (p.contains("kind") || p.contains("source"));
        if (own_provenance || !c.contains("kind")) {
            expect_keys(p, p_path, {"x", "y", "kind", "source"});
            const std::string s = provenance(p.at("kind"), p.at("source"), p_path);
            record(p_path, p);
            if (std::find(point_sources.begin(), point_sources.end(), s) == point_sources.end()) {
                point_sources.push_back(s);
            }
        } else {
            expect_keys(p, p_path, {"x", "y"});
        }
        const double x = number(p.at("x"), join_path(p_path, "x"));
        const double y = number(p.at("y"), join_path(p_path, "y"));
        if (!(x > 0.0)) {
            fail(join_path(p_path, "x"), "must be greater than 0, got " + format_number(x));
        }
        if (!out.x.empty() && !(x > out.x.back())) {
            fail(join_path(p_path, "x"), "must be greater than the previous point's x (" + format_number(x) +
                                             " <= " + format_number(out.x.back()) + ")");
        }
        if (rule == YRule::Efficiency && !(y > 0.0 && y <= 1.0)) {
            fail(join_path(p_path, "y"), "must be an efficiency in (0, 1], got " + format_number(y));
        }
        if (rule == YRule::Positive && !(y > 0.0)) {
            fail(join_path(p_path, "y"), "must be greater than 0, got " + format_number(y));
        }
        out.x.push_back(x);
        out.y.push_back(y);
    }
    if (out.source.empty()) {
        for (const auto& s : point_sources) {
            out.source += (out.source.empty() ? "" : "; ") + s;
        }
    }
    return out;
}

void ProfileReader::assumptions(const ProfileJson& parent, const std::string& parent_path) const {
    if (!parent.contains("assumptions")) {
        return;
    }
    const std::string path = join_path(parent_path, "assumptions");
    const ProfileJson& list = parent.at("assumptions");
    if (!list.is_array()) {
        fail(path, "must be an array of {what, kind, source}, got " + describe_json(list));
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string a_path = index_path(path, i);
        expect_keys(list[i], a_path, {"what", "kind", "source"});
        const std::string what = text(list[i], a_path, "what");
        provenance(list[i].at("kind"), list[i].at("source"), a_path);
        if (record_ != nullptr) {
            record_->assumptions[parent_path].push_back(
                {what, {list[i].at("kind").get<std::string>(), list[i].at("source").get<std::string>()}});
        }
    }
}

}  // namespace trainsim::cost
