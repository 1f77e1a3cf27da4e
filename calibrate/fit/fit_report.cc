#include "calibrate/fit/fit_report.h"

#include <cmath>

#include "calibrate/fit/rounding.h"

namespace trainsim::calibrate {

namespace {

std::string percent(double fraction) {
    return short_number(100.0 * fraction) + "%";
}

}  // namespace

std::string TargetReport::residual_summary() const {
    double sum = 0.0;
    std::size_t count = 0;
    const Residual* worst = nullptr;
    for (const Residual& r : residuals) {
        if (!r.used) {
            continue;
        }
        const double e = r.relative();
        sum += e * e;
        ++count;
        if (worst == nullptr || std::abs(e) > std::abs(worst->relative())) {
            worst = &r;
        }
    }
    if (count == 0) {
        return "";
    }
    std::string s = "residuals (measured / fitted - 1) of " + std::to_string(count) + " record" +
                    (count == 1 ? "" : "s") + ": rms " + percent(std::sqrt(sum / static_cast<double>(count)));
    if (count > 1) {
        s += ", largest " + percent(worst->relative()) + " (" + worst->record + ")";
    }
    return s;
}

std::optional<double> TargetReport::rms() const {
    double sum = 0.0;
    std::size_t count = 0;
    for (const Residual& r : residuals) {
        if (r.used) {
            sum += r.relative() * r.relative();
            ++count;
        }
    }
    return count == 0 ? std::nullopt : std::optional<double>(std::sqrt(sum / static_cast<double>(count)));
}

bool TargetReport::within(double tolerance) const {
    return flags.empty() && rms().value_or(0.0) <= tolerance;
}

std::string TargetReport::verdict(double tolerance) const {
    std::string v;
    for (const std::string& f : flags) {
        v += (v.empty() ? "FLAGGED: " : "; ") + f;
    }
    if (const auto e = rms(); e && *e > tolerance) {
        v += (v.empty() ? "" : "; ") + std::string("OVER the ") + percent(tolerance) + " rms tolerance";
    }
    if (v.empty()) {
        v = rms() ? "ok (rms within " + percent(tolerance) + ")" : "ok";
    }
    return v;
}

std::string TargetReport::note(const std::string& x_unit) const {
    std::string s = "trainsim-calibrate fit: " + method;
    if (!inputs.empty()) {
        s += "; data:";
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            s += (i == 0 ? " " : ", ") + inputs[i];
        }
    }
    if (!std::isnan(x_min)) {
        s += x_min == x_max ? "; measured at " + short_number(x_min) + " " + x_unit
                            : "; valid from " + short_number(x_min) + " to " + short_number(x_max) + " " +
                                  x_unit + " (the measured range; the cost model clamps outside it)";
    }
    const std::string summary = residual_summary();
    if (!summary.empty()) {
        s += "; " + summary;
    }
    std::string unused;
    for (const Residual& r : residuals) {
        if (!r.used) {
            unused += (unused.empty() ? "" : ", ") + r.record + " " + percent(r.relative());
        }
    }
    if (!unused.empty()) {
        s += "; not fitted, against the result: " + unused;
    }
    for (const std::string& remark : remarks) {
        s += "; " + remark;
    }
    for (const std::string& flag : flags) {
        s += "; FLAGGED: " + flag;
    }
    return s;
}

OrderedJson FitReport::to_json() const {
    OrderedJson root;
    OrderedJson list = OrderedJson::array();
    for (const TargetReport& t : targets) {
        OrderedJson j;
        j["path"] = t.path;
        j["method"] = t.method;
        j["inputs"] = t.inputs;
        if (!std::isnan(t.x_min)) {
            j["x_min"] = t.x_min;
            j["x_max"] = t.x_max;
        }
        OrderedJson residuals = OrderedJson::array();
        for (const Residual& r : t.residuals) {
            OrderedJson e;
            e["record"] = r.record;
            e["x"] = r.x;
            e["measured"] = r.measured;
            e["fitted"] = r.fitted;
            e["relative"] = r.relative();
            e["used"] = r.used;
            residuals.push_back(e);
        }
        j["residuals"] = residuals;
        j["remarks"] = t.remarks;
        j["flags"] = t.flags;
        list.push_back(j);
    }
    root["targets"] = list;
    root["warnings"] = warnings;
    return root;
}

}  // namespace trainsim::calibrate
