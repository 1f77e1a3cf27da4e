#include "sim/core/strict_json.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sim/core/input_error.h"

namespace trainsim {

namespace {

constexpr std::size_t kMaxDescribedLength = 48;

// A scenario is three levels deep, a profile seven (network.intra_node.busbw_GBps_vs_bytes.points[i].x).
// Far deeper text is refused while it is parsed: nlohmann builds it, but printing it in an error message,
// copying it or comparing it recurses once per level, and 100000 levels overflowed the stack.
constexpr int kMaxNesting = 64;

struct TextPosition {
    std::size_t line = 1;
    std::size_t column = 1;
};

// nlohmann reports `byte`, the count of characters read including the one that failed (an unexpected
// end of input counts as one past the last). Line and column are those of that character. Counting
// ourselves puts an offending newline at the end of its own line rather than at column 0 of the next.
TextPosition position_of(const std::string& text, std::size_t byte) {
    const std::size_t offset = std::min(byte == 0 ? 0 : byte - 1, text.size());
    TextPosition p;
    p.line = 1 + static_cast<std::size_t>(
                     std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
    const std::size_t last_newline = offset == 0 ? std::string::npos : text.rfind('\n', offset - 1);
    p.column = last_newline == std::string::npos ? offset + 1 : offset - last_newline;
    return p;
}

// nlohmann's message is "[json.exception.parse_error.101] parse error at line 3, column 5: REASON";
// keep REASON, since the position is reported separately.
std::string parse_error_reason(const std::string& what) {
    const std::size_t column = what.find("column ");
    const std::size_t colon = column == std::string::npos ? std::string::npos : what.find(": ", column);
    return colon == std::string::npos ? what : what.substr(colon + 2);
}

// Tracks the path of the value being parsed and the keys already seen in each open object, and refuses
// nesting deeper than kMaxNesting.
class DuplicateKeyCheck {
public:
    explicit DuplicateKeyCheck(std::string source) : source_(std::move(source)) {}

    bool operator()(int depth, Json::parse_event_t event, Json& parsed) {
        switch (event) {
        case Json::parse_event_t::object_start:
        case Json::parse_event_t::array_start: {
            std::string path = child_path();
            if (depth >= kMaxNesting) {
                // A path that starts at a top-level array ("[][]") reads better glued to the source's name.
                const bool glued = path.empty() || path.front() == '[';
                throw InputError(source_ + (glued ? path : ": " + path) + ": nested deeper than " +
                                 std::to_string(kMaxNesting) + " levels of arrays and objects");
            }
            frames_.push_back({event == Json::parse_event_t::object_start, std::move(path), {}, {}});
            break;
        }
        case Json::parse_event_t::object_end:
        case Json::parse_event_t::array_end:
            frames_.pop_back();
            break;
        case Json::parse_event_t::key: {
            Frame& frame = frames_.back();
            std::string key = parsed.get<std::string>();
            if (!frame.keys.insert(key).second) {
                throw InputError(source_ + ": " + join_path(frame.path, printable_key(key)) +
                                 ": duplicate key (each key may appear only once)");
            }
            frame.last_key = std::move(key);
            break;
        }
        case Json::parse_event_t::value:
            break;
        }
        return true;
    }

private:
    struct Frame {
        bool is_object = true;
        std::string path;
        std::unordered_set<std::string> keys;
        std::string last_key;
    };

    [[nodiscard]] std::string child_path() const {
        if (frames_.empty()) {
            return "";
        }
        const Frame& parent = frames_.back();
        return parent.is_object ? join_path(parent.path, printable_key(parent.last_key)) : parent.path + "[]";
    }

    std::string source_;
    std::vector<Frame> frames_;
};

}  // namespace

Json parse_strict_json(const std::string& text, const std::string& source) {
    DuplicateKeyCheck check(source);
    try {
        // nlohmann copies the callback, so hand it a reference to the one tracker.
        return Json::parse(text, [&check](int depth, Json::parse_event_t event, Json& parsed) {
            return check(depth, event, parsed);
        });
    } catch (const Json::parse_error& e) {
        const TextPosition p = position_of(text, e.byte);
        throw InputError(source + ": invalid JSON at line " + std::to_string(p.line) + ", column " +
                         std::to_string(p.column) + ": " + parse_error_reason(e.what()));
    } catch (const Json::exception& e) {
        // Not a syntax error but a value JSON cannot hold here, e.g. a number that overflows a double.
        throw InputError(source + ": invalid JSON: " + parse_error_reason(e.what()));
    }
}

std::string describe_json(const Json& value) {
    // `replace`: a string from the command line need not be valid UTF-8, and the message must not throw.
    std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (text.size() > kMaxDescribedLength) {
        text.resize(kMaxDescribedLength - 3);
        text += "...";
    }
    return text;
}

std::string printable_key(std::string_view key) {
    const bool plain = std::none_of(key.begin(), key.end(),
                                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
    if (plain) {
        return std::string(key);
    }
    const std::string quoted = Json(std::string(key)).dump(-1, ' ', false, Json::error_handler_t::replace);
    return quoted.substr(1, quoted.size() - 2);
}

std::string comma_list(const std::vector<std::string>& words) {
    std::string text;
    for (const auto& w : words) {
        text += (text.empty() ? "" : ", ") + w;
    }
    return text;
}

std::string join_path(std::string_view section, std::string_view key) {
    return section.empty() ? std::string(key) : std::string(section) + "." + std::string(key);
}

}  // namespace trainsim
