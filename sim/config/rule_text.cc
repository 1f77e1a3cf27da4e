#include "sim/config/rule_text.h"

#include "sim/core/input_error.h"

namespace trainsim::config {

std::string show(std::string_view path, std::int64_t value) {
    return std::string(path) + "=" + std::to_string(value);
}

std::string show(const Factor& f) {
    return show(f.path, f.value);
}

std::string show(const std::vector<Factor>& factors) {
    std::string text;
    for (const auto& f : factors) {
        text += (text.empty() ? "" : " × ") + show(f);
    }
    return text;
}

void fail(const std::string& message) {
    throw InputError(message);
}

}  // namespace trainsim::config
