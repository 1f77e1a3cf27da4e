// A measured iteration against the simulated one, op by op: per op (name and phase) and per phase the
// measured and simulated time and the error, plus the iteration total.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/check/op_sample.h"
#include "sim/core/units.h"

namespace trainsim::check {

/// Times summed over every occurrence matched (all layers, micro-batches and GPUs of the op).
struct Row {
    std::string op;  // empty for a phase total
    std::string phase;
    std::int64_t count = 0;
    Seconds measured{0.0};
    Seconds simulated{0.0};
    /// simulated / measured − 1: −0.2 means the simulator is 20 % faster than the measurement.
    [[nodiscard]] double error() const {
        return measured.value > 0.0 ? simulated.value / measured.value - 1.0 : 0.0;
    }
};

struct Comparison {
    std::string method;  // how ops were paired, for the reader
    std::vector<Row> ops;
    std::vector<Row> phases;
    Row iteration;  // first start to last end, measured and simulated
    std::int64_t unmatched_measured = 0;
    std::int64_t unmatched_simulated = 0;
    Seconds unmatched_measured_time{0.0};
    Seconds unmatched_simulated_time{0.0};
    std::vector<std::string> notes;
};

/// Pairs ops that carry the same labels (GPU, name, phase, category, layer, micro-batch, chunk), the
/// n-th measured with the n-th simulated occurrence in start order: for a trace of `trainsim run`.
[[nodiscard]] Comparison compare_by_labels(const std::vector<OpSample>& simulated,
                                           const std::vector<OpSample>& measured);

/// The span from the first start to the last end.
[[nodiscard]] Seconds span_of(const std::vector<OpSample>& samples);

}  // namespace trainsim::check
