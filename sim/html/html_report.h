// `trainsim run --report FILE.html` (issue 20): one self-contained page (no scripts, no external files)
// with the run's summary, its time breakdown and per-stage memory as inline SVG charts, the critical
// path and the what-if table.
#pragma once

#include <ostream>

#include "sim/whatif/sensitivity.h"

namespace trainsim::html {

/// The page for `result` (its baseline is the run reported). Every element is closed, so an XML
/// parser reads the page too.
void write_html_report(std::ostream& out, const whatif::WhatIf& result);

}  // namespace trainsim::html
