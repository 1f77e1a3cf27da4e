#include "sim/validate/validation_output.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

namespace trainsim::validate {

namespace {

std::string number(double v, int precision = 3) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    return buf;
}

// An absolute amount in the case's unit: percentages in percentage points.
std::string amount(double v, const Unit& unit, bool sign) {
    char buf[64];
    std::snprintf(buf, sizeof buf, sign ? "%+.3g" : "%.3g", v);
    return std::string(buf) + " " + (unit.name == "%" ? "pp" : unit.name);
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n") == std::string::npos) {
        return text;
    }
    std::string out = "\"";
    for (const char c : text) {
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    }
    return out + "\"";
}

std::string overrides_text(const ValidationCase& c) {
    std::string out;
    for (const config::Override& o : c.overrides) {
        out += (out.empty() ? "" : " ") + o.key + "=" + o.value;
    }
    return out;
}

}  // namespace

std::string format_error(const CaseResult& r) {
    if (r.spec.tolerance.relative) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%+.1f %%", 100.0 * r.relative_error);
        return buf;
    }
    return amount(r.error, r.spec.unit, true);
}

std::string format_tolerance(const ValidationCase& c) {
    const std::string tol = c.tolerance.relative ? number(100.0 * c.tolerance.amount) + " %"
                                                 : amount(c.tolerance.amount, c.unit, false);
    switch (c.comparison) {
    case Comparison::Equal:
        return "±" + tol;
    case Comparison::AtMost:
        return "≤ " + number(c.value, 4) + " " + c.unit.name + " + " + tol;
    case Comparison::AtLeast:
        return "≥ " + number(c.value, 4) + " " + c.unit.name + " − " + tol;
    }
    return tol;
}

void write_text(std::ostream& out, const ValidationReport& report) {
    struct Row {
        std::string id, simulated, published, unit, error, tolerance, result;
    };
    std::vector<Row> rows = {{"case", "simulated", "published", "unit", "error", "tolerance", "result"}};
    for (const CaseResult& r : report.results) {
        rows.push_back({r.spec.id, number(r.simulated, 4), number(r.spec.value, 4), r.spec.unit.name,
                        format_error(r), format_tolerance(r.spec), r.pass ? "ok" : "FAIL"});
    }
    // Widths in code points, so that ± and ≤ line up.
    auto width = [](const std::string& s) {
        return static_cast<std::size_t>(
            std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
    };
    std::size_t w[7] = {};
    for (const Row& row : rows) {
        const std::string* cells[7] = {&row.id,    &row.simulated, &row.published, &row.unit,
                                       &row.error, &row.tolerance, &row.result};
        for (int i = 0; i < 7; ++i) {
            w[i] = std::max(w[i], width(*cells[i]));
        }
    }
    out << "validation against published measurements: " << report.path << "\n";
    for (const Row& row : rows) {
        const std::string* cells[7] = {&row.id,    &row.simulated, &row.published, &row.unit,
                                       &row.error, &row.tolerance, &row.result};
        std::string line;
        for (int i = 0; i < 7; ++i) {
            const std::string pad(w[i] - width(*cells[i]), ' ');
            const bool right = i == 1 || i == 2 || i == 4;
            line += (i ? "  " : "") + (right ? pad + *cells[i] : *cells[i] + (i == 6 ? "" : pad));
        }
        out << line << "\n";
    }
    std::set<std::string> warnings;
    for (const CaseResult& r : report.results) {
        warnings.insert(r.warnings.begin(), r.warnings.end());
    }
    for (const std::string& w_text : warnings) {
        out << "warning: " << w_text << "\n";
    }
    const std::size_t failed = report.failures();
    out << report.results.size() << " cases: " << report.results.size() - failed << " within tolerance, "
        << failed << " outside\n";
}

void write_csv(std::ostream& out, const ValidationReport& report) {
    out << "id,metric,scenario,set,profile,unit,published,simulated,error,relative_error,tolerance_kind,"
           "tolerance,"
           "comparison,pass,source\n";
    for (const CaseResult& r : report.results) {
        const ValidationCase& c = r.spec;
        out << csv_field(c.id) << ',' << info(c.metric).name << ',' << csv_field(c.scenario_path) << ','
            << csv_field(overrides_text(c)) << ',' << csv_field(r.profile) << ',' << csv_field(c.unit.name)
            << ',' << number(c.value, 10) << ',' << number(r.simulated, 10) << ',' << number(r.error, 10)
            << ',' << number(r.relative_error, 10) << ',' << (c.tolerance.relative ? "relative" : "absolute")
            << ',' << number(c.tolerance.amount, 10) << ',' << to_string(c.comparison) << ','
            << (r.pass ? "true" : "false") << ',' << csv_field(c.source) << "\n";
    }
}

nlohmann::ordered_json to_json(const ValidationReport& report) {
    nlohmann::ordered_json cases = nlohmann::ordered_json::array();
    std::set<std::string> all_warnings;
    for (const CaseResult& r : report.results) {
        const ValidationCase& c = r.spec;
        nlohmann::ordered_json set = nlohmann::ordered_json::object();
        for (const config::Override& o : c.overrides) {
            set[o.key] = o.value;
        }
        all_warnings.insert(r.warnings.begin(), r.warnings.end());
        cases.push_back(
            {{"id", c.id},
             {"metric", info(c.metric).name},
             {"scenario", c.scenario_path},
             {"set", set},
             {"profile", r.profile},
             {"unit", c.unit.name},
             {"published", c.value},
             {"simulated", r.simulated},
             {"error", r.error},
             {"relative_error", r.relative_error},
             {"tolerance", {{c.tolerance.relative ? "relative" : "absolute", c.tolerance.amount}}},
             {"comparison", to_string(c.comparison)},
             {"allowed", r.allowed},
             {"error_text", format_error(r)},
             {"tolerance_text", format_tolerance(c)},
             {"pass", r.pass},
             {"source", c.source},
             {"notes", c.notes}});
    }
    return {{"file", report.path},
            {"description", report.description},
            {"cases", cases},
            {"passed", report.results.size() - report.failures()},
            {"failed", report.failures()},
            {"warnings", std::vector<std::string>(all_warnings.begin(), all_warnings.end())}};
}

}  // namespace trainsim::validate
