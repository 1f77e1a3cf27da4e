// `--trace FILE.pftrace`: the same trace as report::write_perfetto_trace (same GPUs, streams, slices,
// window and memory counters), in Perfetto's protobuf format: a process track per GPU, a thread track per
// stream, a begin/end event pair per op slice, a counter track per GPU and, for a flow-model run, a
// "network" process with a counter track per NIC direction and fabric link. Smaller and faster to load
// than JSON for big runs; built only when protobuf is found.
#pragma once

#include <ostream>

#include "sim/report/perfetto_trace.h"

namespace trainsim::pftrace {

void write_pftrace(std::ostream& out, const config::Scenario& scenario,
                   const program::IterationProgram& program, const engine::RunResult& run,
                   const report::TraceOptions& options = {});

}  // namespace trainsim::pftrace
