#include "calibrate/fit/intra_node_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "calibrate/fit/curve_fit.h"
#include "calibrate/fit/least_squares.h"
#include "sim/core/input_error.h"
#include "sim/core/units.h"

namespace trainsim::calibrate {

namespace {

const std::string kSection = "network.intra_node.";
const std::string kTablePath = kSection + "busbw_GBps_vs_bytes";
const std::string kGroupPath = kSection + "measured_group_size";
const std::string kBasePath = kSection + "latency_base_us";
const std::string kHopPath = kSection + "latency_per_hop_us";
const std::string kP2pPath = kSection + "p2p_GBps";
const std::string kP2pLatencyPath = kSection + "p2p_latency_us";
// Lower bounds of the latency terms: the loader wants them positive, and a fit that runs into them says
// the data cannot tell them apart from zero.
constexpr double kMinBaseUs = 0.01;
constexpr double kMinHopUs = 0.001;

Placement placement_of(const Directive& d) {
    return d.text("placement", "out_of_place", {"out_of_place", "in_place"}) == "in_place"
               ? Placement::InPlace
               : Placement::OutOfPlace;
}

// Intra-node records of `op` with an absolute time at `placement`.
std::vector<const CollectiveMeasurement*> select_intra_node(const MeasurementSet& m, cost::CollectiveKind op,
                                                 Placement placement) {
    std::vector<const CollectiveMeasurement*> out;
    for (const CollectiveMeasurement& c : m.collectives) {
        if (c.op == op && c.scope() == cost::Scope::IntraNode && c.placement == placement &&
            c.time_seconds()) {
            out.push_back(&c);
        }
    }
    return out;
}

int table_ranks(const Directive& d, const std::vector<const CollectiveMeasurement*>& records) {
    if (const auto r = d.integer("ranks")) {
        return *r;
    }
    int ranks = 0;
    for (const auto* c : records) {
        ranks = std::max(ranks, c->ranks);
    }
    return ranks;
}

std::vector<std::string> ids(const std::vector<const CollectiveMeasurement*>& records) {
    std::vector<std::string> out;
    for (const auto* c : records) {
        out.push_back(c->origin.source_id);
    }
    return out;
}

void fit_table(FitState& state) {
    const auto node = state.directive_node(kTablePath);
    if (!node) {
        return;
    }
    const Directive d(kTablePath, *node, state.json());
    const Placement placement = placement_of(d);
    const auto records = select_intra_node(state.measurements(), cost::CollectiveKind::AllReduce, placement);
    const int ranks = table_ranks(d, records);
    // "busbw": the printed busbw column where a record kept it (3 or more digits), as the shipped A100 table
    // was built; "time" (the default): S·f / t from the time column, which has more digits and is never the
    // 0.00 that nccl-tests prints for small sizes.
    const bool printed = d.text("column", "time", {"time", "busbw"}) == "busbw";
    std::vector<Sample> samples;
    for (const auto* c : records) {
        if (c->ranks == ranks) {
            const double busbw = (printed && c->busbw_GBps) || !c->seconds
                                     ? *c->bus_bandwidth_GBps()
                                     : static_cast<double>(c->bytes) * busbw_factor(c->op, c->ranks) /
                                           (*c->seconds * kBytesPerGB);
            samples.push_back({c->origin.record, c->origin.record, c->origin.source_id,
                               static_cast<double>(c->bytes), busbw, true});
        }
    }
    if (samples.empty()) {
        d.fail(std::string("has no intra-node all_reduce measurements (") + to_string(placement) +
               (ranks > 0 ? ", " + std::to_string(ranks) + " ranks" : "") + ") in the inputs");
    }
    CurveTarget target;
    target.description =
        (printed ? "nccl-tests bus bandwidth (GB/s) of all_reduce over "
                 : "bus bandwidth S*f / t (GB/s) from nccl-tests' time column, all_reduce over ") +
        std::to_string(ranks) + " ranks, " + to_string(placement);
    target.x_unit = "bytes";
    target.default_method = "table";
    target.default_rounding = Rounding::significant(4);
    target.y_min = std::numeric_limits<double>::min();
    target.y_max = std::numeric_limits<double>::max();
    target.integer_x = true;
    target.fallback_kind = "measured";
    target.fallback_source =
        joined_ids(ids(records)) + ": all_reduce bus bandwidth over " + std::to_string(ranks) + " ranks";
    target.extra_options = {"placement", "ranks", "column"};
    FittedCurve fitted = fit_curve(d, target, samples);
    state.set(kTablePath, std::move(fitted.json), std::move(fitted.report));
}

void fit_group_size(FitState& state) {
    const auto node = state.directive_node(kGroupPath);
    if (!node) {
        return;
    }
    const Directive d(kGroupPath, *node, state.json());
    d.expect({"placement", "ranks"});
    const auto records = select_intra_node(state.measurements(), cost::CollectiveKind::AllReduce, placement_of(d));
    const int ranks = table_ranks(d, records);
    if (records.empty() || ranks < 2) {
        d.fail("has no intra-node all_reduce measurements in the inputs");
    }
    TargetReport r;
    r.path = kGroupPath;
    r.method = "the group size of the all_reduce table (network.intra_node.busbw_GBps_vs_bytes)";
    r.inputs = {joined_ids(ids(records))};
    state.set_value(d, ranks, "measured", r.inputs.front() + ": ranks of the all_reduce measurements", r);
}

// One measured collective as a row of the latency problem.
struct LatencyRow {
    const CollectiveMeasurement* record;
    double t_us;   // measured
    double t0_us;  // the table's all-reduce time at the same size
    double r;      // f(k, n) / f0
    double steps;  // ring steps of k at n
};

void fit_latency(FitState& state) {
    const auto base_node = state.directive_node(kBasePath);
    const auto hop_node = state.directive_node(kHopPath);
    if (!base_node && !hop_node) {
        return;
    }
    const std::optional<Directive> base_d =
        base_node ? std::optional<Directive>(std::in_place, kBasePath, *base_node, state.json())
                  : std::nullopt;
    const std::optional<Directive> hop_d =
        hop_node ? std::optional<Directive>(std::in_place, kHopPath, *hop_node, state.json()) : std::nullopt;
    for (const auto* d : {base_d ? &*base_d : nullptr, hop_d ? &*hop_d : nullptr}) {
        if (d != nullptr) {
            d->expect({"placement", "decimals", "significant"});
        }
    }
    const Directive& lead = base_d ? *base_d : *hop_d;
    const Placement placement = placement_of(lead);
    const int n0 = static_cast<int>(state.value(kGroupPath, lead.path()));
    const cost::Curve table = state.curve(kTablePath, lead.path());
    const double f0 = busbw_factor(cost::CollectiveKind::AllReduce, n0);
    const double h = 2.0 * (n0 - 1);
    const auto table_us = [&](double bytes) {
        return bytes * f0 / (cost::read_curve(table, bytes).y * kBytesPerGB) * kMicrosecondsPerSecond;
    };
    double cap = std::numeric_limits<double>::infinity();  // α0 must stay below every time of the table
    for (const double x : table.x) {
        cap = std::min(cap, table_us(x));
    }
    cap *= 1.0 - 1e-6;

    std::vector<LatencyRow> rows;
    for (const auto op : {cost::CollectiveKind::AllReduce, cost::CollectiveKind::AllGather,
                          cost::CollectiveKind::ReduceScatter}) {
        for (const auto* c : select_intra_node(state.measurements(), op, placement)) {
            const auto bytes = static_cast<double>(c->bytes);
            if ((op == cost::CollectiveKind::AllReduce && c->ranks == n0) || bytes < table.x.front() ||
                bytes > table.x.back()) {
                continue;  // the table itself, or outside it
            }
            const double steps =
                op == cost::CollectiveKind::AllReduce ? 2.0 * (c->ranks - 1) : c->ranks - 1.0;
            rows.push_back({c, *c->time_seconds() * kMicrosecondsPerSecond, table_us(bytes),
                            busbw_factor(op, c->ranks) / f0, steps});
        }
    }
    if (rows.empty()) {
        lead.fail(
            "has no measurements to fit it: it needs intra-node all_gather or reduce_scatter, or all_reduce "
            "at another group size than the table's " +
            std::to_string(n0) + ", within the table's sizes");
    }
    // Relative least squares: each row divided by its measured time, so small messages, where latency
    // matters, weigh as much as large ones.
    std::vector<double> a_base;
    std::vector<double> a_hop;
    std::vector<double> rhs;
    double hop_norm = 0.0;
    double base_norm = 0.0;
    for (const LatencyRow& row : rows) {
        a_base.push_back((1.0 - row.r) / row.t_us);
        a_hop.push_back((row.steps - row.r * h) / row.t_us);
        rhs.push_back((row.t_us - row.r * row.t0_us) / row.t_us);
        hop_norm += a_hop.back() * a_hop.back();
        base_norm += a_base.back() * a_base.back();
    }
    const bool hop_informative = hop_norm > 1e-12 * std::max(base_norm, 1e-300);
    std::optional<double> base_held;
    std::optional<double> hop_held;
    if (!base_d) {
        base_held = state.value(kBasePath, lead.path());
    }
    if (!hop_d) {
        hop_held = state.value(kHopPath, lead.path());
    } else if (!hop_informative) {
        hop_d->fail(
            "cannot be fitted: every measurement has the table's ring steps once the bandwidth part is "
            "scaled (measure all_reduce or all_gather at another group size), or give its value");
    }
    double base = 0.0;
    double hop = 0.0;
    if (!base_held && !hop_held) {
        const auto solution = bounded_two_parameter_fit(
            a_base, a_hop, rhs, {{-1.0, 0.0, -kMinBaseUs}, {0.0, -1.0, -kMinHopUs}, {1.0, h, cap}});
        if (!solution) {
            lead.fail(
                "cannot be fitted: no positive base and hop keep the all_reduce latency below the table's "
                "smallest time (" +
                short_number(cap) + " us)");
        }
        base = solution->first;
        hop = solution->second;
    } else {
        // One parameter free: a 1-D least squares, clamped into its bounds.
        const bool fit_base = !base_held;
        const double held = fit_base ? *hop_held : *base_held;
        std::vector<double> a = fit_base ? a_base : a_hop;
        std::vector<double> b = rhs;
        for (std::size_t i = 0; i < b.size(); ++i) {
            b[i] -= (fit_base ? a_hop[i] : a_base[i]) * held;
        }
        if (std::all_of(a.begin(), a.end(), [](double v) { return v == 0.0; })) {
            lead.fail("cannot be fitted from these measurements");
        }
        const double value = fit_scale(b, a);
        const double low = fit_base ? kMinBaseUs : kMinHopUs;
        const double high = fit_base ? cap - h * held : (cap - held) / h;
        if (high < low) {
            lead.fail("cannot be fitted: with the held " + std::string(fit_base ? "hop" : "base") +
                      " no value keeps the all_reduce latency below the table's smallest time");
        }
        base = fit_base ? std::clamp(value, low, high) : held;
        hop = fit_base ? held : std::clamp(value, low, high);
    }
    const Rounding rounding = lead.rounding(Rounding::significant(3, Rounding::Direction::Down));
    base = base_held ? base : rounding.apply(base);
    hop = hop_held ? hop : rounding.apply(hop);

    TargetReport r;
    r.path = lead.path();
    std::vector<std::string> source_ids;
    for (const LatencyRow& row : rows) {
        const double predicted = base + row.steps * hop + row.r * (row.t0_us - base - h * hop);
        r.residuals.push_back(
            {row.record->origin.record, static_cast<double>(row.record->bytes), row.t_us, predicted, true});
        source_ids.push_back(row.record->origin.source_id);
    }
    r.inputs = {joined_ids(source_ids)};
    r.method = "least squares of latency_base_us" + std::string(hop_held ? "" : " and latency_per_hop_us") +
               std::string(base_held ? " (base held)" : "") + std::string(hop_held ? " (hop held)" : "") +
               " over " + std::to_string(rows.size()) +
               " collectives priced from the all_reduce table (t = base + steps·hop + f/f0·(t0 − base − " +
               std::to_string(static_cast<int>(h)) +
               "·hop)), relative residuals; the all_reduce latency at " + std::to_string(n0) +
               " ranks kept below the table's smallest time; " + rounding.describe();
    const std::string source = r.inputs.front() + ": least-squares fit of intra-node collective times";
    if (base_d) {
        state.set_value(*base_d, base, "derived", source, r, "bytes");
    }
    if (hop_d) {
        r.path = kHopPath;
        state.set_value(*hop_d, hop, "derived", source, r, "bytes");
    }
}

void fit_p2p(FitState& state) {
    if (const auto node = state.directive_node(kP2pPath)) {
        const Directive d(kP2pPath, *node, state.json());
        d.expect({"placement", "decimals", "significant"});
        const auto records = select_intra_node(state.measurements(), cost::CollectiveKind::SendRecv, placement_of(d));
        if (records.empty()) {
            d.fail("has no intra-node send_recv measurements in the inputs");
        }
        const auto best = std::max_element(records.begin(), records.end(), [](const auto* a, const auto* b) {
            return *a->bus_bandwidth_GBps() < *b->bus_bandwidth_GBps();
        });
        const Rounding rounding = d.rounding(Rounding::significant(4));
        const double bw = rounding.apply(*(*best)->bus_bandwidth_GBps());
        TargetReport r;
        r.path = kP2pPath;
        r.method = "the best send/recv bandwidth measured, at " +
                   short_number(static_cast<double>((*best)->bytes)) + " bytes (" + (*best)->origin.record +
                   ")" + (rounding.mode == Rounding::Mode::None ? "" : ", " + rounding.describe());
        for (const auto* c : records) {
            r.residuals.push_back(
                {c->origin.record, static_cast<double>(c->bytes), *c->bus_bandwidth_GBps(), bw, false});
        }
        r.inputs = {joined_ids(ids(records))};
        state.set_value(d, bw, "measured", r.inputs.front() + ": best send/recv bandwidth", r, "bytes");
    }
    if (const auto node = state.directive_node(kP2pLatencyPath)) {
        const Directive d(kP2pLatencyPath, *node, state.json());
        d.expect({"placement", "decimals", "significant"});
        const auto records = select_intra_node(state.measurements(), cost::CollectiveKind::SendRecv, placement_of(d));
        const double bw = state.value(kP2pPath, kP2pLatencyPath);
        // t = α + S / B with B held: α is the weighted mean of t − S/B, weights 1/t² (relative residuals).
        double sum = 0.0;
        double weights = 0.0;
        for (const auto* c : records) {
            const double t = *c->time_seconds() * kMicrosecondsPerSecond;
            const double bandwidth_us =
                static_cast<double>(c->bytes) / (bw * kBytesPerGB) * kMicrosecondsPerSecond;
            sum += (t - bandwidth_us) / (t * t);
            weights += 1.0 / (t * t);
        }
        if (records.size() < 2 || !(sum > 0.0)) {
            d.fail(
                "cannot be fitted: it needs send_recv at two or more sizes, the small ones slower than the "
                "bandwidth alone");
        }
        const Rounding rounding = d.rounding(Rounding::significant(3));
        const double latency = rounding.apply(sum / weights);
        TargetReport r;
        r.path = kP2pLatencyPath;
        r.method = "least squares of t = latency + S / " + short_number(bw) + " GB/s over " +
                   std::to_string(records.size()) + " send/recv sizes, relative residuals; " +
                   rounding.describe();
        for (const auto* c : records) {
            const double t = *c->time_seconds() * kMicrosecondsPerSecond;
            r.residuals.push_back(
                {c->origin.record, static_cast<double>(c->bytes), t,
                 latency + static_cast<double>(c->bytes) / (bw * kBytesPerGB) * kMicrosecondsPerSecond,
                 true});
        }
        r.inputs = {joined_ids(ids(records))};
        state.set_value(d, latency, "derived", r.inputs.front() + ": least-squares fit of send/recv times", r,
                        "bytes");
    }
}

}  // namespace

void fit_intra_node_targets(FitState& state) {
    fit_table(state);
    fit_group_size(state);
    fit_latency(state);
    fit_p2p(state);
}

}  // namespace trainsim::calibrate
