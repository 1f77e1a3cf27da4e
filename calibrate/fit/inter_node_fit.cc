#include "calibrate/fit/inter_node_fit.h"

#include <algorithm>

#include "calibrate/fit/curve_fit.h"

namespace trainsim::calibrate {

namespace {

const std::string kNicPath = "network.inter_node.nic_GBps";
const std::string kCurvePath = "network.inter_node.busbw_efficiency_vs_bytes";
const std::string kNicsPerNodePath = "network.inter_node.nics_per_node";
constexpr double kMinEfficiency = 1e-4;

Placement placement_of(const Directive& d) {
    return d.text("placement", "out_of_place", {"out_of_place", "in_place"}) == "in_place"
               ? Placement::InPlace
               : Placement::OutOfPlace;
}

std::vector<const CollectiveMeasurement*> select(const MeasurementSet& m, Placement placement) {
    std::vector<const CollectiveMeasurement*> out;
    for (const CollectiveMeasurement& c : m.collectives) {
        if (c.op == cost::CollectiveKind::AllReduce && c.scope() == cost::Scope::InterNode &&
            c.placement == placement) {
            out.push_back(&c);
        }
    }
    return out;
}

int rails_of(const CollectiveMeasurement& c, int nics_per_node) {
    const int ranks_per_node = (c.ranks + c.nodes - 1) / c.nodes;
    return std::min(ranks_per_node, nics_per_node);
}

void fit_nic(FitState& state) {
    const auto node = state.directive_node(kNicPath);
    if (!node) {
        return;
    }
    const Directive d(kNicPath, *node, state.json());
    d.expect({"placement", "decimals", "significant"});
    const int nics = static_cast<int>(state.value(kNicsPerNodePath, kNicPath));
    TargetReport r;
    r.path = kNicPath;
    double best = 0.0;
    const CollectiveMeasurement* best_record = nullptr;
    std::vector<std::string> ids;
    for (const auto* c : select(state.measurements(), placement_of(d))) {
        if (const auto busbw = c->bus_bandwidth_GBps()) {
            const double per_rail = *busbw / rails_of(*c, nics);
            if (per_rail > best) {
                best = per_rail;
                best_record = c;
            }
            ids.push_back(c->origin.source_id);
        }
    }
    if (best_record == nullptr) {
        d.fail("has no inter-node all_reduce measurements with an absolute bandwidth in the inputs");
    }
    // The NIC's rate bounds every measurement: the best bandwidth per rail, rounded up.
    const Rounding rounding = d.rounding(Rounding::significant(4, Rounding::Direction::Up));
    const double nic = rounding.apply(best);
    r.method = "the best all_reduce bus bandwidth per rail (" + best_record->origin.record + ", " +
               std::to_string(best_record->ranks) + " ranks on " + std::to_string(best_record->nodes) +
               " nodes, " + std::to_string(rails_of(*best_record, nics)) + " rails), " + rounding.describe();
    r.inputs = {joined_ids(ids)};
    state.set_value(d, nic, "measured", r.inputs.front() + ": best inter-node all_reduce bandwidth per rail",
                    r);
}

void fit_curve_target(FitState& state) {
    const auto node = state.directive_node(kCurvePath);
    if (!node) {
        return;
    }
    const Directive d(kCurvePath, *node, state.json());
    const std::string normalize = d.text("normalize", "rails", {"rails", "peak"});
    const auto records = select(state.measurements(), placement_of(d));
    std::vector<Sample> samples;
    std::vector<std::string> ids;
    std::string description;
    if (normalize == "rails") {
        const int nics = static_cast<int>(state.value(kNicsPerNodePath, kCurvePath));
        const double nic = state.value(kNicPath, kCurvePath);
        for (const auto* c : records) {
            if (const auto busbw = c->bus_bandwidth_GBps()) {
                samples.push_back({c->origin.record, c->origin.record, c->origin.source_id,
                                   static_cast<double>(c->bytes), *busbw / (rails_of(*c, nics) * nic), true});
                ids.push_back(c->origin.source_id);
            }
        }
        description = "efficiency = all_reduce bus bandwidth / (rails x " + short_number(nic) + " GB/s)";
    } else {
        double peak = 0.0;
        for (const auto* c : records) {
            peak = std::max(peak,
                            c->busbw_fraction ? *c->busbw_fraction : c->bus_bandwidth_GBps().value_or(0.0));
        }
        for (const auto* c : records) {
            const double v = c->busbw_fraction ? *c->busbw_fraction : c->bus_bandwidth_GBps().value_or(0.0);
            if (v > 0.0) {
                samples.push_back({c->origin.record, c->origin.record, c->origin.source_id,
                                   static_cast<double>(c->bytes), v / peak, true});
                ids.push_back(c->origin.source_id);
            }
        }
        description = "efficiency = all_reduce bus bandwidth / the largest measured (" + short_number(peak) +
                      "): the shape of the curve only";
    }
    if (samples.empty()) {
        d.fail("has no inter-node all_reduce measurements in the inputs");
    }
    CurveTarget target;
    target.description = description;
    target.x_unit = "bytes";
    target.default_method = "table";
    target.default_rounding = Rounding::significant(3);
    target.y_min = kMinEfficiency;
    target.y_max = 1.0;
    target.integer_x = true;
    target.fallback_kind = "measured";
    target.fallback_source = joined_ids(ids) + ": inter-node all_reduce bus bandwidth";
    target.extra_options = {"normalize", "placement"};
    FittedCurve fitted = fit_curve(d, target, samples);
    state.set(kCurvePath, std::move(fitted.json), std::move(fitted.report));
}

}  // namespace

void fit_inter_node_targets(FitState& state) {
    fit_nic(state);
    fit_curve_target(state);
}

}  // namespace trainsim::calibrate
