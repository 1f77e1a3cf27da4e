#include "sim/config/section_reader.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "sim/config/scenario.h"
#include "sim/core/did_you_mean.h"
#include "sim/core/input_error.h"

namespace trainsim::config {

namespace {

const std::string kPositiveInteger = "expected a positive integer";
static_assert(kMaxScenarioSize == std::int64_t{1} << 40, "the messages below say 2^40");

[[noreturn]] void throw_above_cap(std::string_view path, const std::string& got) {
    throw InputError(std::string(path) + ": " + kPositiveInteger + " at most 2^40 (" +
                     std::to_string(kMaxScenarioSize) + "), got " + got);
}

std::int64_t to_size(std::string_view path, const Json& value) {
    if (value.is_number_unsigned()) {
        const auto u = value.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            throw_above_cap(path, value.dump());
        }
        const auto v = static_cast<std::int64_t>(u);
        check_size(path, v);
        return v;
    }
    if (value.is_number_integer()) {
        const auto v = value.get<std::int64_t>();
        check_size(path, v);
        return v;
    }
    std::string message = std::string(path) + ": " + kPositiveInteger + ", got " + describe_json(value);
    if (value.is_number_float() && std::isfinite(value.get<double>()) &&
        value.get<double>() == std::floor(value.get<double>())) {
        message += " (write integers without a decimal point or exponent)";
    }
    throw InputError(message);
}

}  // namespace

void check_size(std::string_view path, std::int64_t value) {
    if (value < 1) {
        throw InputError(std::string(path) + ": " + kPositiveInteger + ", got " + std::to_string(value));
    }
    if (value > kMaxScenarioSize) {
        throw_above_cap(path, std::to_string(value));
    }
}

SectionReader::SectionReader(const Json& root, std::string_view section) : section_(section) {
    if (section.empty()) {
        object_ = &root;
        return;
    }
    // A dotted section ("hardware.topology") is an object inside an object.
    const Json* object = &root;
    std::size_t begin = 0;
    while (begin <= section.size()) {
        const std::size_t dot = std::min(section.find('.', begin), section.size());
        const auto it = object->find(std::string(section.substr(begin, dot - begin)));
        if (it == object->end()) {
            return;
        }
        if (!it->is_object()) {
            throw InputError(std::string(section.substr(0, dot)) + ": expected an object, got " +
                             describe_json(*it));
        }
        object = &*it;
        begin = dot + 1;
    }
    object_ = object;
}

std::optional<double> SectionReader::number_at_least(std::string_view key, double minimum) const {
    const Json* value = find(key);
    if (value == nullptr) {
        return std::nullopt;
    }
    if (!value->is_number() || !std::isfinite(value->get<double>()) || value->get<double>() < minimum) {
        std::ostringstream bound;
        bound << minimum;
        throw InputError(path(key) + ": expected a number >= " + bound.str() + ", got " +
                         describe_json(*value));
    }
    return value->get<double>();
}

const Json* SectionReader::find(std::string_view key) const {
    if (object_ == nullptr) {
        return nullptr;
    }
    const auto it = object_->find(std::string(key));
    return it == object_->end() ? nullptr : &*it;
}

std::optional<std::int64_t> SectionReader::positive_integer(std::string_view key) const {
    const Json* value = find(key);
    if (value == nullptr) {
        return std::nullopt;
    }
    return to_size(path(key), *value);
}

std::optional<std::int64_t> SectionReader::nullable_positive_integer(std::string_view key) const {
    const Json* value = find(key);
    if (value == nullptr || value->is_null()) {
        return std::nullopt;
    }
    return to_size(path(key), *value);
}

std::int64_t SectionReader::required_positive_integer(std::string_view key, std::string_view hint) const {
    const auto value = positive_integer(key);
    if (!value) {
        throw InputError(path(key) + ": required key is missing" + std::string(hint));
    }
    return *value;
}

std::vector<std::int64_t> SectionReader::positive_integer_list(std::string_view key) const {
    const Json* value = find(key);
    if (value == nullptr || value->is_null()) {
        return {};
    }
    if (!value->is_array() || value->empty()) {
        throw InputError(path(key) + ": expected a non-empty list of positive integers, got " +
                         describe_json(*value));
    }
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < value->size(); ++i) {
        out.push_back(to_size(path(key) + "[" + std::to_string(i) + "]", (*value)[i]));
    }
    return out;
}

bool SectionReader::boolean(std::string_view key, bool fallback) const {
    const Json* value = find(key);
    if (value == nullptr) {
        return fallback;
    }
    if (!value->is_boolean()) {
        throw InputError(path(key) + ": expected a JSON boolean (true or false), got " +
                         describe_json(*value));
    }
    return value->get<bool>();
}

std::optional<bool> SectionReader::nullable_boolean(std::string_view key) const {
    const Json* value = find(key);
    if (value == nullptr || value->is_null()) {
        return std::nullopt;
    }
    return boolean(key, false);
}

std::optional<std::string> SectionReader::string(std::string_view key) const {
    const Json* value = find(key);
    if (value == nullptr) {
        return std::nullopt;
    }
    if (!value->is_string()) {
        throw InputError(path(key) + ": expected a string, got " + describe_json(*value));
    }
    return value->get<std::string>();
}

void SectionReader::throw_enum_error(std::string_view key, const std::vector<std::string>& names,
                                     const Json& got, bool nullable) const {
    std::vector<std::string> quoted;
    for (const auto& n : names) {
        quoted.push_back("\"" + n + "\"");
    }
    const std::string expected = comma_list(quoted);
    std::string message = path(key) + ": expected one of " + expected + (nullable ? " or null" : "") +
                          ", got " + describe_json(got);
    if (got.is_string()) {
        const std::string match = closest_match(got.get_ref<const std::string&>(), names);
        if (!match.empty()) {
            message += " (did you mean \"" + match + "\"?)";
        }
    }
    throw InputError(message);
}

void SectionReader::throw_list_error(std::string_view key, const Json& got) const {
    throw InputError(path(key) + ": expected a list of names, got " + describe_json(got));
}

}  // namespace trainsim::config
