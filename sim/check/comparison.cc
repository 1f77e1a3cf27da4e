#include "sim/check/comparison.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

namespace trainsim::check {

namespace {

using Key =
    std::tuple<std::int64_t, std::string, std::string, std::string, std::int32_t, std::int32_t, std::int32_t>;

Key key_of(const OpSample& s) {
    return {s.gpu, s.name, s.phase, s.category, s.layer, s.microbatch, s.chunk};
}

// Indices of `samples` by key, each list in start order.
std::map<Key, std::vector<std::size_t>> by_key(const std::vector<OpSample>& samples) {
    std::map<Key, std::vector<std::size_t>> index;
    for (std::size_t i = 0; i < samples.size(); ++i) {
        index[key_of(samples[i])].push_back(i);
    }
    for (auto& [key, list] : index) {
        std::stable_sort(list.begin(), list.end(),
                         [&](std::size_t a, std::size_t b) { return samples[a].start < samples[b].start; });
    }
    return index;
}

Seconds seconds(SimTime ns) {
    return Seconds{static_cast<double>(ns.ns()) * 1e-9};
}

}  // namespace

Seconds span_of(const std::vector<OpSample>& samples) {
    if (samples.empty()) {
        return Seconds{0.0};
    }
    SimTime first = SimTime::max();
    SimTime last = SimTime::min();
    for (const OpSample& s : samples) {
        first = std::min(first, s.start);
        last = std::max(last, s.start + s.duration);
    }
    return seconds(last - first);
}

Comparison compare_by_labels(const std::vector<OpSample>& simulated, const std::vector<OpSample>& measured) {
    Comparison c;
    c.method = "labels (GPU, op, phase, category, layer, micro-batch, chunk)";
    const auto sim_index = by_key(simulated);
    const auto meas_index = by_key(measured);

    // Rows in the order the simulated iteration first runs each (op, phase), GPU by GPU.
    std::vector<std::size_t> order(simulated.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::tie(simulated[a].gpu, simulated[a].start) <
               std::tie(simulated[b].gpu, simulated[b].start);
    });
    std::map<std::pair<std::string, std::string>, std::size_t> row_of;
    std::map<std::string, std::size_t> phase_of;
    for (const std::size_t i : order) {
        const OpSample& s = simulated[i];
        const std::string phase = phase_label(s);
        if (row_of.emplace(std::make_pair(s.name, phase), c.ops.size()).second) {
            c.ops.push_back({s.name, phase, 0, Seconds{0.0}, Seconds{0.0}});
        }
        if (phase_of.emplace(phase, c.phases.size()).second) {
            c.phases.push_back({"", phase, 0, Seconds{0.0}, Seconds{0.0}});
        }
    }

    for (const auto& [key, sims] : sim_index) {
        const auto m = meas_index.find(key);
        const std::size_t paired = m == meas_index.end() ? 0 : std::min(sims.size(), m->second.size());
        for (std::size_t j = 0; j < sims.size(); ++j) {
            const OpSample& s = simulated[sims[j]];
            if (j >= paired) {
                ++c.unmatched_simulated;
                c.unmatched_simulated_time += seconds(s.duration);
                continue;
            }
            const OpSample& meas = measured[m->second[j]];
            const std::string phase = phase_label(s);
            for (Row* row : {&c.ops[row_of.at({s.name, phase})], &c.phases[phase_of.at(phase)]}) {
                ++row->count;
                row->measured += seconds(meas.duration);
                row->simulated += seconds(s.duration);
            }
        }
        if (m != meas_index.end() && m->second.size() > paired) {
            for (std::size_t j = paired; j < m->second.size(); ++j) {
                ++c.unmatched_measured;
                c.unmatched_measured_time += seconds(measured[m->second[j]].duration);
            }
        }
    }
    for (const auto& [key, meas] : meas_index) {
        if (sim_index.count(key) == 0) {
            c.unmatched_measured += static_cast<std::int64_t>(meas.size());
            for (const std::size_t i : meas) {
                c.unmatched_measured_time += seconds(measured[i].duration);
            }
        }
    }
    c.iteration = {"", "iteration", 1, span_of(measured), span_of(simulated)};
    return c;
}

}  // namespace trainsim::check
