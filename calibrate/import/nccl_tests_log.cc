#include "calibrate/import/nccl_tests_log.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "calibrate/import/nccl_log_lines.h"
#include "calibrate/measure/source_id.h"
#include "sim/core/input_error.h"
#include "sim/core/units.h"

namespace trainsim::calibrate {

namespace {

using nccl_log::PrintedNumber;
constexpr double kBytesPerMicrosecondAtOneGBps = 1e3;  // S bytes in t µs is S / (t·1e3) GB/s
// nccl-tests computes algbw and busbw from the unrounded time and prints each rounded; a check allows
// each printed value its own rounding plus what the time's rounding moves it, and this much more for the
// float arithmetic of both sides.
constexpr double kSlack = 1.0 + 1e-6;
constexpr std::size_t kMaxQuotedLength = 60;
constexpr double kMinPrintedUnits = 100.0;  // a printed busbw of 100 units in its last place: 3 digits
constexpr std::int64_t kMaxCount = 999999;  // ranks, threads, GPUs: far above any cluster

std::string quoted(const std::string& line) {
    return "'" + (line.size() > kMaxQuotedLength ? line.substr(0, kMaxQuotedLength - 3) + "..." : line) + "'";
}

std::string short_number(double v) {
    std::ostringstream out;
    out << std::setprecision(4) << v;
    return out.str();
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

// One side (out-of-place or in-place) of a result row, as printed.
struct Side {
    PrintedNumber time_us;
    PrintedNumber algbw;
    PrintedNumber busbw;
};

struct Row {
    int line = 0;
    std::int64_t bytes = 0;
    std::optional<Side> side[2];  // out-of-place, in-place
};

// What busbw / algbw says about the collective and the ranks (DESIGN.md §6): 2(n−1)/n is all-reduce over
// n ranks, (n−1)/n all-gather, reduce-scatter or alltoall over n, 1 send/recv. Read from the row with the
// largest algbw, whose printed digits say the most; a reading holds when its factor is within the ratio's
// printed rounding and the next n's is not.
struct RatioReading {
    std::string text;                 // "busbw / algbw = 1.75, which reads as all_reduce over 8 ranks"
    std::optional<int> all_reduce_n;  // the n of an all-reduce reading
    double ratio = 0.0;
};

std::optional<int> ranks_for(double ratio, double tolerance, double (*factor)(double)) {
    for (int n = 2; n <= kMaxCount; ++n) {
        const double f = factor(n);
        if (std::abs(f - ratio) <= tolerance) {
            return std::abs(factor(n + 1) - ratio) <= tolerance ? std::nullopt : std::optional<int>(n);
        }
        if (f > ratio + tolerance) {
            return std::nullopt;  // the factors grow with n: past the ratio
        }
    }
    return std::nullopt;
}

RatioReading reading_of_ratio(const std::vector<Row>& rows) {
    const Side* best = nullptr;
    for (const Row& r : rows) {
        for (const auto& s : r.side) {
            if (s && (best == nullptr || s->algbw.value > best->algbw.value)) {
                best = &*s;
            }
        }
    }
    RatioReading reading;
    if (best == nullptr || best->algbw.value < 1.0) {
        return reading;
    }
    const double ratio = best->busbw.value / best->algbw.value;
    reading.ratio = ratio;
    const double tolerance =
        ratio * (best->busbw.half_unit / best->busbw.value + best->algbw.half_unit / best->algbw.value);
    reading.text = "busbw / algbw = " + short_number(ratio);
    std::vector<std::string> readings;
    reading.all_reduce_n = ranks_for(ratio, tolerance, [](double n) { return 2.0 * (n - 1.0) / n; });
    if (reading.all_reduce_n) {
        readings.push_back("all_reduce over " + std::to_string(*reading.all_reduce_n) + " ranks");
    }
    if (const auto n = ranks_for(ratio, tolerance, [](double m) { return (m - 1.0) / m; })) {
        readings.push_back("all_gather, reduce_scatter or alltoall over " + std::to_string(*n) + " ranks");
    }
    if (std::abs(ratio - 1.0) <= tolerance) {
        readings.push_back("sendrecv");
    }
    for (std::size_t i = 0; i < readings.size(); ++i) {
        reading.text += (i == 0 ? ", which reads as " : " or ") + readings[i];
    }
    return reading;
}

class LogParser {
public:
    LogParser(std::string path, const NcclLogOptions& options) : path_(std::move(path)), options_(options) {}

    MeasurementSet parse(const std::string& text) {
        std::istringstream in(text);
        int number = 0;
        for (std::string line; std::getline(in, line);) {
            ++number;
            read_line(nccl_log::strip_launcher_prefix(line), number);
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
        if (!nccl_log::is_whole_number(word) || word.size() > kMaxDigits) {
            fail(line, std::string(what) + " '" + word + "' must be a whole number below a million");
        }
        return std::stoi(word);
    }

    void read_line(const std::string& line, int number) {
        if (line.empty()) {
            return;
        }
        if (line.front() == '#') {
            read_header(line, number);
            return;
        }
        const std::vector<std::string> words = nccl_log::split(line);
        if (!nccl_log::looks_like_row(words)) {
            // NCCL's own lines (INFO, WARN, "NCCL version 2.x"), and MPI, ssh, Slurm, SHARP or X11 lines
            // that a launcher interleaves: not ours, counted and reported.
            if (line.find("NCCL") != std::string::npos) {
                ++nccl_lines_;
            } else {
                if (other_lines_ == 0) {
                    first_other_ = "line " + std::to_string(number) + " " + quoted(line);
                }
                ++other_lines_;
            }
            return;
        }
        read_row(words, line, number);
    }

    void read_header(const std::string& line, int number) {
        const std::vector<std::string> words = nccl_log::split(std::string_view(line).substr(1));
        if (const auto rank = nccl_log::parse_rank_line(words)) {
            (void)count_of(rank->rank, number, "a rank");
            ranks_.insert(rank->rank);
            hosts_.insert(rank->host);
            return;
        }
        // "# nThread 1 nGpus 8 minBytes ...": each process drives nThread x nGpus GPUs.
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
        if (const std::string name = nccl_log::binary_name(line); !name.empty()) {
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
    }

    std::optional<Side> read_side(const std::vector<std::string>& t, std::size_t at, int number,
                                  const char* which) const {
        if (t[at] == "N/A" && t[at + 1] == "N/A" && t[at + 2] == "N/A") {
            return std::nullopt;
        }
        Side s;
        PrintedNumber* fields[] = {&s.time_us, &s.algbw, &s.busbw};
        const char* names[] = {"time", "algbw", "busbw"};
        for (std::size_t i = 0; i < 3; ++i) {
            const auto v = nccl_log::parse_printed(t[at + i]);
            if (!v) {
                fail(number, std::string("the ") + which + " " + names[i] + " '" + t[at + i] +
                                 "' must be a non-negative number (or all three of time, algbw, busbw N/A)");
            }
            *fields[i] = *v;
        }
        const std::string& wrong = t[at + 3];
        if (wrong != "N/A") {
            double v = 0.0;
            const auto [end, ec] = std::from_chars(wrong.data(), wrong.data() + wrong.size(), v);
            if (ec != std::errc() || end != wrong.data() + wrong.size()) {
                fail(number, std::string("the ") + which + " #wrong '" + wrong + "' must be a number or N/A");
            }
            // A count of wrong elements (an integer column) means the run was broken; an old-style error
            // magnitude (5e-07) is rounding.
            if (nccl_log::is_whole_number(wrong) && v > 0) {
                fail(number, std::string("the ") + which + " run reports " + wrong +
                                 " wrong values; a broken run's timing cannot be used");
            }
        }
        if (!(s.time_us.value > 0.0)) {
            fail(number, std::string("the ") + which + " time must be greater than 0");
        }
        return s;
    }

    void read_row(const std::vector<std::string>& t, const std::string& line, int number) {
        const auto layout = nccl_log::row_layout(t);
        if (!layout) {
            fail(number, "a result row is size count type [redop] [root], then time algbw busbw #wrong "
                         "out-of-place and in-place (11 to 13 columns), got " +
                             std::to_string(t.size()) + ": " + quoted(line));
        }
        Row row;
        row.line = number;
        try {
            row.bytes = std::stoll(t[0]);
        } catch (const std::exception&) {
            fail(number, "size '" + t[0] + "' is too large");
        }
        row.side[0] = read_side(t, layout->first_side, number, "out-of-place");
        row.side[1] = read_side(t, layout->first_side + 4, number, "in-place");
        for (const auto& s : row.side) {
            if (s && row.bytes > 0) {
                check(number, "algbw", s->algbw, row.bytes, *s, 1.0, "size / time");
            }
        }
        if (row.bytes > 0) {  // nccl-tests may start at 0 bytes; an empty collective costs nothing
            rows_.push_back(row);
        }
    }

    // `printed` against factor × S / t from the printed time, within both roundings.
    void check(int number, const char* what, const PrintedNumber& printed, std::int64_t bytes,
               const Side& side, double factor, const std::string& rule, const std::string& hint = "") const {
        const double expected =
            factor * static_cast<double>(bytes) / (side.time_us.value * kBytesPerMicrosecondAtOneGBps);
        const double tolerance = printed.half_unit + expected * side.time_us.half_unit / side.time_us.value;
        if (std::abs(printed.value - expected) > tolerance * kSlack) {
            std::ostringstream msg;
            msg << what << " " << printed.value << " is not " << rule << " = " << short_number(expected)
                << " (within the printed rounding, " << short_number(tolerance) << ")" << hint;
            fail(number, msg.str());
        }
    }

    template <typename T>
    T settle(const char* key, const std::optional<T>& from_log, const std::optional<T>& given,
             const std::string& how, const std::string& describe_log,
             const std::string& describe_given) const {
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

    std::string ratio_hint() const {
        const std::string reading = reading_of_ratio(rows_).text;
        return reading.empty() ? "" : " (" + reading + ")";
    }

    // The ranks as the log or the options say them, without failing: for reading the bus factor.
    std::optional<int> known_ranks() const {
        if (!ranks_.empty()) {
            return static_cast<int>(ranks_.size());
        }
        if (options_.ranks) {
            return options_.ranks;
        }
        if (process_ranks_ && *process_ranks_ >= 2) {
            return process_ranks_;
        }
        return std::nullopt;
    }

    int settle_ranks() const {
        if (!ranks_.empty()) {
            const int log_ranks = static_cast<int>(ranks_.size());
            return settle<int>("ranks", log_ranks, options_.ranks, "",
                               std::to_string(log_ranks) + " Rank lines",
                               options_.ranks ? std::to_string(*options_.ranks) : "");
        }
        if (process_ranks_ && options_.ranks) {
            // No Rank lines: nThread x nGpus is what one process drives; a run of several processes
            // (mpirun, srun) has a multiple of it.
            if (*options_.ranks % *process_ranks_ != 0) {
                throw InputError(path_ + ": ranks " + std::to_string(*options_.ranks) +
                                 " is not a multiple of the GPUs one process drives (nThread x nGpus = " +
                                 std::to_string(*process_ranks_) + ")");
            }
            return *options_.ranks;
        }
        if (process_ranks_ && *process_ranks_ >= 2) {
            return *process_ranks_;  // one process driving all its GPUs
        }
        if (options_.ranks) {
            return *options_.ranks;
        }
        throw InputError(path_ + ": cannot tell the number of ranks from the log (" +
                         (process_ranks_
                              ? std::string("one GPU per process, nThread 1 nGpus 1, and no Rank lines")
                              : std::string("no '#  Rank' or 'nThread .. nGpus' lines")) +
                         "); give ranks" + ratio_hint());
    }

    int settle_nodes(int ranks) const {
        if (!hosts_.empty()) {
            const int log_nodes = static_cast<int>(hosts_.size());
            return settle<int>("nodes", log_nodes, options_.nodes, "",
                               std::to_string(log_nodes) + " hosts in the Rank lines",
                               options_.nodes ? std::to_string(*options_.nodes) : "");
        }
        if (options_.nodes) {
            return *options_.nodes;
        }
        if (!process_ranks_ || *process_ranks_ == ranks) {
            return 1;  // one process drives every GPU (or an excerpt without its header): one node
        }
        throw InputError(path_ + ": cannot tell the number of nodes from the log (" + std::to_string(ranks) +
                         " ranks in several processes, no Rank lines naming their hosts); give nodes");
    }

    MeasurementSet records() const {
        MeasurementSet set;
        std::optional<cost::CollectiveKind> log_op = log_op_;
        if (!log_op && !options_.op) {
            // A log cut to its result block names no binary. busbw / algbw = 2(n−1)/n at the log's own
            // rank count n > 2 is all-reduce and nothing else (all-gather, reduce-scatter and alltoall share
            // (n−1)/n, so those stay the user's to say).
            const RatioReading reading = reading_of_ratio(rows_);
            const std::optional<int> known = known_ranks();
            if (!reading.all_reduce_n || !known || *known != *reading.all_reduce_n || *known <= 2) {
                throw InputError(
                    path_ +
                    ": cannot tell which collective it measures (no 'NAME_perf' in it) from the log; "
                    "give op" +
                    ratio_hint());
            }
            log_op = cost::CollectiveKind::AllReduce;
            set.warnings.push_back(path_ +
                                   ": names no collective; busbw / algbw = " + short_number(reading.ratio) +
                                   " is all_reduce's bus factor 2(n-1)/n at its " + std::to_string(*known) +
                                   " ranks and no other collective's: read as all_reduce (give --op to say "
                                   "otherwise)");
        }
        const cost::CollectiveKind op = settle<cost::CollectiveKind>(
            "op", log_op, options_.op, "", log_op ? cost::to_string(*log_op) : "",
            options_.op ? cost::to_string(*options_.op) : "");
        const int ranks = settle_ranks();
        if (ranks < 2) {
            throw InputError(path_ + ": ranks must be at least 2 for a collective, got " +
                             std::to_string(ranks));
        }
        const int nodes = settle_nodes(ranks);
        if (nodes < 1 || nodes > ranks) {
            throw InputError(path_ + ": nodes must be between 1 and ranks (" + std::to_string(ranks) +
                             "), got " + std::to_string(nodes));
        }

        const std::string id = source_id_for_path(path_);
        set.files.push_back({path_, id, "nccl-tests log " + display_path(path_)});
        const double factor = busbw_factor(op, ranks);
        for (const Row& row : rows_) {
            for (int i = 0; i < 2; ++i) {
                const auto& s = row.side[i];
                if (!s) {
                    continue;
                }
                check(row.line, "busbw", s->busbw, row.bytes, *s, factor,
                      "algbw x " + std::string(cost::to_string(op)) + "'s bus factor at " +
                          std::to_string(ranks) + " ranks",
                      ratio_hint());
                CollectiveMeasurement c;
                c.op = op;
                c.ranks = ranks;
                c.nodes = nodes;
                c.bytes = row.bytes;
                c.placement = i == 0 ? Placement::OutOfPlace : Placement::InPlace;
                // The time always: it has more digits (a busbw of 0.00 is a time of 120 µs). The printed
                // busbw only where it has 3 digits or more, for fits that ask for the printed column.
                c.seconds = s->time_us.value * kSecondsPerMicrosecond;
                if (s->busbw.value >= kMinPrintedUnits * 2.0 * s->busbw.half_unit) {
                    c.busbw_GBps = s->busbw.value;
                }
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
        if (nccl_lines_ + other_lines_ > 0) {
            set.warnings.push_back(path_ + ": skipped " + std::to_string(nccl_lines_ + other_lines_) +
                                   " lines that are not nccl-tests output (" + std::to_string(nccl_lines_) +
                                   " from NCCL, " + std::to_string(other_lines_) + " others" +
                                   (other_lines_ > 0 ? ", the first at " + first_other_ : std::string{}) +
                                   ")");
        }
        return set;
    }

    std::string path_;
    NcclLogOptions options_;
    std::vector<Row> rows_;
    std::set<std::string> ranks_;
    std::set<std::string> hosts_;
    std::optional<int> process_ranks_;
    std::optional<cost::CollectiveKind> log_op_;
    int nccl_lines_ = 0;
    int other_lines_ = 0;
    std::string first_other_;
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
