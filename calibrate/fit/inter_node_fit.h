// Inter-node collective targets (network.inter_node): the bandwidth of one NIC and the bus-bandwidth
// efficiency against size. The cost model gives a group of n ranks over `nodes` nodes
// rails = min(ceil(n / nodes), nics_per_node) rails of nic_GBps, reached to eff(S); so a measured
// all-reduce says nic_GBps ≥ busbw / rails, and eff(S) = busbw(S) / (rails · nic_GBps).
// Latencies across nodes stay the profile's (NCCL's constants): a run on a few nodes cannot separate
// NCCL's tree and ring terms.
#pragma once

#include "calibrate/fit/fit_state.h"

namespace trainsim::calibrate {

/// Fits network.inter_node.nic_GBps and busbw_efficiency_vs_bytes when they hold directives. Curve option
/// "normalize": "rails" (default: by rails · nic_GBps) or "peak" (by the largest value measured, for
/// relative tables such as SimAI's); "placement" as for intra-node targets.
void fit_inter_node_targets(FitState& state);

}  // namespace trainsim::calibrate
