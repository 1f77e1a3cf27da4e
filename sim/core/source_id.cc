#include "sim/core/source_id.h"

#include <cctype>

namespace trainsim {

namespace {

bool is_id_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool is_word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// The length of the id starting at `at` ("S-" then upper-case words joined by '-'), or 0. Hand-written,
// linear: libstdc++'s std::regex recurses per character and long citation texts come from input files.
std::size_t id_length(std::string_view text, std::size_t at) {
    if (text.compare(at, 2, "S-") != 0) {
        return 0;
    }
    std::size_t end = at + 2;
    std::size_t word_start = end;
    while (true) {
        while (end < text.size() && is_id_char(text[end])) {
            ++end;
        }
        if (end == word_start) {
            // "S-" with no word, or a trailing '-': the id ends before the dash.
            return word_start == at + 2 ? 0 : word_start - 1 - at;
        }
        if (end + 1 < text.size() && text[end] == '-' && is_id_char(text[end + 1])) {
            word_start = ++end;
            continue;
        }
        return end - at;
    }
}

}  // namespace

std::vector<std::string> cited_source_ids(std::string_view text) {
    std::vector<std::string> ids;
    for (std::size_t at = text.find("S-"); at != std::string::npos; at = text.find("S-", at + 1)) {
        if (at > 0 && is_word_char(text[at - 1])) {
            continue;  // glued to a preceding word: "XS-NOPE"
        }
        if (const std::size_t n = id_length(text, at); n > 0) {
            ids.emplace_back(text.substr(at, n));
            at += n - 1;
        }
    }
    return ids;
}

bool is_source_id(std::string_view id) {
    return !id.empty() && id_length(id, 0) == id.size();
}

}  // namespace trainsim
