#include "sim/config/overrides.h"

#include <algorithm>
#include <string>

#include "sim/config/scenario_schema.h"
#include "sim/core/input_error.h"

namespace trainsim::config {

namespace {

std::string trim(const std::string& text) {
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string::npos) {
        return "";
    }
    const auto last = text.find_last_not_of(" \t");
    return text.substr(first, last - first + 1);
}

// `16` is the number 16, `true` a boolean, `null` null, `{"preset": "gpt-22b"}` an object; text that
// is not JSON, such as `1f1b` or `a100-80gb-selene`, is the string itself, so shells need no quoting.
// JSON is held to the file's rules (no repeated key, bounded nesting), so an override cannot slip past
// a check that the same text in the file would fail.
Json override_value(const Override& o) {
    if (!Json::accept(o.value)) {
        return Json(o.value);
    }
    const std::string source = "--set " + printable_key(o.key);
    try {
        return parse_strict_json(o.value, source);
    } catch (const InputError& e) {
        // Errors inside the value name a path within it ("num_layers: duplicate key"); say whose value.
        const std::string message = e.what();
        throw InputError(message.starts_with(source) ? message : source + ": " + message);
    }
}

}  // namespace

Override parse_override(const std::string& text) {
    const auto equals = text.find('=');
    if (equals == std::string::npos) {
        throw InputError("--set " + printable_key(text) + ": expected key=value");
    }
    Override result{trim(text.substr(0, equals)), text.substr(equals + 1)};
    if (result.key.empty()) {
        throw InputError("--set " + printable_key(text) + ": expected key=value with a non-empty key");
    }
    return result;
}

std::vector<Override> parse_overrides(const std::vector<std::string>& texts) {
    std::vector<Override> parsed;
    parsed.reserve(texts.size());
    for (const std::string& text : texts) {
        parsed.push_back(parse_override(text));
    }
    return parsed;
}

void apply_overrides(Json& document, const std::vector<Override>& overrides) {
    for (const auto& o : overrides) {
        if (!is_known_path(o.key)) {
            throw InputError("--set " + unknown_key_message(o.key));
        }
        const auto dot = o.key.rfind('.');
        if (dot == std::string::npos) {
            document[o.key] = override_value(o);
            continue;
        }
        // Walk (and create) the sections down to the key: "hardware.topology.oversubscription".
        Json* object = &document;
        std::size_t begin = 0;
        while (begin < dot) {
            const std::size_t end = std::min(o.key.find('.', begin), dot);
            Json& child = (*object)[o.key.substr(begin, end - begin)];  // null when the file has none
            if (child.is_null()) {
                child = Json::object();
            }
            if (!child.is_object()) {
                throw InputError("--set " + o.key + ": " + o.key.substr(0, end) + " is " +
                                 describe_json(child) + " in the scenario, not an object");
            }
            object = &child;
            begin = end + 1;
        }
        (*object)[o.key.substr(dot + 1)] = override_value(o);
    }
}

}  // namespace trainsim::config
