// `trainsim layer`: one transformer layer on one GPU for one micro-batch, as Korthikanti Table 4 and
// Figure 8 report it.
#pragma once

#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/cost/cost_model.h"
#include "sim/engine/simulator.h"
#include "sim/program/iteration_program.h"

namespace trainsim::report {

struct LayerOpTiming {
    std::string name;
    std::string stream;
    std::string phase;     // forward / backward
    std::string category;  // compute, recompute, tp_comm, ...
    Seconds start, duration;
    Flops flops;
};

struct LayerReport {
    std::string name;
    Seconds forward;            // first forward op start → last forward op end
    Seconds backward;           // the backward, including any recompute done in it
    Seconds recompute;          // compute-stream time of recomputed ops
    Bytes activation_bytes{0};  // what the layer keeps for its backward (Korthikanti Table 2)
    std::vector<LayerOpTiming> ops;
    std::vector<std::string> warnings;
};

[[nodiscard]] LayerReport make_layer_report(const config::Scenario& scenario, const cost::CostModel& cost,
                                            const program::IterationProgram& program,
                                            const engine::RunResult& run);

}  // namespace trainsim::report
