#include "calibrate/fit/curve_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "calibrate/fit/least_squares.h"

namespace trainsim::calibrate {

namespace {

constexpr double kDefaultKnotSpacingDecades = 0.5;

// A point of the spec's "points", or of the automatic knots.
struct Point {
    OrderedJson x_json;  // as written in the spec (an integer stays an integer)
    double x = 0.0;
    std::optional<double> y;                   // held
    std::vector<std::string> mean_of;          // knot_mean
    std::vector<std::string> checked_against;  // knot_mean, with a held y
    bool extend = false;
    OrderedJson provenance;  // kind, source, note of the spec point (possibly empty)
    std::string fit_note;    // what the fit did at this point
};

std::string ids_text(const std::vector<std::string>& ids) {
    std::string s;
    for (const auto& id : ids) {
        s += (s.empty() ? "" : ", ") + id;
    }
    return s;
}

class CurveFitter {
public:
    CurveFitter(const Directive& d, const CurveTarget& t, const std::vector<Sample>& samples)
        : d_(d), t_(t), samples_(samples) {
        std::vector<std::string_view> options = {"method", "decimals", "significant", "knot_spacing"};
        options.insert(options.end(), t.extra_options.begin(), t.extra_options.end());
        d_.expect(options, {"points"});
        method_ = d_.text("method", t_.default_method, {"least_squares", "knot_mean", "table"});
        rounding_ = d_.rounding(t_.default_rounding);
        for (const Sample& s : samples_) {
            if (s.used) {
                used_.push_back(&s);
            }
        }
    }

    FittedCurve fit() {
        read_points();
        if (method_ == "table") {
            table();
        } else if (method_ == "least_squares") {
            least_squares();
        } else {
            knot_mean();
        }
        clamp();
        return result();
    }

private:
    std::string point_path(std::size_t i) const { return element_path(member_path(d_.path(), "points"), i); }

    void read_points() {
        if (!d_.node().contains("points")) {
            if (method_ == "knot_mean") {
                d_.fail("needs \"points\" for method knot_mean (each with y, mean_of or extend)");
            }
            return;
        }
        if (method_ == "table") {
            d_.fail("takes no \"points\" with method table (the measured sizes are the points)");
        }
        const StrictJson& json = d_.json();
        const OrderedJson& list = json.array(d_.node(), d_.path(), "points");
        if (list.empty()) {
            d_.fail("has an empty \"points\" list");
        }
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string p = point_path(i);
            const OrderedJson& spec = list[i];
            json.expect_keys(spec, p, {"x"},
                             {"y", "kind", "source", "note", "mean_of", "checked_against", "extend"});
            Point pt;
            pt.x_json = spec.at("x");
            pt.x = json.positive_number(spec, p, "x");
            if (!points_.empty() && !(pt.x > points_.back().x)) {
                json.fail(member_path(p, "x"), "must be greater than the previous point's x");
            }
            if (spec.contains("y")) {
                pt.y = json.number(spec, p, "y");
            }
            if (spec.contains("mean_of")) {
                pt.mean_of = json.text_list(spec, p, "mean_of");
            }
            if (spec.contains("checked_against")) {
                pt.checked_against = json.text_list(spec, p, "checked_against");
            }
            if (spec.contains("extend")) {
                if (json.text(spec, p, "extend") != "flat") {
                    json.fail(member_path(p, "extend"), "must be \"flat\" (the previous point's value)");
                }
                pt.extend = true;
            }
            const int roles = (pt.y ? 1 : 0) + (pt.mean_of.empty() ? 0 : 1) + (pt.extend ? 1 : 0);
            if (roles > 1) {
                json.fail(p, "must have only one of y, mean_of and extend");
            }
            if (!pt.checked_against.empty() && !pt.y) {
                json.fail(member_path(p, "checked_against"), "needs a held y to check");
            }
            if (method_ == "knot_mean" && roles == 0) {
                json.fail(p, "needs y, mean_of or extend with method knot_mean");
            }
            if (method_ == "least_squares" && !pt.mean_of.empty()) {
                json.fail(member_path(p, "mean_of"), "belongs to method knot_mean");
            }
            if (pt.extend && points_.empty()) {
                json.fail(member_path(p, "extend"), "cannot be the first point (it copies the previous one)");
            }
            if (!pt.extend && !points_.empty() && points_.back().extend) {
                json.fail(p, "follows an extended point; extended points come last");
            }
            if (spec.contains("kind") != spec.contains("source")) {
                json.fail(member_path(p, spec.contains("kind") ? "source" : "kind"),
                          "is required beside the other");
            }
            for (const char* key : {"kind", "source", "note"}) {
                if (spec.contains(key)) {
                    pt.provenance[key] = json.text(spec, p, key);
                }
            }
            points_.push_back(std::move(pt));
        }
    }

