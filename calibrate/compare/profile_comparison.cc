#include "calibrate/compare/profile_comparison.h"

#include <array>
#include <cstdio>
#include <map>

#include "calibrate/measure/measurement.h"
#include "sim/core/units.h"
#include "sim/cost/cost_model.h"
#include "sim/parallel/layout.h"
#include "sim/program/op_pricing.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"

namespace trainsim::calibrate {

namespace {

std::string describe(const workload::Op& op, const parallel::GroupSpan& span) {
    switch (op.kind) {
    case workload::OpKind::Gemm: {
        std::string s = "gemm " + std::to_string(op.gemm.m) + "x" + std::to_string(op.gemm.n) + "x" +
                        std::to_string(op.gemm.k);
        if (op.gemm.batch > 1) {
            s += " x" + std::to_string(op.gemm.batch);
        }
        if (op.gemm_class != cost::GemmClass::Dense) {
            s += std::string(" ") + to_string(op.gemm_class);
        }
        return s;
    }
    case workload::OpKind::MemoryBound:
        return std::string(cost::to_string(op.memory_kind)) + " " + std::to_string(op.bytes_moved.value) +
               " B";
    case workload::OpKind::Collective:
        return std::string(cost::to_string(op.collective)) + " " + std::to_string(op.collective_bytes.value) +
               " B over " + std::to_string(span.size) + " (" + cost::to_string(span.scope()) + ")";
    }
    return "";
}

std::string fixed(double v, int decimals) {
    std::array<char, 32> buffer{};
    std::snprintf(buffer.data(), buffer.size(), "%.*f", decimals, v);
    return buffer.data();
}

std::string ratio(double a, double b) {
    return a > 0.0 ? fixed(b / a, 3) : "-";
}

std::string pad(const std::string& s, std::size_t width, bool right = false) {
    if (s.size() >= width) {
        return s;
    }
    const std::string fill(width - s.size(), ' ');
    return right ? fill + s : s + fill;
}

}  // namespace

ProfileComparison compare_profiles(const config::Scenario& scenario, const cost::HardwareProfile& a,
                                   const cost::HardwareProfile& b) {
    program::check_fits_profile(scenario, a);
    program::check_fits_profile(scenario, b);
    const cost::CostModel model_a(a);
    const cost::CostModel model_b(b);
    const parallel::Layout layout(scenario);
    const program::OpPricing price_a(model_a, layout);
    const program::OpPricing price_b(model_b, layout);
    const parallel::Coordinates at{0, 0, 0};
    const workload::LayerShape shape = workload::layer_shape_of(scenario);
    const auto recompute = scenario.training.recompute_granularity;

    ProfileComparison out;
    out.scenario = scenario.name;
    out.profile_a = a.name;
    out.profile_b = b.name;
    const std::pair<const char*, workload::OpList> phases[] = {
        {"forward", workload::layer_forward(shape, recompute)},
        {"backward", workload::layer_backward(shape, recompute)},
    };
    for (const auto& [phase, ops] : phases) {
        for (const workload::Op& op : ops) {
            const parallel::GroupSpan span = price_a.group_span(op.group, at);
            out.ops.push_back({phase, op.name + (op.is_recompute ? " (recompute)" : ""), describe(op, span),
                               price_a.duration(op, at).value, price_b.duration(op, at).value});
        }
    }
    out.warnings_a = model_a.warnings();
    out.warnings_b = model_b.warnings();
    return out;
}

void write_comparison_text(std::ostream& out, const ProfileComparison& c) {
    out << "scenario " << c.scenario << ": one transformer layer, op by op (A = " << c.profile_a
        << ", B = " << c.profile_b << ")\n";
    std::size_t op_width = 10;
    std::size_t what_width = 10;
    for (const OpComparison& o : c.ops) {
        op_width = std::max(op_width, o.op.size());
        what_width = std::max(what_width, o.what.size());
    }
    out << pad("phase", 9) << "  " << pad("op", op_width) << "  " << pad("what", what_width) << "  "
        << pad("A (us)", 11, true) << "  " << pad("B (us)", 11, true) << "  " << pad("B/A", 7, true) << "\n";
    std::map<std::string, std::pair<double, double>> totals;
    std::vector<std::string> phase_order;
    for (const OpComparison& o : c.ops) {
        out << pad(o.phase, 9) << "  " << pad(o.op, op_width) << "  " << pad(o.what, what_width) << "  "
            << pad(fixed(o.a_s * kMicrosecondsPerSecond, 2), 11, true) << "  "
            << pad(fixed(o.b_s * kMicrosecondsPerSecond, 2), 11, true) << "  "
            << pad(ratio(o.a_s, o.b_s), 7, true) << "\n";
        if (totals.count(o.phase) == 0) {
            phase_order.push_back(o.phase);
        }
        totals[o.phase].first += o.a_s;
        totals[o.phase].second += o.b_s;
    }
    out << "sums of the op times (no overlap; `trainsim layer` simulates the streams):\n";
    for (const std::string& phase : phase_order) {
        const auto [a, b] = totals[phase];
        out << pad(phase, 9) << "  " << pad("total", op_width) << "  " << pad("", what_width) << "  "
            << pad(fixed(a * kMicrosecondsPerSecond, 2), 11, true) << "  "
            << pad(fixed(b * kMicrosecondsPerSecond, 2), 11, true) << "  " << pad(ratio(a, b), 7, true)
            << "\n";
    }
    for (const auto& w : c.warnings_a) {
        out << "warning (A): " << w << "\n";
    }
    for (const auto& w : c.warnings_b) {
        out << "warning (B): " << w << "\n";
    }
}

OrderedJson comparison_json(const ProfileComparison& c) {
    OrderedJson root;
    root["scenario"] = c.scenario;
    root["profile_a"] = c.profile_a;
    root["profile_b"] = c.profile_b;
    OrderedJson ops = OrderedJson::array();
    for (const OpComparison& o : c.ops) {
        OrderedJson j;
        j["phase"] = o.phase;
        j["op"] = o.op;
        j["what"] = o.what;
        j["a_s"] = o.a_s;
        j["b_s"] = o.b_s;
        ops.push_back(j);
    }
    root["ops"] = ops;
    root["warnings_a"] = c.warnings_a;
    root["warnings_b"] = c.warnings_b;
    return root;
}

}  // namespace trainsim::calibrate
