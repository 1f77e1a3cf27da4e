#include "sim/check/check_output.h"

#include <cstdio>

namespace trainsim::check {

namespace {

std::string format(const char* spec, double v) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, spec, v);
    return buffer;
}

void text_row(std::ostream& out, const std::string& op, const std::string& phase, const Row& r) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-32s %-10s %7lld %13.4f %13.4f %+9.1f %%\n", op.c_str(),
                  phase.c_str(), static_cast<long long>(r.count), r.measured.value * 1e3,
                  r.simulated.value * 1e3, r.error() * 100.0);
    out << line;
}

nlohmann::json row_json(const Row& r) {
    nlohmann::json j;
    if (!r.op.empty()) {
        j["op"] = r.op;
    }
    j["phase"] = r.phase;
    j["count"] = r.count;
    j["measured_s"] = r.measured.value;
    j["simulated_s"] = r.simulated.value;
    j["error"] = r.error();
    return j;
}

void csv_row(std::ostream& out, const char* level, const Row& r) {
    // Op names are the simulator's ("qkv.dgrad", "send activation to stage 1"): no commas or quotes.
    out << level << "," << r.op << "," << r.phase << "," << r.count << "," << format("%.9g", r.measured.value)
        << "," << format("%.9g", r.simulated.value) << "," << format("%.6g", r.error()) << "\n";
}

}  // namespace

void write_text(std::ostream& out, const CheckHeader& header, const Comparison& c) {
    out << "trainsim check: " << header.scenario << " against";
    for (const std::string& m : header.measured) {
        out << " " << m;
    }
    out << "\n  ops paired by " << c.method << "; error = simulated / measured - 1; times summed over every "
        << "occurrence\n";
    out << "  op                               phase        count   measured ms  simulated ms     error\n";
    for (const Row& r : c.ops) {
        text_row(out, r.op, r.phase, r);
    }
    out << "  per phase\n";
    for (const Row& r : c.phases) {
        text_row(out, "(all ops)", r.phase, r);
    }
    text_row(out, "iteration", "", c.iteration);
    out << "  unmatched: " << c.unmatched_measured << " measured ops ("
        << format("%.4f", c.unmatched_measured_time.value * 1e3) << " ms), " << c.unmatched_simulated
        << " simulated ops (" << format("%.4f", c.unmatched_simulated_time.value * 1e3) << " ms)\n";
    for (const std::string& n : c.notes) {
        out << "  note: " << n << "\n";
    }
}

nlohmann::json to_json(const CheckHeader& header, const Comparison& c) {
    nlohmann::json j;
    j["scenario"] = header.scenario;
    j["measured"] = header.measured;
    j["method"] = c.method;
    j["ops"] = nlohmann::json::array();
    for (const Row& r : c.ops) {
        j["ops"].push_back(row_json(r));
    }
    j["phases"] = nlohmann::json::array();
    for (const Row& r : c.phases) {
        j["phases"].push_back(row_json(r));
    }
    j["iteration"] = row_json(c.iteration);
    j["unmatched"] = {{"measured_ops", c.unmatched_measured},
                      {"measured_s", c.unmatched_measured_time.value},
                      {"simulated_ops", c.unmatched_simulated},
                      {"simulated_s", c.unmatched_simulated_time.value}};
    j["notes"] = c.notes;
    return j;
}

void write_csv(std::ostream& out, const Comparison& c) {
    out << "level,op,phase,count,measured_s,simulated_s,error\n";
    for (const Row& r : c.ops) {
        csv_row(out, "op", r);
    }
    for (const Row& r : c.phases) {
        csv_row(out, "phase", r);
    }
    csv_row(out, "iteration", c.iteration);
}

}  // namespace trainsim::check
