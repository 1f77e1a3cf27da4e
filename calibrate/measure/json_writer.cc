#include "calibrate/measure/json_writer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace trainsim::calibrate {

namespace {

constexpr int kIndent = 2;

bool is_scalar(const OrderedJson& v) {
    return !v.is_object() && !v.is_array();
}

// A scalar, or a list of scalars (tags): what an inline object may hold.
bool is_flat(const OrderedJson& v) {
    if (v.is_array()) {
        return std::all_of(v.begin(), v.end(), [](const OrderedJson& e) { return is_scalar(e); });
    }
    return is_scalar(v);
}

bool all_flat(const OrderedJson& object) {
    for (const auto& [key, value] : object.items()) {
        if (!is_flat(value)) {
            return false;
        }
    }
    return true;
}

void write_array(std::string& out, const OrderedJson& array, int depth);

std::string scalar_text(const OrderedJson& v) {
    if (v.is_number_float()) {
        return format_json_float(v.get<double>());
    }
    // Strings keep their UTF-8 (the profiles' citations use it); integers, booleans and null as usual.
    return v.dump(-1, ' ', false, OrderedJson::error_handler_t::strict);
}

void write_value(std::string& out, const OrderedJson& v, int depth, bool expand_scalars);

void write_inline_object(std::string& out, const OrderedJson& object) {
    out += '{';
    bool first = true;
    for (const auto& [key, value] : object.items()) {
        out += first ? "" : ", ";
        first = false;
        out += OrderedJson(key).dump() + ": ";
        if (value.is_array()) {
            write_array(out, value, 0);
        } else {
            out += scalar_text(value);
        }
    }
    out += '}';
}

void write_object(std::string& out, const OrderedJson& object, int depth, bool expand_scalars) {
    if (object.empty()) {
        out += "{}";
        return;
    }
    if (!expand_scalars && all_flat(object)) {
        write_inline_object(out, object);
        return;
    }
    const std::string pad(static_cast<std::size_t>((depth + 1) * kIndent), ' ');
    out += "{\n";
    bool first = true;
    for (const auto& [key, value] : object.items()) {
        out += first ? "" : ",\n";
        first = false;
        out += pad + OrderedJson(key).dump() + ": ";
        write_value(out, value, depth + 1, key == "sources");
    }
    out += "\n" + std::string(static_cast<std::size_t>(depth * kIndent), ' ') + "}";
}

void write_array(std::string& out, const OrderedJson& array, int depth) {
    if (array.empty()) {
        out += "[]";
        return;
    }
    bool scalars = true;
    for (const auto& v : array) {
        scalars = scalars && is_scalar(v);
    }
    if (scalars) {  // a list of tags or numbers: one line
        out += '[';
        for (std::size_t i = 0; i < array.size(); ++i) {
            out += (i == 0 ? "" : ", ") + scalar_text(array[i]);
        }
        out += ']';
        return;
    }
    const std::string pad(static_cast<std::size_t>((depth + 1) * kIndent), ' ');
    out += "[\n";
    for (std::size_t i = 0; i < array.size(); ++i) {
        out += (i == 0 ? "" : ",\n") + pad;
        write_value(out, array[i], depth + 1, false);
    }
    out += "\n" + std::string(static_cast<std::size_t>(depth * kIndent), ' ') + "]";
}

void write_value(std::string& out, const OrderedJson& v, int depth, bool expand_scalars) {
    if (v.is_object()) {
        write_object(out, v, depth, expand_scalars);
    } else if (v.is_array()) {
        write_array(out, v, depth);
    } else {
        out += scalar_text(v);
    }
}

}  // namespace

std::string format_json_float(double value) {
    if (!std::isfinite(value)) {
        throw std::invalid_argument("format_json_float: JSON has no representation for " +
                                    std::to_string(value));
    }
    std::array<char, 64> buffer{};
    const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    if (ec != std::errc()) {
        throw std::invalid_argument("format_json_float: cannot format a number");
    }
    std::string text(buffer.data(), end);
    if (text.find_first_of(".e") == std::string::npos) {
        text += ".0";
    }
    return text;
}

std::string to_profile_style_json(const OrderedJson& document) {
    std::string out;
    write_value(out, document, 0, false);
    out += '\n';
    return out;
}

}  // namespace trainsim::calibrate
