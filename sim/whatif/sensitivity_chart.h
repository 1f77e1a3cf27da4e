// The what-if table as a horizontal bar chart in SVG (`trainsim whatif --plot FILE.svg`): one bar per
// variation, left of the axis when it shortens the iteration, right when it lengthens it.
#pragma once

#include <ostream>

#include "sim/whatif/sensitivity.h"

namespace trainsim::whatif {

/// A self-contained SVG document (no scripts, no external fonts or styles).
void write_svg_chart(std::ostream& out, const WhatIf& result);

}  // namespace trainsim::whatif
