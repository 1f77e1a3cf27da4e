#include "calibrate/import/blas_bench_table.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <sstream>
#include <vector>

#include "calibrate/measure/source_id.h"
#include "sim/core/input_error.h"

namespace trainsim::calibrate {

namespace {

constexpr double kSecondsPerMicrosecond = 1e-6;

std::string trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) {
        return {};
    }
    return std::string(s.substr(b, s.find_last_not_of(" \t\r") - b + 1));
}

std::vector<std::string> split_columns(const std::string& line) {
    std::vector<std::string> out;
    std::stringstream in(line);
    std::string field;
    while (std::getline(in, field, ',')) {
        out.push_back(trim(field));
    }
    return out;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

// The header's columns, without the "[0]:" prefix the client puts before the first one; empty when
// `line` is not a header.
std::vector<std::string> header_columns(const std::string& line) {
    std::string body = trim(line);
    if (body.starts_with("[")) {
        const auto colon = body.find("]:");
        if (colon == std::string::npos) {
            return {};
        }
        body = body.substr(colon + 2);
    }
    std::vector<std::string> cols = split_columns(body);
    for (std::string& c : cols) {
        c = lower(c);
    }
    auto has = [&](const std::string& name) {
        return std::find(cols.begin(), cols.end(), name) != cols.end();
    };
    const bool rate =
        std::any_of(cols.begin(), cols.end(), [](const std::string& c) { return c.ends_with("-gflops"); });
    return has("m") && has("n") && has("k") && has("us") && rate ? cols : std::vector<std::string>{};
}

std::optional<double> parse_number(const std::string& s) {
    double v = 0.0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) {
        return std::nullopt;
    }
    return v;
}

// hipBLASLt's type names (hipDataType spelled by the client) to the names the fits use.
std::string blas_dtype_of(const std::string& t) {
    if (t == "bf16_r") {
        return "bf16";
    }
    if (t == "f16_r") {
        return "fp16";
    }
    if (t == "f32_r") {
        return "fp32";
    }
    if (t.starts_with("f8")) {
        return "fp8";
    }
    return t;
}

}  // namespace

bool looks_like_blas_bench_table(const std::string& text) {
    std::stringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!header_columns(line).empty()) {
            return true;
        }
    }
    return false;
}

MeasurementSet parse_blas_bench_table(const std::string& text, const std::string& path) {
    MeasurementSet set;
    const std::string id = source_id_for_path(path);
    std::vector<std::string> cols;
    std::vector<std::string> bad;  // "line L (reason)"
    std::stringstream in(text);
    std::string line;
    int at = 0;
    auto column = [&](const std::string& name) -> std::optional<std::size_t> {
        const auto it = std::find(cols.begin(), cols.end(), name);
        return it == cols.end() ? std::nullopt : std::optional<std::size_t>(it - cols.begin());
    };
    while (std::getline(in, line)) {
        ++at;
        if (std::vector<std::string> h = header_columns(line); !h.empty()) {
            cols = std::move(h);
            continue;
        }
        const std::string body = trim(line);
        // Rows follow a header and start with the transA flag (N, T or C); the client's other lines (device
        // facts, which have commas too, and "--Solution ..." kernel lines) are not rows.
        if (cols.empty() || body.size() < 2 ||
            std::string_view("NTC").find(body[0]) == std::string_view::npos || body[1] != ',') {
            continue;
        }
        const std::vector<std::string> f = split_columns(body);
        if (f.size() != cols.size()) {
            bad.push_back("line " + std::to_string(at) + " (" + std::to_string(f.size()) +
                          " fields, header has " + std::to_string(cols.size()) + ")");
            continue;
        }
        auto positive = [&](const std::string& name) -> std::optional<double> {
            const auto i = column(name);
            if (!i) {
                return std::nullopt;
            }
            const auto v = parse_number(f[*i]);
            return v && *v > 0.0 ? v : std::nullopt;
        };
        const auto m = positive("m");
        const auto n = positive("n");
        const auto k = positive("k");
        const auto us = positive("us");
        if (!m || !n || !k || !us) {
            bad.push_back("line " + std::to_string(at) + " (m, n, k and us must be positive numbers)");
            continue;
        }
        GemmMeasurement g;
        g.shape = {static_cast<std::int64_t>(*m), static_cast<std::int64_t>(*n),
                   static_cast<std::int64_t>(*k),
                   static_cast<std::int64_t>(positive("batch_count").value_or(1.0))};
        if (const auto a = column("a_type")) {
            g.dtype = blas_dtype_of(f[*a]);
        }
        g.seconds = *us * kSecondsPerMicrosecond;
        g.origin.source_id = id;
        g.origin.record = "line " + std::to_string(at);
        g.origin.source = id + ": line " + std::to_string(at) + ", " + f[*column("m")] + "x" +
                          f[*column("n")] + "x" + f[*column("k")] + " in " + f[*column("us")] + " us";
        set.gemms.push_back(std::move(g));
    }
    if (cols.empty()) {
        throw InputError(path + ": no BLAS-bench header line (a comma list naming m, n, k, us and *-Gflops)");
    }
    if (!bad.empty()) {
        std::string w = path + ": " + std::to_string(bad.size()) + " bad row" + (bad.size() == 1 ? "" : "s") +
                        " skipped:";
        for (const std::string& b : bad) {
            w += " " + b + ";";
        }
        w.pop_back();
        set.warnings.push_back(w);
    }
    if (set.gemms.empty()) {
        throw InputError(path + ": no GEMM row parses" +
                         (bad.empty() ? std::string() : " (" + set.warnings.back() + ")"));
    }
    set.files.push_back({path, id, "BLAS benchmark GEMM table " + display_path(path)});
    return set;
}

}  // namespace trainsim::calibrate
