#include "calibrate/measure/strict_json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "sim/core/did_you_mean.h"
#include "sim/core/input_error.h"
#include "sim/core/strict_json.h"

namespace trainsim::calibrate {

std::string member_path(const std::string& parent, std::string_view key) {
    return join_path(parent, key);
}

std::string element_path(const std::string& parent, std::size_t index) {
    return parent + "[" + std::to_string(index) + "]";
}

OrderedJson StrictJson::parse(const std::string& text) const {
    return parse_strict_json(text, label_);
}

void StrictJson::fail(const std::string& path, const std::string& rule) const {
    throw InputError(label_ + ": " + (path.empty() ? "the document" : path) + " " + rule);
}

void StrictJson::expect_keys(const OrderedJson& object, const std::string& path,
                             const std::vector<std::string_view>& required,
                             const std::vector<std::string_view>& optional) const {
    if (!object.is_object()) {
        fail(path, "must be an object, got " + describe_json(object));
    }
    std::vector<std::string> known(required.begin(), required.end());
    known.insert(known.end(), optional.begin(), optional.end());
    for (const auto& [key, value] : object.items()) {
        if (std::find(known.begin(), known.end(), key) == known.end()) {
            const std::string match = closest_match(key, known);
            std::string valid;
            for (const std::string& k : known) {
                valid += (valid.empty() ? "" : ", ") + k;
            }
            fail(member_path(path, key),
                 "is not a known key" +
                     (match.empty() ? " (valid keys: " + valid + ")" : " (did you mean '" + match + "'?)"));
        }
    }
    for (const std::string_view key : required) {
        if (!object.contains(key)) {
            fail(member_path(path, key), "is required");
        }
    }
}

std::string StrictJson::text(const OrderedJson& parent, const std::string& path, std::string_view key) const {
    const OrderedJson& v = parent.at(key);
    if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
        fail(member_path(path, key), "must be a non-empty string, got " + describe_json(v));
    }
    return v.get<std::string>();
}

double StrictJson::number(const OrderedJson& parent, const std::string& path, std::string_view key) const {
    const OrderedJson& v = parent.at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>())) {
        fail(member_path(path, key), "must be a finite number, got " + describe_json(v));
    }
    return v.get<double>();
}

double StrictJson::positive_number(const OrderedJson& parent, const std::string& path,
                                   std::string_view key) const {
    const double v = number(parent, path, key);
    if (!(v > 0.0)) {
        fail(member_path(path, key), "must be greater than 0, got " + describe_json(parent.at(key)));
    }
    return v;
}

std::int64_t StrictJson::integer(const OrderedJson& parent, const std::string& path, std::string_view key,
                                 std::int64_t minimum, std::int64_t maximum) const {
    const OrderedJson& v = parent.at(key);
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))) {
        fail(member_path(path, key),
             "must be an integer (no decimal point or exponent), got " + describe_json(v));
    }
    const auto i = v.get<std::int64_t>();
    if (i < minimum) {
        fail(member_path(path, key),
             "must be at least " + std::to_string(minimum) + ", got " + std::to_string(i));
    }
    if (i > maximum) {
        fail(member_path(path, key),
             "must be at most " + std::to_string(maximum) + ", got " + std::to_string(i));
    }
    return i;
}

std::vector<std::string> StrictJson::text_list(const OrderedJson& parent, const std::string& path,
                                               std::string_view key) const {
    const OrderedJson& v = array(parent, path, key);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_string() || v[i].get_ref<const std::string&>().empty()) {
            fail(element_path(member_path(path, key), i),
                 "must be a non-empty string, got " + describe_json(v[i]));
        }
        out.push_back(v[i].get<std::string>());
    }
    return out;
}

const OrderedJson& StrictJson::array(const OrderedJson& parent, const std::string& path,
                                     std::string_view key) const {
    const OrderedJson& v = parent.at(key);
    if (!v.is_array()) {
        fail(member_path(path, key), "must be an array, got " + describe_json(v));
    }
    return v;
}

const OrderedJson& StrictJson::object(const OrderedJson& parent, const std::string& path,
                                      std::string_view key) const {
    const OrderedJson& v = parent.at(key);
    if (!v.is_object()) {
        fail(member_path(path, key), "must be an object, got " + describe_json(v));
    }
    return v;
}

}  // namespace trainsim::calibrate
