#include "sim/check/measured_ops.h"

namespace trainsim::check {

std::vector<OpSample> labelled_ops(const kineto::Trace& trace) {
    std::vector<OpSample> samples;
    samples.reserve(trace.labelled.size());
    for (const kineto::LabelledSlice& l : trace.labelled) {
        OpSample s;
        s.gpu = l.gpu;
        s.name = trace.name(l.name);
        s.phase = trace.name(l.phase);
        s.category = trace.name(l.category);
        s.layer = l.layer;
        s.microbatch = l.microbatch;
        s.chunk = l.chunk;
        s.start = SimTime{l.ts_ns};
        s.duration = SimTime{l.dur_ns};
        samples.push_back(std::move(s));
    }
    return samples;
}

}  // namespace trainsim::check
