#include "sim/validate/validation_case.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/core/strict_json.h"
#include "sim/core/did_you_mean.h"
#include "sim/core/input_error.h"

namespace trainsim::validate {

namespace {


const std::vector<std::string> kTopKeys = {"description", "cases"};
const std::vector<std::string> kCaseKeys = {"id",   "scenario",  "set",        "metric", "value",
                                            "unit", "tolerance", "comparison", "source", "notes"};
const std::vector<std::string> kToleranceKeys = {"relative", "absolute"};

// Builds one-line errors that say where in the file the problem is.
class Where {
public:
    explicit Where(std::string prefix) : prefix_(std::move(prefix)) {}
    [[noreturn]] void fail(const std::string& key, const std::string& rule) const {
        throw InputError(prefix_ + (key.empty() ? "" : "." + key) + ": " + rule);
    }
    /// `PREFIX.key=VALUE RULE`, the scenario errors' form for a value that breaks a rule.
    [[noreturn]] void fail_value(const std::string& key, const std::string& value,
                                 const std::string& rule) const {
        throw InputError(prefix_ + "." + key + "=" + value + " " + rule);
    }
    [[nodiscard]] const std::string& prefix() const { return prefix_; }

private:
    std::string prefix_;
};

void reject_unknown_keys(const Json& object, const std::vector<std::string>& known, const Where& where) {
    for (const auto& [key, value] : object.items()) {
        bool found = false;
        for (const std::string& k : known) {
            found = found || k == key;
        }
        if (!found) {
            const std::string suggestion = closest_match(key, known);
            where.fail(printable_key(key),
                       "unknown key" +
                           (suggestion.empty() ? std::string{} : " (did you mean '" + suggestion + "'?)"));
        }
    }
}

std::string required_string(const Json& object, const std::string& key, const Where& where) {
    const auto it = object.find(key);
    if (it == object.end()) {
        where.fail(key, "missing (required)");
    }
    if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
        where.fail(key, "expected a non-empty string, got " + describe_json(*it));
    }
    return it->get<std::string>();
}

std::string optional_string(const Json& object, const std::string& key, const Where& where) {
    const auto it = object.find(key);
    if (it == object.end()) {
        return {};
    }
    if (!it->is_string()) {
        where.fail(key, "expected a string, got " + describe_json(*it));
    }
    return it->get<std::string>();
}

double finite_number(const Json& value, const std::string& key, const Where& where) {
    if (!value.is_number()) {
        where.fail(key, "expected a number, got " + describe_json(value));
    }
    const double v = value.get<double>();
    if (!std::isfinite(v)) {
        where.fail(key, "must be finite");
    }
    return v;
}

Tolerance read_tolerance(const Json& object, const Where& where) {
    const auto it = object.find("tolerance");
    if (it == object.end()) {
        where.fail("tolerance",
                   "missing (required): {\"relative\": FRACTION} or {\"absolute\": AMOUNT in the unit}");
    }
    if (!it->is_object()) {
        where.fail("tolerance", "expected {\"relative\": FRACTION} or {\"absolute\": AMOUNT}, got " +
                                    describe_json(*it));
    }
    const Where inner(where.prefix() + ".tolerance");
    reject_unknown_keys(*it, kToleranceKeys, inner);
    if (it->size() != 1) {
        where.fail("tolerance",
                   "must have exactly one of 'relative' (a fraction) or 'absolute' (in the unit)");
    }
    Tolerance t;
    t.relative = it->contains("relative");
    const std::string key = t.relative ? "relative" : "absolute";
    t.amount = finite_number(it->at(key), key, inner);
    if (t.amount < 0.0) {
        inner.fail(key, "must be ≥ 0");
    }
    if (t.relative && t.amount >= 1.0) {
        inner.fail_value(key, describe_json(it->at(key)),
                         "must be a fraction below 1 (0.10 is 10 %)");
    }
    return t;
}

Comparison read_comparison(const Json& object, const Where& where) {
    const std::string text = optional_string(object, "comparison", where);
    if (text.empty() && !object.contains("comparison")) {
        return Comparison::Equal;
    }
    for (const Comparison c : {Comparison::Equal, Comparison::AtMost, Comparison::AtLeast}) {
        if (text == to_string(c)) {
            return c;
        }
    }
    where.fail_value("comparison", "\"" + text + "\"", "must be one of equal, at_most, at_least");
}

std::vector<config::Override> read_overrides(const Json& object, const Where& where) {
    std::vector<config::Override> overrides;
    const auto it = object.find("set");
    if (it == object.end()) {
        return overrides;
    }
    if (!it->is_object()) {
        where.fail(
            "set",
            "expected an object of scenario keys, e.g. {\"parallelism.sequence_parallel\": true}, got " +
                describe_json(*it));
    }
    for (const auto& [key, value] : it->items()) {
        if (key.empty()) {
            where.fail("set", "a key must not be empty");
        }
        // The value goes through --set's parsing: JSON text is read as JSON, so "full" and full agree.
        overrides.push_back(
            config::Override{key, value.is_string() ? value.get<std::string>() : value.dump()});
    }
    return overrides;
}

ValidationCase read_case(const Json& object, std::size_t index, const std::string& source,
                         const std::string& base_dir) {
    const std::string at = source + ": cases[" + std::to_string(index) + "]";
    if (!object.is_object()) {
        throw InputError(at + ": expected an object, got " + describe_json(object));
    }
    ValidationCase c;
    c.id = required_string(object, "id", Where(at));
    const Where where(at + " (" + c.id + ")");
    reject_unknown_keys(object, kCaseKeys, where);
    const std::string scenario = required_string(object, "scenario", where);
    const std::filesystem::path path(scenario);
    c.scenario_path =
        path.is_absolute() ? scenario : (std::filesystem::path(base_dir) / path).lexically_normal().string();
    c.overrides = read_overrides(object, where);
    const std::string metric = required_string(object, "metric", where);
    const auto m = metric_from_name(metric);
    if (!m) {
        std::vector<std::string> names;
        for (const MetricInfo& i : all_metrics()) {
            names.push_back(i.name);
        }
        const std::string suggestion = closest_match(metric, names);
        where.fail_value("metric", "\"" + metric + "\"",
                         "is not a metric" +
                             (suggestion.empty() ? std::string{} : " (did you mean '" + suggestion + "'?)"));
    }
    c.metric = *m;
    if (!object.contains("value")) {
        where.fail("value", "missing (required): the published number");
    }
    c.value = finite_number(object.at("value"), "value", where);
    const std::string unit = required_string(object, "unit", where);
    const Dimension dimension = info(c.metric).dimension;
    const auto u = unit_for(dimension, unit);
    if (!u) {
        where.fail_value("unit", "\"" + unit + "\"",
                         std::string("is not a unit of ") + to_string(dimension) + " (metric " + metric +
                             "): " + unit_names(dimension));
    }
    c.unit = *u;
    c.tolerance = read_tolerance(object, where);
    c.comparison = read_comparison(object, where);
    c.source = required_string(object, "source", where);
    c.notes = optional_string(object, "notes", where);
    return c;
}

}  // namespace

