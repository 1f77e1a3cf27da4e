#include "calibrate/import/nccl_tests_log.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "calibrate/measure/source_id.h"
#include "sim/core/input_error.h"

namespace trainsim::calibrate {

namespace {

constexpr double kSecondsPerMicrosecond = 1e-6;
// The log prints algbw and busbw with two decimals and the time with four or five digits; 1% plus one
// unit in the last place is far above that rounding and far below a wrong column or factor.
constexpr double kRelativeTolerance = 0.01;
constexpr double kAbsoluteTolerance = 0.011;
constexpr std::size_t kMaxQuotedLength = 60;
constexpr std::int64_t kMaxCount = 999999;  // ranks, threads, GPUs: far above any cluster

std::optional<double> parse_number(std::string_view s) {
    double v = 0.0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) {
        return std::nullopt;
    }
    return v;
}

bool is_whole_number(std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// Hand-written scanners rather than std::regex: libstdc++'s regex recurses per character, so one long line
// in a log could overflow the stack.

// "type" and "redop" columns: a lower-case name such as float, bfloat16, sum, none.
bool is_name(std::string_view s) {
    return !s.empty() && s.front() >= 'a' && s.front() <= 'z' &&
           s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string_view::npos;
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

bool is_word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The NAME of the first "NAME_perf" word in a header line ("./build/all_reduce_perf", "# Collective test
// starting: all_gather_perf"), or "".
std::string binary_name(std::string_view line) {
    constexpr std::string_view kSuffix = "_perf";
    for (std::size_t at = line.find(kSuffix); at != std::string_view::npos; at = line.find(kSuffix, at + 1)) {
        const std::size_t end = at + kSuffix.size();
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

std::vector<std::string> split(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> tokens;
    for (std::string t; in >> t;) {
        tokens.push_back(t);
    }
    return tokens;
}

std::string quoted(const std::string& line) {
    return "'" + (line.size() > kMaxQuotedLength ? line.substr(0, kMaxQuotedLength - 3) + "..." : line) + "'";
}

// The collectives of nccl-tests' binaries that the cost model prices.
std::optional<cost::CollectiveKind> collective_of_binary(const std::string& name) {
    if (name == "all_reduce") {
        return cost::CollectiveKind::AllReduce;
    }
    if (name == "all_gather") {
        return cost::CollectiveKind::AllGather;
    }
    if (name == "reduce_scatter") {
        return cost::CollectiveKind::ReduceScatter;
    }
    if (name == "sendrecv") {
        return cost::CollectiveKind::SendRecv;
    }
    return std::nullopt;
}

// One side (out-of-place or in-place) of a result row.
struct Side {
    double time_us = 0.0;
    double algbw = 0.0;
    double busbw = 0.0;
};

struct Row {
    int line = 0;
    std::int64_t bytes = 0;
    std::optional<Side> side[2];  // out-of-place, in-place
};

class LogParser {
public:
    LogParser(std::string path, const NcclLogOptions& options) : path_(std::move(path)), options_(options) {}

    MeasurementSet parse(const std::string& text) {
        std::istringstream in(text);
        int number = 0;
        for (std::string line; std::getline(in, line);) {
            ++number;
            read_line(strip(line), number);
        }
        if (rows_.empty()) {
            throw InputError(path_ +
                             ": no result rows (lines of size, count, type, redop, root, time, algbw, busbw, "
                             "#wrong): is this nccl-tests output?");
        }
        return records();
    }

private:
    [[noreturn]] void fail(int line, const std::string& rule) const {
        throw InputError(path_ + ":" + std::to_string(line) + ": " + rule);
    }

    // A count in a header line: a whole number that fits comfortably in an int.
    int count_of(const std::string& word, int line, const char* what) const {
        constexpr std::size_t kMaxDigits = 6;
        if (!is_whole_number(word) || word.size() > kMaxDigits) {
            fail(line, std::string(what) + " '" + word + "' must be a whole number below a million");
        }
        return std::stoi(word);
    }

    // Drops a trailing CR, mpirun's "[1,0]<stdout>:" prefix and surrounding blanks.
    static std::string strip(std::string line) {
        if (!line.empty() && line.back() == '\r') {
            line.pop_back();
        }
        line.erase(0, mpi_prefix_length(line));
        const auto first = line.find_first_not_of(" \t");
        const auto last = line.find_last_not_of(" \t");
        return first == std::string::npos ? std::string{} : line.substr(first, last - first + 1);
    }

    void read_line(const std::string& line, int number) {
        if (line.empty()) {
            return;
        }
        if (line.front() == '#') {
            read_header(line, number);
            return;
        }
        // NCCL_DEBUG=INFO interleaves its own lines ("host:pid:tid [0] NCCL INFO ...").
        if (line.find("NCCL INFO") != std::string::npos || line.find("NCCL WARN") != std::string::npos) {
            return;
        }
        read_row(line, number);
    }

    void read_header(const std::string& line, int number) {
        const std::vector<std::string> words = split(line.substr(1));
        // "#  Rank  0 Group  0 Pid  1234 on   host device  0 [0x07] NVIDIA A100-SXM4-80GB"
        if (words.size() >= 8 && words[0] == "Rank" && words[2] == "Group" && words[4] == "Pid" &&
            words[6] == "on") {
            ranks_.insert(count_of(words[1], number, "a rank"));
            hosts_.insert(words[7]);
            return;
        }
        // "# nThread 1 nGpus 8 minBytes ...": one process driving nThread x nGpus GPUs.
        for (std::size_t i = 0; i + 3 < words.size(); ++i) {
            if (words[i] == "nThread" && words[i + 2] == "nGpus") {
                const std::int64_t ranks = std::int64_t{count_of(words[i + 1], number, "nThread")} *
                                           count_of(words[i + 3], number, "nGpus");
                if (ranks > kMaxCount) {
                    fail(number, "nThread x nGpus must be below a million");
                }
                process_ranks_ = static_cast<int>(ranks);
            }
        }
        if (const std::string name = binary_name(line); !name.empty()) {
            const auto op = collective_of_binary(name);
            if (!op) {
                fail(number, name + "_perf measures a collective the cost model does not price (it reads "
                                    "all_reduce, all_gather, reduce_scatter and sendrecv)");
            }
            if (log_op_ && *log_op_ != *op) {
                fail(number, "names " + name + "_perf after " + std::string(cost::to_string(*log_op_)) +
                                 " earlier; one log, one collective");
            }
            log_op_ = op;
        }
        const std::vector<std::string> tokens = split(line.substr(1));
        if (tokens.size() >= 4 && tokens[0] == "size" && tokens[1] == "count" && tokens[2] == "type") {
            has_root_ = std::find(tokens.begin(), tokens.end(), "root") != tokens.end();
        }
    }

    std::optional<Side> read_side(const std::vector<std::string>& t, std::size_t at, int number,
                                  const char* which) {
        const bool na = t[at] == "N/A" && t[at + 1] == "N/A" && t[at + 2] == "N/A";
        if (na) {
            return std::nullopt;
        }
        Side s;
        double* fields[] = {&s.time_us, &s.algbw, &s.busbw};
        const char* names[] = {"time", "algbw", "busbw"};
        for (std::size_t i = 0; i < 3; ++i) {
            const auto v = parse_number(t[at + i]);
            if (!v || *v < 0.0) {
                fail(number, std::string("the ") + which + " " + names[i] + " '" + t[at + i] +
                                 "' must be a non-negative number (or all three of time, algbw, busbw N/A)");
            }
            *fields[i] = *v;
        }
        const std::string& wrong = t[at + 3];
        if (wrong != "N/A") {
            const auto v = parse_number(wrong);
            if (!v) {
                fail(number, std::string("the ") + which + " #wrong '" + wrong + "' must be a number or N/A");
            }
            // A count of wrong elements (an integer column) means the run was broken; an old-style error
            // magnitude (5e-07) is rounding.
            if (is_whole_number(wrong) && *v > 0) {
                fail(number, std::string("the ") + which + " run reports " + wrong +
                                 " wrong values; a broken run's timing cannot be used");
            }
        }
        if (!(s.time_us > 0.0)) {
            fail(number, std::string("the ") + which + " time must be greater than 0");
        }
        return s;
    }

    void read_row(const std::string& line, int number) {
        const std::vector<std::string> t = split(line);
        // size count type redop [root] then (time algbw busbw #wrong) x 2
        const std::size_t expected = has_root_ ? (*has_root_ ? 13 : 12) : (t.size() == 12 ? 12 : 13);
        if (t.size() != expected) {
            fail(number, "a result row has " + std::to_string(expected) + " columns (size count type redop" +
                             (expected == 13 ? " root" : "") +
                             ", then time algbw busbw #wrong out-of-place and in-place), got " +
                             std::to_string(t.size()) + ": " + quoted(line));
        }
        if (!is_whole_number(t[0])) {
            fail(number, "size '" + t[0] + "' must be a whole number of bytes");
        }
        if (!is_whole_number(t[1])) {
            fail(number, "count '" + t[1] + "' must be a whole number of elements");
        }
        if (!is_name(t[2]) || !is_name(t[3])) {
            fail(number, "type '" + t[2] + "' and redop '" + t[3] + "' must be names such as float and sum");
        }
        const std::size_t first = expected == 13 ? 5 : 4;
        if (expected == 13 && !is_whole_number(t[4].front() == '-' ? t[4].substr(1) : t[4])) {
            fail(number, "root '" + t[4] + "' must be an integer");
        }
        Row row;
        row.line = number;
        try {
            row.bytes = std::stoll(t[0]);
        } catch (const std::exception&) {
            fail(number, "size '" + t[0] + "' is too large");
        }
        row.side[0] = read_side(t, first, number, "out-of-place");
        row.side[1] = read_side(t, first + 4, number, "in-place");
        for (const auto& s : row.side) {
            if (s && row.bytes > 0) {
                // algbw = S / t, in GB/s with t in microseconds.
                check(number, "algbw", s->algbw, static_cast<double>(row.bytes) / (s->time_us * 1e3),
                      "size / time");
            }
        }
        if (row.bytes > 0) {  // nccl-tests may start at 0 bytes; an empty collective costs nothing
            rows_.push_back(row);
        }
    }

    void check(int number, const char* what, double got, double expected, const std::string& rule) const {
        if (std::abs(got - expected) > kAbsoluteTolerance + kRelativeTolerance * expected) {
            std::ostringstream msg;
            msg << what << " " << got << " is not " << rule << " = " << expected;
            fail(number, msg.str());
        }
    }

    template <typename T>
    T settle(const char* key, const std::optional<T>& from_log, const std::optional<T>& given,
             const char* how, const std::string& describe_log, const std::string& describe_given) const {
        if (from_log && given && *from_log != *given) {
            throw InputError(path_ + ": " + key + " " + describe_given + " disagrees with the log (" +
                             describe_log + ")");
        }
        if (from_log) {
            return *from_log;
        }
        if (given) {
            return *given;
        }
        throw InputError(path_ + ": cannot tell " + how + " from the log; give " + key);
    }

    MeasurementSet records() const {
        const cost::CollectiveKind op = settle<cost::CollectiveKind>(
            "op", log_op_, options_.op, "which collective it measures (no 'NAME_perf' in it)",
            log_op_ ? cost::to_string(*log_op_) : "", options_.op ? cost::to_string(*options_.op) : "");
        std::optional<int> log_ranks;
        if (!ranks_.empty()) {
            log_ranks = static_cast<int>(ranks_.size());
        } else if (process_ranks_) {
            log_ranks = process_ranks_;
        }
        const int ranks = settle<int>("ranks", log_ranks, options_.ranks,
                                      "the number of ranks (no '#  Rank' or 'nThread .. nGpus' lines)",
                                      log_ranks ? std::to_string(*log_ranks) : "",
                                      options_.ranks ? std::to_string(*options_.ranks) : "");
        if (ranks < 2) {
            throw InputError(path_ + ": ranks must be at least 2 for a collective, got " +
                             std::to_string(ranks));
        }
        // A log without Rank lines comes from one process, which drives the GPUs of one node.
        const std::optional<int> log_nodes = hosts_.empty()
                                                 ? (options_.nodes ? std::nullopt : std::optional<int>(1))
                                                 : std::optional<int>(static_cast<int>(hosts_.size()));
        const int nodes = settle<int>("nodes", log_nodes, options_.nodes, "the number of nodes",
                                      log_nodes ? std::to_string(*log_nodes) : "",
                                      options_.nodes ? std::to_string(*options_.nodes) : "");
        if (nodes < 1 || nodes > ranks) {
            throw InputError(path_ + ": nodes must be between 1 and ranks (" + std::to_string(ranks) +
                             "), got " + std::to_string(nodes));
        }

        MeasurementSet set;
        const std::string id = source_id_for_path(path_);
        set.files.push_back({path_, id, "nccl-tests log " + display_path(path_)});
        const double factor = busbw_factor(op, ranks);
        for (const Row& row : rows_) {
            for (int i = 0; i < 2; ++i) {
                const auto& s = row.side[i];
                if (!s) {
                    continue;
                }
                check(row.line, "busbw", s->busbw, s->algbw * factor,
                      "algbw x " + std::string(cost::to_string(op)) + "'s bus factor at " +
                          std::to_string(ranks) + " ranks");
                CollectiveMeasurement c;
                c.op = op;
                c.ranks = ranks;
                c.nodes = nodes;
                c.bytes = row.bytes;
                c.placement = i == 0 ? Placement::OutOfPlace : Placement::InPlace;
                c.seconds = s->time_us * kSecondsPerMicrosecond;
                c.busbw_GBps = s->busbw;
                c.origin.source_id = id;
                c.origin.record = "line " + std::to_string(row.line) + " " + to_string(c.placement);
                c.origin.source =
                    id + ": line " + std::to_string(row.line) + ", " + (i == 0 ? "out-of-place" : "in-place");
                set.collectives.push_back(c);
            }
        }
        if (set.collectives.empty()) {
            throw InputError(path_ + ": every result row is N/A; nothing was measured");
        }
        return set;
    }

    std::string path_;
    NcclLogOptions options_;
    std::vector<Row> rows_;
    std::set<int> ranks_;
    std::set<std::string> hosts_;
    std::optional<int> process_ranks_;
    std::optional<cost::CollectiveKind> log_op_;
    std::optional<bool> has_root_;
};

}  // namespace

MeasurementSet parse_nccl_tests_log(const std::string& text, const std::string& path,
                                    const NcclLogOptions& options) {
    return LogParser(path, options).parse(text);
}

MeasurementSet read_nccl_tests_log(const std::string& path, const NcclLogOptions& options) {
    return parse_nccl_tests_log(read_text_file(path), path, options);
}

}  // namespace trainsim::calibrate
