#include "calibrate/fit/inter_node_fit.h"

#include <algorithm>
#include <cmath>

#include "calibrate/fit/curve_fit.h"
#include "sim/core/units.h"

namespace trainsim::calibrate {

namespace {

const std::string kNicPath = "network.inter_node.nic_GBps";
const std::string kBusbwCurvePath = "network.inter_node.busbw_efficiency_vs_bytes";
const std::string kNicsPerNodePath = "network.inter_node.nics_per_node";
constexpr double kMinBusbwEfficiency = 1e-4;

Placement directive_placement(const Directive& d) {
    return d.text("placement", "out_of_place", {"out_of_place", "in_place"}) == "in_place"
               ? Placement::InPlace
               : Placement::OutOfPlace;
}

std::vector<const CollectiveMeasurement*> select_inter_node(const MeasurementSet& m, Placement placement) {
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

// The latency the cost model adds to an inter-node all-reduce (scenarios/hardware/README.md, "Across
// nodes"): NCCL's base, the NVLink hops inside a node and the tree's levels across nodes, both ways.
double all_reduce_latency_us(const FitState& state, const CollectiveMeasurement& c,
                             const std::string& needed_by) {
    const int ranks_per_node = (c.ranks + c.nodes - 1) / c.nodes;
    const double levels = std::ceil(std::log2(static_cast<double>(c.nodes)));
    return state.value("network.inter_node.latency_base_us", needed_by) +
           2.0 * ((ranks_per_node - 1) * state.value("network.intra_node.latency_per_hop_us", needed_by) +
                  levels * state.value("network.inter_node.tree_hop_latency_us", needed_by));
}

// What a record leaves for the bandwidth term once the model's latency is taken out: the cost model prices
// t = α + S·f / busbw, so the busbw to fit is S·f / (t − α). nccl-tests' printed busbw is S·f / t, which
// already contains the latency; fitting it would count the latency twice. nullopt when t ≤ α.
struct LatencyFree {
    double busbw_GBps = 0.0;
    double latency_us = 0.0;
    double time_us = 0.0;
};
std::optional<LatencyFree> latency_free(const FitState& state, const CollectiveMeasurement& c,
                                        const std::string& needed_by) {
    const auto t = c.time_seconds();
    if (!t) {
        return std::nullopt;
    }
    LatencyFree r;
    r.latency_us = all_reduce_latency_us(state, c, needed_by);
    r.time_us = *t / kSecondsPerMicrosecond;
    const double bandwidth_s = *t - r.latency_us * kSecondsPerMicrosecond;
    if (!(bandwidth_s > 0.0)) {
        return std::nullopt;
    }
    r.busbw_GBps = static_cast<double>(c.bytes) * busbw_factor(c.op, c.ranks) / bandwidth_s / kBytesPerGB;
    return r;
}

// A flag for records the model's latency alone prices slower than measured.
std::string latency_flag(const std::vector<const CollectiveMeasurement*>& over, const FitState& state,
                         const std::string& needed_by) {
    const CollectiveMeasurement& c = *over.front();
    return "the model's inter-node all_reduce latency (" +
           short_number(all_reduce_latency_us(state, c, needed_by)) + " us at " + std::to_string(c.ranks) +
           " ranks on " + std::to_string(c.nodes) + " nodes) is above " + std::to_string(over.size()) +
           " measured time" + (over.size() == 1 ? "" : "s") + " (" + std::to_string(c.bytes) +
           " bytes: " + short_number(*c.time_seconds() / kSecondsPerMicrosecond) +
           " us); latencies are not fitted: lower network.inter_node.latency_base_us or tree_hop_latency_us";
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
    for (const auto* c : select_inter_node(state.measurements(), directive_placement(d))) {
        if (const auto free = latency_free(state, *c, kNicPath)) {
            const double per_rail = free->busbw_GBps / rails_of(*c, nics);
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
    r.method = "the best latency-free all_reduce bus bandwidth S*f / (t - latency) per rail (" +
               best_record->origin.record + ", " + std::to_string(best_record->ranks) + " ranks on " +
               std::to_string(best_record->nodes) + " nodes, " +
               std::to_string(rails_of(*best_record, nics)) + " rails), " + rounding.describe();
    r.inputs = {joined_ids(ids)};
    if (const auto line = state.options().nic_line_rate_GBps; line && nic > *line) {
        r.flags.push_back("the fitted NIC rate " + short_number(nic) + " GB/s is above the line rate " +
                          short_number(*line) + " GB/s (--nic-gbits): the run had more rails than " +
                          "network.inter_node.nics_per_node = " + std::to_string(nics) +
                          " says, or traffic that bypassed the NICs (NVLink, SHARP)");
    }
    state.set_value(d, nic, "measured", r.inputs.front() + ": best inter-node all_reduce bandwidth per rail",
                    r);
}

void fit_busbw_curve(FitState& state) {
    const auto node = state.directive_node(kBusbwCurvePath);
    if (!node) {
        return;
    }
    const Directive d(kBusbwCurvePath, *node, state.json());
    const std::string normalize = d.text("normalize", "rails", {"rails", "peak"});
    const auto records = select_inter_node(state.measurements(), directive_placement(d));
    std::vector<Sample> samples;
    std::vector<std::string> ids;
    std::string description;
    std::vector<const CollectiveMeasurement*> latency_bound;
    if (normalize == "rails") {
        const int nics = static_cast<int>(state.value(kNicsPerNodePath, kBusbwCurvePath));
        const double nic = state.value(kNicPath, kBusbwCurvePath);
        for (const auto* c : records) {
            if (!c->time_seconds()) {
                continue;
            }
            // Latency-bound records (t <= the model's latency) need the whole rail rate: efficiency 1.
            const auto free = latency_free(state, *c, kBusbwCurvePath);
            if (!free) {
                latency_bound.push_back(c);
            }
            const double eff = free ? free->busbw_GBps / (rails_of(*c, nics) * nic) : 1.0;
            samples.push_back({c->origin.record, c->origin.record, c->origin.source_id,
                               static_cast<double>(c->bytes), eff, true});
            ids.push_back(c->origin.source_id);
        }
        description = "efficiency = latency-free all_reduce bus bandwidth S*f / (t - the model's latency) / "
                      "(rails x " +
                      short_number(nic) + " GB/s)";
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
    target.y_min = kMinBusbwEfficiency;
    target.y_max = 1.0;
    target.integer_x = true;
    target.fallback_kind = "measured";
    target.fallback_source = joined_ids(ids) + ": inter-node all_reduce bus bandwidth";
    target.extra_options = {"normalize", "placement"};
    FittedCurve fitted = fit_curve(d, target, samples);
    if (!latency_bound.empty()) {
        fitted.report.flags.push_back(latency_flag(latency_bound, state, kBusbwCurvePath));
    }
    state.set(kBusbwCurvePath, std::move(fitted.json), std::move(fitted.report));
}

}  // namespace

void fit_inter_node_targets(FitState& state) {
    fit_nic(state);
    fit_busbw_curve(state);
}

}  // namespace trainsim::calibrate
