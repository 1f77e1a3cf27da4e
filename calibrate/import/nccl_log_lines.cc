#include "calibrate/import/nccl_log_lines.h"

#include <charconv>
#include <cmath>

namespace trainsim::calibrate::nccl_log {

namespace {

constexpr std::size_t kSideColumns = 8;  // time algbw busbw #wrong, out-of-place and in-place

bool is_word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The length of a leading "[1,0]<stdout>:" (mpirun --tag-output), or 0.
std::size_t mpi_prefix_length(std::string_view line) {
    if (line.empty() || line.front() != '[') {
        return 0;
    }
    const std::size_t close = line.find(']');
    if (close == std::string_view::npos) {
        return 0;
    }
    const std::string_view inside = line.substr(1, close - 1);
    const std::size_t comma = inside.find(',');
    if (comma == std::string_view::npos || !is_whole_number(inside.substr(0, comma)) ||
        !is_whole_number(inside.substr(comma + 1))) {
        return 0;
    }
    for (const std::string_view tag : {"<stdout>:", "<stderr>:"}) {
        if (line.substr(close + 1, tag.size()) == tag) {
            return close + 1 + tag.size();
        }
    }
    return 0;
}

// The length of a leading "12: " (srun --label), or 0. A result row never has a colon.
std::size_t srun_prefix_length(std::string_view line) {
    const std::size_t start = line.find_first_not_of(' ');
    if (start == std::string_view::npos) {
        return 0;
    }
    const std::size_t colon = line.find(':', start);
    if (colon == std::string_view::npos || colon == start || colon + 1 >= line.size() ||
        line[colon + 1] != ' ' || !is_whole_number(line.substr(start, colon - start))) {
        return 0;
    }
    return colon + 1;
}

}  // namespace

bool is_whole_number(std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

bool is_name(std::string_view s) {
    return !s.empty() && s.front() >= 'a' && s.front() <= 'z' &&
           s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string_view::npos;
}

std::optional<PrintedNumber> parse_printed(std::string_view s) {
    if (s.empty() || s.find_first_not_of("0123456789.") != std::string_view::npos) {
        return std::nullopt;
    }
    double v = 0.0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) {
        return std::nullopt;
    }
    const std::size_t dot = s.find('.');
    const int decimals = dot == std::string_view::npos ? 0 : static_cast<int>(s.size() - dot - 1);
    return PrintedNumber{v, 0.5 * std::pow(10.0, -decimals)};
}

std::string strip_launcher_prefix(std::string line) {
    if (!line.empty() && line.back() == '\r') {
        line.pop_back();
    }
    line.erase(0, mpi_prefix_length(line));
    line.erase(0, srun_prefix_length(line));
    const auto first = line.find_first_not_of(" \t");
    const auto last = line.find_last_not_of(" \t");
    return first == std::string::npos ? std::string{} : line.substr(first, last - first + 1);
}

std::string binary_name(std::string_view line) {
    constexpr std::string_view kSuffix = "_perf";
    constexpr std::string_view kMpi = "_mpi";  // nccl-tests built with MPI=1 NAME_SUFFIX=_mpi
    for (std::size_t at = line.find(kSuffix); at != std::string_view::npos; at = line.find(kSuffix, at + 1)) {
        std::size_t end = at + kSuffix.size();
        if (line.substr(end, kMpi.size()) == kMpi) {
            end += kMpi.size();
        }
        if (end < line.size() && is_word_char(line[end])) {
            continue;  // "_perfect": not a binary
        }
        std::size_t start = at;
        while (start > 0 && ((line[start - 1] >= 'a' && line[start - 1] <= 'z') || line[start - 1] == '_')) {
            --start;
        }
        if (start < at && (start == 0 || !is_word_char(line[start - 1]))) {
            return std::string(line.substr(start, at - start));
        }
    }
    return "";
}

std::vector<std::string> split(std::string_view line) {
    std::vector<std::string> words;
    std::size_t at = 0;
    while (true) {
        at = line.find_first_not_of(" \t", at);
        if (at == std::string_view::npos) {
            return words;
        }
        const std::size_t end = line.find_first_of(" \t", at);
        words.emplace_back(
            line.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
        if (end == std::string_view::npos) {
            return words;
        }
        at = end;
    }
}

std::optional<RankLine> parse_rank_line(const std::vector<std::string>& words) {
    if (words.size() < 6 || words[0] != "Rank" || !is_whole_number(words[1])) {
        return std::nullopt;
    }
    // "Rank R Group G Pid P on HOST" or, before process groups, "Rank R Pid P on HOST".
    const std::size_t pid = words[2] == "Group" ? 4 : 2;
    if (words.size() < pid + 4 || words[pid] != "Pid" || words[pid + 2] != "on") {
        return std::nullopt;
    }
    return RankLine{words[1], words[pid + 3]};
}

bool looks_like_row(const std::vector<std::string>& words) {
    return words.size() >= 3 && is_whole_number(words[0]) && is_whole_number(words[1]) && is_name(words[2]);
}

std::optional<RowLayout> row_layout(const std::vector<std::string>& words) {
    if (words.size() < 3 + kSideColumns || words.size() > 5 + kSideColumns) {
        return std::nullopt;
    }
    RowLayout layout;
    layout.first_side = words.size() - kSideColumns;
    const auto is_root = [](const std::string& w) {
        return is_whole_number(w.front() == '-' ? std::string_view(w).substr(1) : std::string_view(w));
    };
    if (layout.first_side == 5) {
        layout.has_redop = is_name(words[3]);
        layout.has_root = is_root(words[4]);
        if (!layout.has_redop || !layout.has_root) {
            return std::nullopt;
        }
    } else if (layout.first_side == 4) {
        layout.has_redop = is_name(words[3]);
        layout.has_root = !layout.has_redop && is_root(words[3]);
        if (!layout.has_redop && !layout.has_root) {
            return std::nullopt;
        }
    }
    return layout;
}

}  // namespace trainsim::calibrate::nccl_log