    void table() {
        std::map<double, std::vector<double>> by_x;
        for (const Sample* s : used_) {
            by_x[s->x].push_back(s->y);
        }
        if (by_x.empty()) {
            d_.fail("has no measurements to tabulate");
        }
        for (const auto& [x, ys] : by_x) {
            Point pt;
            pt.x = x;
            pt.x_json = x_json(x);
            double sum = 0.0;
            for (const double y : ys) {
                sum += y;
            }
            pt.y = rounding_.apply(sum / static_cast<double>(ys.size()));
            points_.push_back(std::move(pt));
        }
        method_text_ = "a table of the mean value at each measured size";
    }

    void least_squares() {
        if (used_.empty()) {
            d_.fail("has no measurements to fit");
        }
        bool automatic = false;
        if (points_.empty()) {
            const double spacing =
                d_.has("knot_spacing")
                    ? d_.json().positive_number(d_.options(), member_path(d_.path(), "fit"), "knot_spacing")
                    : kDefaultKnotSpacingDecades;
            std::vector<double> xs;
            for (const Sample* s : used_) {
                xs.push_back(s->x);
            }
            for (const double x : auto_knots(xs, spacing)) {
                Point pt;
                pt.x = x;
                pt.x_json = x_json(x);
                points_.push_back(std::move(pt));
            }
            automatic = true;
        }
        std::vector<double> knots;
        std::vector<std::optional<double>> fixed;
        for (const Point& p : points_) {
            if (!p.extend) {
                knots.push_back(p.x);
                fixed.push_back(p.y);
            }
        }
        std::vector<double> x;
        std::vector<double> y;
        std::vector<double> w;  // 1/y²: relative residuals, since a time off by 10% matters alike at any size
        for (const Sample* s : used_) {
            if (s->y > 0.0) {
                x.push_back(s->x);
                y.push_back(s->y);
                w.push_back(1.0 / (s->y * s->y));
            }
        }
        std::vector<double> values;
        try {
            values = fit_piecewise_log(knots, fixed, x, y, w);
        } catch (const std::invalid_argument& e) {
            d_.fail(std::string("cannot be fitted: ") + e.what() +
                    "; measure near it or hold the point with a y");
        }
        std::size_t k = 0;
        for (Point& p : points_) {
            if (!p.extend) {
                if (!p.y) {
                    p.y = rounding_.apply(values[k]);
                }
                ++k;
            }
        }
        extend_points();
        method_text_ = "least squares (relative residuals), piecewise linear in log10(x) through " +
                       std::to_string(knots.size()) +
                       (automatic ? " knots chosen among the measured sizes" : " knots of the spec");
    }

    void knot_mean() {
        for (std::size_t i = 0; i < points_.size(); ++i) {
            Point& p = points_[i];
            if (!p.mean_of.empty()) {
                const double mean = mean_of(p.mean_of, i, "mean_of");
                p.y = rounding_.apply(mean);
                p.fit_note = "fit: " +
                             (p.mean_of.size() == 1
                                  ? values_text(p.mean_of) + " gives " + short_number(mean)
                                  : "mean of " + values_text(p.mean_of) + " = " + short_number(mean)) +
                             (rounding_.mode == Rounding::Mode::None ? "" : ", " + rounding_.describe());
            } else if (!p.checked_against.empty()) {
                const double mean = mean_of(p.checked_against, i, "checked_against");
                p.fit_note =
                    "fit: held at " + short_number(*p.y) + " by the spec; " +
                    (p.checked_against.size() == 1 ? values_text(p.checked_against) + " gives "
                                                   : "mean of " + values_text(p.checked_against) + " = ") +
                    short_number(mean);
                remarks_.push_back("the point at " + short_number(p.x) + " is held at " + short_number(*p.y) +
                                   " by the spec (its data: " + short_number(mean) + ")");
            }
        }
        extend_points();
        method_text_ = "knot means (each point the mean of the records its note names)";
    }

    void extend_points() {
        for (std::size_t i = 0; i < points_.size(); ++i) {
            if (points_[i].extend) {
                points_[i].y = points_[i - 1].y;
            }
        }
    }

