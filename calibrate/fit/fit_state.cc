#include "calibrate/fit/fit_state.h"

#include <algorithm>

#include "sim/core/input_error.h"

namespace trainsim::calibrate {

namespace {

OrderedJson::json_pointer pointer(const std::string& dotted) {
    std::string p;
    std::size_t start = 0;
    while (start <= dotted.size()) {
        const std::size_t dot = dotted.find('.', start);
        p += "/" + dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        start = dot == std::string::npos ? dotted.size() + 1 : dot + 1;
    }
    return OrderedJson::json_pointer(p);
}

}  // namespace

std::string joined_ids(const std::vector<std::string>& ids) {
    std::vector<std::string> seen;
    std::string s;
    for (const auto& id : ids) {
        if (std::find(seen.begin(), seen.end(), id) == seen.end()) {
            seen.push_back(id);
            s += (s.empty() ? "" : ", ") + id;
        }
    }
    return s;
}

FitState::FitState(OrderedJson doc, const MeasurementSet& measurements, const StrictJson& json,
                   FitOptions options)
    : doc_(std::move(doc)), measurements_(measurements), json_(json), options_(options) {}

const OrderedJson* FitState::find(const std::string& path) const {
    const auto p = pointer(path);
    return doc_.contains(p) ? &doc_.at(p) : nullptr;
}

std::optional<OrderedJson> FitState::directive_node(const std::string& path) const {
    const OrderedJson* node = find(path);
    if (node == nullptr || !is_directive(*node)) {
        return std::nullopt;
    }
    return *node;
}

double FitState::value(const std::string& path, const std::string& needed_by) const {
    const OrderedJson* node = find(path);
    if (node == nullptr || !node->is_object() || !node->contains("value") || !node->at("value").is_number()) {
        throw InputError(json_.label() + ": " + needed_by + " needs " + path +
                         (node != nullptr && is_directive(*node) ? ", which was not fitted (no data for it)"
                                                                 : ", which the profile does not give"));
    }
    return node->at("value").get<double>();
}

cost::Curve FitState::curve(const std::string& path, const std::string& needed_by) const {
    const OrderedJson* node = find(path);
    if (node == nullptr || !node->is_object() || is_directive(*node) || !node->contains("points") ||
        !node->at("points").is_array() || node->at("points").empty()) {
        throw InputError(json_.label() + ": " + needed_by + " needs the curve " + path +
                         ", which is missing or was not fitted");
    }
    cost::Curve c;
    for (const auto& p : node->at("points")) {
        if (!p.is_object() || !p.contains("x") || !p.contains("y") || !p.at("x").is_number() ||
            !p.at("y").is_number()) {
            throw InputError(json_.label() + ": " + path + ".points must be {x, y} numbers");
        }
        c.x.push_back(p.at("x").get<double>());
        c.y.push_back(p.at("y").get<double>());
    }
    return c;
}

void FitState::set(const std::string& path, OrderedJson node, const TargetReport& report) {
    doc_[pointer(path)] = std::move(node);
    report_.targets.push_back(report);
}

void FitState::set_value(const Directive& directive, OrderedJson value, const std::string& fallback_kind,
                         const std::string& fallback_source, const TargetReport& report,
                         const std::string& x_unit) {
    std::string note = directive.node().value("note", std::string());
    const std::string fit_note = report.note(x_unit);
    note += (note.empty() ? "" : "; ") + fit_note;
    set(directive.path(),
        value_object(std::move(value), directive.kind(fallback_kind), directive.source(fallback_source),
                     note),
        report);
}

OrderedJson FitState::value_object(OrderedJson value, const std::string& kind, const std::string& source,
                                   const std::string& note) {
    OrderedJson v;
    v["value"] = std::move(value);
    v["kind"] = kind;
    v["source"] = source;
    v["note"] = note;
    return v;
}

}  // namespace trainsim::calibrate
