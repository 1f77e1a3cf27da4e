// Intra-node collective targets (network.intra_node): the measured all-reduce bus-bandwidth table and its
// group size, the latency terms (least squares over the collectives and group sizes that differ from the
// table's), and the send/recv bandwidth and latency.
//
// The cost model prices an intra-node collective of kind k over n ranks from the table's time t0(S) at n0:
//     t = α(k, n) + (f(k, n) / f0) · (t0(S) − α0),    α(k, n) = base + steps(k, n) · hop
// which is linear in (base, hop) for fixed t0; so every measured all-gather, reduce-scatter and all-reduce
// at another group size is one row of a least-squares problem in (base, hop), subject to base, hop > 0 and
// α0 below every time of the table (the loader's rule).
#pragma once

#include "calibrate/fit/fit_state.h"

namespace trainsim::calibrate {

/// Fits the network.intra_node targets that hold directives. Options: "placement" (out_of_place or
/// in_place, default out_of_place) on every target; "ranks" on the busbw table (default: the largest group
/// measured); decimals/significant.
void fit_intra_node_targets(FitState& state);

}  // namespace trainsim::calibrate
