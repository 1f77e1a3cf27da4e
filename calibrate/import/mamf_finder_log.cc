#include "calibrate/import/mamf_finder_log.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "calibrate/import/nccl_log_lines.h"
#include "calibrate/measure/source_id.h"
#include "sim/core/input_error.h"

namespace trainsim::calibrate {

namespace {

constexpr double kFlopsPerTflop = 1e12;
constexpr std::string_view kBestOutcome = "The best outcome was ";  // mamf-finder before 2025
constexpr std::string_view kDtypeHeader = "** Dtype:";
constexpr std::string_view kTag = "mamf-finder";

// One printed rate and the statistic it is: mean, median or max over the timed iterations.
struct Rate {
    std::string statistic;
    double tflops = 0.0;
    std::string printed;
};

// What one result line says: the rates and the shape as printed, "MxNxK".
struct ResultLine {
    std::vector<Rate> rates;
    std::int64_t a = 0;  // the three printed numbers of "AxBxC"
    std::int64_t b = 0;
    std::int64_t c = 0;
    std::string shape_text;
};

std::optional<std::int64_t> positive_integer(std::string_view s) {
    if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string_view::npos) {
        return std::nullopt;
    }
    std::int64_t v = 0;
    for (const char ch : s) {
        v = v * 10 + (ch - '0');
    }
    return v > 0 ? std::optional<std::int64_t>(v) : std::nullopt;
}

// "13312x15360x6144" into its three numbers.
bool parse_shape(std::string_view text, ResultLine& out) {
    const auto x1 = text.find('x');
    const auto x2 = x1 == std::string_view::npos ? x1 : text.find('x', x1 + 1);
    if (x2 == std::string_view::npos) {
        return false;
    }
    const auto a = positive_integer(text.substr(0, x1));
    const auto b = positive_integer(text.substr(x1 + 1, x2 - x1 - 1));
    const auto c = positive_integer(text.substr(x2 + 1));
    if (!a || !b || !c) {
        return false;
    }
    out.a = *a;
    out.b = *b;
    out.c = *c;
    out.shape_text = std::string(text);
    return true;
}

// The rates before the '@': "25.6(mean) 25.6(median) 25.8(max)", "807.5 TFLOPS" (the fastest iteration,
// mamf-finder before December 2024), "800.1(max) / 790.2(median) TFLOPS". A word without digits (the
// phase label of 2026 versions, "TFLOPS") is no rate. Returns the rule broken, or "".
std::string parse_rates(std::string values, std::vector<Rate>& out) {
    std::replace(values.begin(), values.end(), '/', ' ');
    if (const auto glued = values.find("TFLOPS"); glued != std::string::npos) {
        values.insert(glued, " ");  // "831.7TFLOPS"
    }
    const std::vector<std::string> words = nccl_log::split(values);
    for (std::size_t i = 0; i < words.size(); ++i) {
        const std::string& w = words[i];
        if (w.find_first_of("0123456789") == std::string::npos) {
            continue;
        }
        const auto open = w.find('(');
        const std::string number = w.substr(0, open);
        const auto printed = nccl_log::parse_printed(number);
        if (!printed) {
            return "'" + w + "' is not a rate";
        }
        std::string statistic;
        if (open != std::string::npos) {
            if (w.back() != ')') {
                return "'" + w + "' is not a rate";
            }
            statistic = w.substr(open + 1, w.size() - open - 2);
            if (statistic != "mean" && statistic != "median" && statistic != "max") {
                return "'" + w + "': the statistic must be mean, median or max";
            }
        } else if (i + 1 < words.size() && words[i + 1] == "TFLOPS") {
            statistic = "max";  // np.amin(times): the fastest of the timed iterations
        } else {
            return "'" + w + "' names no statistic";
        }
        out.push_back({statistic, printed->value, number});
    }
    return out.empty() ? "no rate before the '@'" : "";
}

// "VALUES @ AxBxC ..." into `out`; returns the rule broken, or "".
std::string parse_result(const std::string& values, std::string_view after_at, ResultLine& out) {
    if (std::string rule = parse_rates(values, out.rates); !rule.empty()) {
        return rule;
    }
    const auto first = after_at.find_first_not_of(' ');
    const std::string_view rest =
        first == std::string_view::npos ? std::string_view{} : after_at.substr(first);
    const std::string_view shape = rest.substr(0, rest.find_first_of(" \t|"));
    if (!parse_shape(shape, out)) {
        return "'" + std::string(shape) + "' is not a shape MxNxK of positive integers";
    }
    return "";
}

// The statistic a record takes: the mean (what the published MAMF tables report, and the time of an
// average call, which is what the simulator prices), else the median, else the max.
const Rate* preferred(const std::vector<Rate>& rates) {
    for (const char* s : {"mean", "median", "max"}) {
        const auto it =
            std::find_if(rates.begin(), rates.end(), [&](const Rate& r) { return r.statistic == s; });
        if (it != rates.end()) {
            return &*it;
        }
    }
    return nullptr;
}

// torch dtype names (mamf-finder --dtype, printed as "torch.NAME") to the names the fits use; nullopt for
// a dtype no hardware profile has a peak for.
std::optional<std::string> dtype_of(std::string_view torch_name) {
    if (torch_name == "bfloat16") {
        return "bf16";
    }
    if (torch_name == "float16" || torch_name == "half") {
        return "fp16";
    }
    // E4M3 (NVIDIA, Gaudi) and E4M3FNUZ (AMD), E5M2: the FP8 tensor-core rate.
    if (torch_name == "float8_e4m3fn" || torch_name == "float8_e4m3fnuz" || torch_name == "float8_e5m2" ||
        torch_name == "float8_e5m2fnuz") {
        return "fp8";
    }
    return std::nullopt;
}

// Lines mamf-finder itself prints besides results and its header block.
bool is_own_line(std::string_view line) {
    for (const char* p :
         {"Benchmark started on", "Warming up the accelerator", "accelerator warmup finished", "Tried ",
          "geomean:", "Across ", "arithmetic mean:", "geometric mean:", "Legend:", "Elapsed time:",
          "adaptive warmup:", "Warming up (adaptive", "telemetry:", "[auto]"}) {
        if (line.starts_with(p)) {
            return true;
        }
    }
    return false;
}

bool is_rule_line(std::string_view line) {
    return line.size() >= 10 && line.find_first_not_of('-') == std::string_view::npos;
}

// A shape line: "N | VALUES @ SHAPE ... | best: ...". The index and the bar make it one; the rest must parse.
bool is_shape_line(std::string_view line, std::size_t& bar) {
    const auto digits = line.find_first_not_of("0123456789");
    if (digits == 0 || digits == std::string_view::npos) {
        return false;
    }
    const auto b = line.find_first_not_of(' ', digits);
    if (b == std::string_view::npos || line[b] != '|' || b == digits) {
        return false;
    }
    bar = b;
    return line.find(" @ ", b) != std::string_view::npos;
}

std::string quote(std::string_view s) {
    constexpr std::size_t kMax = 80;
    return "'" + std::string(s.substr(0, kMax)) + (s.size() > kMax ? "...'" : "'");
}

struct Pending {
    int line = 0;
    ResultLine result;
    Rate rate;
    bool summary = false;
    bool flipped = false;  // printed MxNxK is A(MxN)·B(NxK): the reduction is the middle number
    std::string dtype;
    bool dtype_assumed = false;
};

}  // namespace