double Tolerance::allowed(double published) const {
    return relative ? amount * std::abs(published) : amount;
}

const char* to_string(Comparison comparison) {
    switch (comparison) {
    case Comparison::Equal:
        return "equal";
    case Comparison::AtMost:
        return "at_most";
    case Comparison::AtLeast:
        return "at_least";
    }
    return "?";
}

ValidationFile parse_validation_file(const std::string& text, const std::string& source,
                                     const std::string& base_dir) {
    const Json document = parse_strict_json(text, source);
    if (!document.is_object()) {
        throw InputError(source + ": the top level must be an object with \"cases\"");
    }
    reject_unknown_keys(document, kTopKeys, Where(source));
    ValidationFile file;
    file.path = source;
    file.description = optional_string(document, "description", Where(source));
    const auto cases = document.find("cases");
    if (cases == document.end()) {
        throw InputError(source + ": cases: missing (required): a list of cases");
    }
    if (!cases->is_array() || cases->empty()) {
        throw InputError(source + ": cases: expected a non-empty list of cases, got " +
                         describe_json(*cases));
    }
    std::set<std::string> ids;
    for (std::size_t i = 0; i < cases->size(); ++i) {
        ValidationCase c = read_case((*cases)[i], i, source, base_dir);
        if (!ids.insert(c.id).second) {
            throw InputError(source + ": cases[" + std::to_string(i) + "].id=\"" + c.id +
                             "\" repeats an earlier case's id (ids must be unique)");
        }
        file.cases.push_back(std::move(c));
    }
    return file;
}

ValidationFile read_validation_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw InputError(path + ": cannot open the validation file");
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) {
        throw InputError(path + ": cannot read the validation file");
    }
    const std::string base = std::filesystem::path(path).parent_path().string();
    return parse_validation_file(text.str(), path, base.empty() ? "." : base);
}

}  // namespace trainsim::validate