    double mean_of(const std::vector<std::string>& ids, std::size_t i, const char* key) const {
        double sum = 0.0;
        for (const std::string& id : ids) {
            const auto it =
                std::find_if(samples_.begin(), samples_.end(), [&](const Sample& s) { return s.id == id; });
            if (it == samples_.end()) {
                d_.json().fail(member_path(point_path(i), key), "names '" + id +
                                                                    "', which is not a record of this "
                                                                    "curve's kind in the inputs");
            }
            sum += it->y;
        }
        return sum / static_cast<double>(ids.size());
    }

    // "azure-1024" for one record, "azure-4096 (0.7308), eleuther-proj (0.7529)" for several.
    std::string values_text(const std::vector<std::string>& ids) const {
        if (ids.size() == 1) {
            return ids.front();
        }
        std::string s;
        for (const std::string& id : ids) {
            const auto it =
                std::find_if(samples_.begin(), samples_.end(), [&](const Sample& x) { return x.id == id; });
            s += (s.empty() ? "" : ", ") + id + " (" + short_number(it->y) + ")";
        }
        return s;
    }

    void clamp() {
        std::vector<std::string> clamped;
        for (Point& p : points_) {
            const double v = *p.y;
            if (v < t_.y_min || v > t_.y_max) {
                p.y = std::clamp(v, t_.y_min, t_.y_max);
                clamped.push_back(short_number(p.x) + " (" + short_number(v) + ")");
            }
        }
        if (!clamped.empty()) {
            remarks_.push_back("clamped into [" + short_number(t_.y_min) + ", " + short_number(t_.y_max) +
                               "] at " + ids_text(clamped));
        }
    }

    OrderedJson x_json(double x) const {
        if (t_.integer_x && x == std::floor(x) && x < 9.0e18) {
            return OrderedJson(static_cast<std::int64_t>(x));
        }
        return OrderedJson(x);
    }

    FittedCurve result() const {
        FittedCurve out;
        for (const Point& p : points_) {
            out.curve.x.push_back(p.x);
            out.curve.y.push_back(*p.y);
        }
        bool all_have_provenance = true;
        for (const Point& p : points_) {
            all_have_provenance = all_have_provenance && p.provenance.contains("kind");
        }
        const bool curve_provenance = d_.gives_provenance() || !all_have_provenance;
        if (curve_provenance) {
            out.json["kind"] = d_.kind(t_.fallback_kind);
            out.json["source"] = d_.source(t_.fallback_source);
        }
        OrderedJson points = OrderedJson::array();
        for (const Point& p : points_) {
            OrderedJson j;
            j["x"] = p.x_json;
            j["y"] = *p.y;
            for (const char* key : {"kind", "source"}) {
                if (p.provenance.contains(key)) {
                    j[key] = p.provenance.at(key);
                }
            }
            std::string note =
                p.provenance.contains("note") ? p.provenance.at("note").get<std::string>() : "";
            if (!p.fit_note.empty()) {
                note += (note.empty() ? "" : "; ") + p.fit_note;
            }
            if (!note.empty()) {
                j["note"] = note;
            }
            points.push_back(j);
        }
        out.json["points"] = points;

        TargetReport& r = out.report;
        r.path = d_.path();
        r.method = method_text_ + "; " + t_.description +
                   (rounding_.mode == Rounding::Mode::None ? "" : "; values " + rounding_.describe());
        std::set<std::string> inputs;
        for (const Sample& s : samples_) {
            const double fitted = eval_piecewise_log(out.curve.x, out.curve.y, s.x);
            r.residuals.push_back({s.record, s.x, s.y, fitted, s.used});
            if (s.used) {
                inputs.insert(s.source_id);
                r.x_min = std::isnan(r.x_min) ? s.x : std::min(r.x_min, s.x);
                r.x_max = std::isnan(r.x_max) ? s.x : std::max(r.x_max, s.x);
            }
        }
        r.inputs.assign(inputs.begin(), inputs.end());
        r.remarks = remarks_;
        out.json["note"] = r.note(t_.x_unit);
        return out;
    }

    const Directive& d_;
    const CurveTarget& t_;
    const std::vector<Sample>& samples_;
    std::vector<const Sample*> used_;
    std::string method_;
    Rounding rounding_;
    std::vector<Point> points_;
    std::string method_text_;
    std::vector<std::string> remarks_;
};

}  // namespace

FittedCurve fit_curve(const Directive& directive, const CurveTarget& target,
                      const std::vector<Sample>& samples) {
    return CurveFitter(directive, target, samples).fit();
}

}  // namespace trainsim::calibrate