bool looks_like_mamf_finder_log(const std::string& text) {
    std::stringstream in(text);
    std::string raw;
    while (std::getline(in, raw)) {
        const std::string line = nccl_log::strip_launcher_prefix(raw);
        std::size_t bar = 0;
        if (line.starts_with(kBestOutcome) || line.starts_with("** Dtype: torch.") ||
            (is_shape_line(line, bar) && line.find("| best:") != std::string::npos)) {
            return true;
        }
    }
    return false;
}

MeasurementSet parse_mamf_finder_log(const std::string& text, const std::string& path) {
    const std::string id = source_id_for_path(path);
    std::vector<Pending> rows;
    std::vector<Pending> summaries;
    std::vector<std::string> skipped_summaries;  // "line L (why)"
    std::vector<std::string> zero_rates;
    int foreign = 0;
    std::string first_foreign;
    bool in_header = false;
    std::optional<std::string> dtype;
    std::optional<bool> flipped;  // the file's shape convention, from its first shape line

    std::stringstream in(text);
    std::string raw;
    int at = 0;
    while (std::getline(in, raw)) {
        ++at;
        const std::string line = nccl_log::strip_launcher_prefix(raw);
        const std::string where = path + ": line " + std::to_string(at);
        if (line.empty()) {
            continue;
        }
        if (line.starts_with(kDtypeHeader)) {
            std::string name = line.substr(kDtypeHeader.size());
            name.erase(0, name.find_first_not_of(' '));
            if (name.starts_with("torch.")) {
                name.erase(0, 6);
            }
            dtype = dtype_of(name);
            if (!dtype) {
                throw InputError(
                    where + ": dtype " + quote(name) +
                    " has no peak in a hardware profile; mamf-finder logs of bfloat16 or float16 "
                    "(gpu.peak_tflops) and float8_e4m3fn/e4m3fnuz/e5m2 (gpu.fp8_peak_tflops) "
                    "can be fitted");
            }
            in_header = true;
            continue;
        }
        if (line.starts_with("Benchmark started on") || line.starts_with("** ")) {
            in_header = true;
            continue;
        }
        if (is_rule_line(line)) {
            in_header = false;
            continue;
        }
        std::size_t bar = 0;
        const bool shape_line = is_shape_line(line, bar);
        const bool best_outcome = line.starts_with(kBestOutcome);
        std::string label;
        for (const char* s : {"mean:", "median:", "max:"}) {
            if (line.starts_with(s) && line.find(" @ ") != std::string::npos) {
                label = s;
                label.pop_back();
            }
        }
        const bool result = shape_line || best_outcome || !label.empty();
        // A header ends at its rule line, or at the first result where a copy left the rule out.
        in_header = in_header && !result;
        if (in_header || is_own_line(line)) {
            continue;
        }
        if (!result) {
            if (foreign++ == 0) {
                first_foreign = "line " + std::to_string(at) + ": " + quote(line);
            }
            continue;
        }
        const auto at_sign = line.find(" @ ", bar);
        const std::size_t values_from = shape_line     ? bar + 1
                                        : best_outcome ? kBestOutcome.size()
                                                       : label.size() + 1;
        Pending p;
        p.line = at;
        p.summary = !shape_line;
        if (const std::string rule = parse_result(line.substr(values_from, at_sign - values_from),
                                                  std::string_view(line).substr(at_sign + 3), p.result);
            !rule.empty()) {
            throw InputError(where + ": " + rule +
                             " (a mamf-finder result line reads 'N | R(mean) R(median) " +
                             "R(max) @ MxNxK | best: ...' or 'mean: R TFLOPS @ MxNxK (MxNxK)')");
        }
        if (!label.empty()) {
            p.result.rates.front().statistic = label;  // "mean:   35.1 TFLOPS @ ..."
        }
        if (shape_line && !flipped) {
            // mamf-finder multiplied A(m,n)·B(n,k) until it printed the mean first (January 2025, "flip N
            // and K to adhere to the common convention"); from then on A(m,k)·B(k,n).
            flipped = p.result.rates.front().statistic != "mean";
        }
        p.flipped = shape_line ? *flipped : best_outcome;
        p.rate = *preferred(p.result.rates);
        p.dtype = dtype.value_or("bf16");
        p.dtype_assumed = !dtype;
        (shape_line ? rows : summaries).push_back(std::move(p));
    }

    if (rows.empty() && summaries.empty()) {
        throw InputError(path +
                         ": no mamf-finder result line ('N | R(mean) R(median) R(max) @ MxNxK | best: "
                         "...', 'mean: R TFLOPS @ MxNxK' or 'The best outcome was R TFLOPS @ MxNxK')" +
                         (foreign > 0 ? "; the first other line is " + first_foreign : std::string()));
    }
    const bool summary_mean = std::any_of(summaries.begin(), summaries.end(),
                                          [](const Pending& s) { return s.rate.statistic == "mean"; });
    const std::string statistic = !rows.empty()  ? rows.front().rate.statistic
                                  : summary_mean ? "mean"
                                                 : summaries.front().rate.statistic;
    std::vector<const Pending*> records;
    for (const Pending& r : rows) {
        records.push_back(&r);
    }
    for (const Pending& s : summaries) {
        if (s.rate.statistic != statistic) {
            skipped_summaries.push_back("line " + std::to_string(s.line) + " (" + s.rate.statistic +
                                        ", not the " + statistic + " the records take)");
            continue;
        }
        const auto same = std::find_if(rows.begin(), rows.end(), [&](const Pending& r) {
            return r.result.shape_text == s.result.shape_text && r.rate.printed == s.rate.printed;
        });
        if (same != rows.end()) {
            skipped_summaries.push_back("line " + std::to_string(s.line) + " (repeats line " +
                                        std::to_string(same->line) + ")");
            continue;
        }
        records.push_back(&s);
    }

    MeasurementSet set;
    bool assumed = false;
    for (const Pending* p : records) {
        if (p->rate.tflops <= 0.0) {
            zero_rates.push_back("line " + std::to_string(p->line));
            continue;
        }
        GemmMeasurement g;
        const ResultLine& r = p->result;
        g.shape = p->flipped ? cost::GemmShape{r.a, r.c, r.b, 1} : cost::GemmShape{r.a, r.b, r.c, 1};
        g.dtype = p->dtype;
        g.tflops = p->rate.tflops;
        g.seconds = g.shape.flops().value / (p->rate.tflops * kFlopsPerTflop);
        g.tags = {std::string(kTag), p->rate.statistic};
        if (p->summary) {
            g.tags.emplace_back("best-of-run");
        }
        if (p->dtype_assumed) {
            g.tags.emplace_back("dtype-assumed");
            assumed = true;
        }
        g.origin.source_id = id;
        g.origin.record = "line " + std::to_string(p->line);
        g.origin.source = id + ": line " + std::to_string(p->line) + ", " + r.shape_text + " (MxNxK" +
                          (p->flipped ? ", k = the middle number" : "") + ") at " + p->rate.printed +
                          " TFLOPS (" + p->rate.statistic + ")";
        set.gemms.push_back(std::move(g));
    }
    if (set.gemms.empty()) {
        throw InputError(path + ": every result line printed a rate of 0.0 TFLOPS, below the one decimal " +
                         "mamf-finder prints; no time can be read from it");
    }
    auto list = [](const std::vector<std::string>& items) {
        std::string s;
        for (const std::string& i : items) {
            s += (s.empty() ? "" : "; ") + i;
        }
        return s;
    };
    if (foreign > 0) {
        set.warnings.push_back(path + ": " + std::to_string(foreign) + " line" + (foreign == 1 ? "" : "s") +
                               " that are not mamf-finder output skipped (the first, " + first_foreign + ")");
    }
    if (!skipped_summaries.empty()) {
        set.warnings.push_back(path + ": " + std::to_string(skipped_summaries.size()) + " best-outcome line" +
                               (skipped_summaries.size() == 1 ? "" : "s") +
                               " skipped: " + list(skipped_summaries));
    }
    if (!zero_rates.empty()) {
        set.warnings.push_back(
            path + ": " + std::to_string(zero_rates.size()) +
            " result lines skipped with a rate of 0.0 TFLOPS (below the printed precision): " +
            list(zero_rates));
    }
    if (assumed) {
        set.warnings.push_back(path +
                               ": no '** Dtype:' header line; the records are bfloat16, mamf-finder's " +
                               "default (and its only dtype before 2025), tagged dtype-assumed");
    }
    set.files.push_back({path, id, "mamf-finder.py log " + display_path(path)});
    return set;
}

}  // namespace trainsim::calibrate
